"""Run a command as a child of a test process's fork server, in place of this process.

    python -S tests/support/fork_exec.py SOCKET SCRIPT_OR_-m ARGS...

For a client that must spawn its server itself -- the official MCP SDK's ``stdio_client``
starts ``command args`` with its own pipes -- this is the command: it starts in
milliseconds (``-S``, the standard library only), hands its own stdin/stdout/stderr, working
directory and environment to the fork server at SOCKET (tests/support/forkserver.py), which forks a
real, separate process running ``python SCRIPT ARGS...`` on those very pipes; then it waits
and exits with that process's exit status. SIGTERM, SIGINT and SIGHUP sent here are passed
on to it, so the client's shutdown (stdin closed, then the process group terminated) reaches
the server. The server process itself is what the client talks to; this one only waits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys


def main(argv: list[str]) -> int:
    path, command = argv[0], argv[1:]
    request = {"argv": command, "cwd": os.getcwd(), "env": dict(os.environ), "new_group": False}
    body = json.dumps(request).encode()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    socket.send_fds(sock, [struct.pack("!I", len(body))], [0, 1, 2])
    sock.sendall(body)
    buf = b""
    child = None

    def forward(signum, _frame):
        if child is not None:
            try:
                os.kill(child, signum)
            except ProcessLookupError:
                pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    # the child has our pipes now: close our copies, so the client sees EOF when the child exits
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    while True:
        while b"\n" not in buf:
            try:
                ready, _, _ = select.select([sock], [], [])
            except InterruptedError:
                continue
            chunk = sock.recv(4096) if ready else b""
            if not chunk:
                print("fork_exec: the fork server went away", file=sys.stderr)
                return 1
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        message = json.loads(line)
        if "pid" in message:
            child = message["pid"]
        elif "exit" in message:
            code = message["exit"]
            if code < 0:  # killed by a signal: end the same way, as the server process did
                signal.signal(-code, signal.SIG_DFL)
                os.kill(os.getpid(), -code)
                return 128 - code
            return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
