"""A fork server for the tests' FALSIFY processes: ``python main.py ...`` without paying the
third-party imports every time.

    python tests/support/forkserver.py SOCKET   (started by :func:`server`, one per pytest process)

Every cold ``python main.py`` spends most of its start-up importing cognee's dependencies
(litellm, openai, dlt, sqlalchemy, pyarrow, fastembed, onnxruntime: ~6 s idle, up
to 17 s on a loaded machine). The server imports those once -- never cognee itself, never
``memory_core``, never lancedb (its import starts a background thread, and a process must
not fork with threads running) -- and forks one child per request. The child is a real,
separate process with its own pid, stdin/stdout/stderr (the client's pipes, passed over the
Unix socket), working directory and environment (exactly the one asked for); it then runs
the script, ``-m`` module or ``-c`` code as ``python`` would, so it configures its own data
root and imports cognee itself, takes the writer lock, and can be SIGSTOPped or SIGKILLed
by its pid; the server reaps it and reports its exit status (``-N`` for a signal, as
``subprocess`` does).

What a cold start checks (the interpreter itself, an installed entry point, the import
order) is kept by the tests that call ``subprocess`` directly. ``FALSIFY_TEST_FORK=0``
sends every helper call back to a cold ``subprocess`` (to compare).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _launcher():
    """The product's warm launcher (memory_core/shell/launcher.py, standard library only,
    loaded on its own): the fork server imports its preload too (``PRELOAD``, expanded by
    ``_expand``), so its children pay what a launcher's pay, and a launcher forked from here
    starts at once."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "falsify_launcher_preload", REPO / "memory_core" / "shell" / "launcher.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LAUNCHER = _launcher()
# what the server imports before it forks: the launcher's preload, the same thread-free imports that
# read no root-bound setting (one list: a child forked here pays what a launcher's child pays)
STACK = _LAUNCHER.PRELOAD
# set before the imports, as memory_core.store.data_root.configure() would (never a network fetch)
QUIET = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "TELEMETRY_DISABLED": "1",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}
# never imported by the server: FALSIFY and cognee read their settings at import, lancedb starts a
# thread, huggingface_hub (under fastembed) reads HF_HUB_OFFLINE / HF_HUB_CACHE into constants
FORBIDDEN = ("cognee", "memory_core", "lancedb", "huggingface_hub", "fastembed", "transformers")


def enabled() -> bool:
    return os.environ.get("FALSIFY_TEST_FORK", "1") != "0"


# ---- the server ------------------------------------------------------------------------


def _recv_request(conn: socket.socket):
    """A request: a 4-byte length (sent with the child's stdin/stdout/stderr fds), then JSON."""
    header, fds, _flags, _addr = socket.recv_fds(conn, 4, 8)
    if not header:
        return None, fds
    while len(header) < 4:
        chunk = conn.recv(4 - len(header))
        if not chunk:
            return None, fds
        header += chunk
    (size,) = struct.unpack("!I", header)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            return None, fds
        body += chunk
    return json.loads(body), fds


def _child(request: dict, fds: list[int], keep_closed: list[socket.socket], streams: dict) -> None:
    """In the forked child: become the process ``request`` describes, run it, exit."""
    code = 1
    try:
        for s in keep_closed:
            s.close()
        for i, fd in enumerate(fds[:3]):
            os.dup2(fd, i)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        if request.get("new_group"):
            os.setsid()
        for sig in (
            signal.SIGTERM,
            signal.SIGCHLD,
            signal.SIGHUP,
            signal.SIGQUIT,
            signal.SIGUSR1,
            signal.SIGUSR2,
        ):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as CPython sets it at start-up
        # nothing blocked, as a process a shell starts (the server's own mask came from its pytest worker)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        import io

        sys.stdin = io.TextIOWrapper(
            io.BufferedReader(io.FileIO(0, "r", closefd=False)),
            encoding=streams["encoding"],
            errors=streams["errors"],
        )
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
            encoding=streams["encoding"],
            errors=streams["errors"],
            write_through=bool(os.environ.get("PYTHONUNBUFFERED")),
        )
        sys.stderr = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
            encoding=streams["encoding"],
            errors="backslashreplace",
            line_buffering=True,
        )
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
        argv = request["argv"]
        extra_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        import runpy

        try:
            if argv[0] == "-c":
                sys.argv = ["-c", *argv[2:]]
                sys.path[0:1] = ["", *extra_path]
                namespace = {"__name__": "__main__", "__builtins__": __builtins__}
                exec(compile(argv[1], "<string>", "exec"), namespace)
            elif argv[0] == "-m":
                sys.argv = [argv[1], *argv[2:]]
                sys.path[0:1] = [os.getcwd(), *extra_path]
                runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            else:
                sys.argv = list(argv)
                sys.path[0:1] = [os.path.dirname(os.path.abspath(argv[0])), *extra_path]
                runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code & 0xFF
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:  # what the interpreter prints for an uncaught exception
            import traceback

            traceback.print_exc()
            code = 1
        try:  # what a normal interpreter exit does: wait for threads, run atexit, flush
            threading._shutdown()
        except BaseException:  # noqa: BLE001
            pass
        try:
            import atexit as _atexit

            _atexit._run_exitfuncs()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(code)


def serve(path: str) -> int:
    os.environ.update({k: v for k, v in QUIET.items() if k not in os.environ})
    import importlib

    import gc

    gc.disable()  # as the launcher's preload: no full collection walks the objects being imported
    _LAUNCHER._lazy_imports().defer_pandas()  # as the launcher's preload: pyarrow without pandas
    for name in _LAUNCHER._expand(STACK):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    leaked = [m for m in sys.modules if m.split(".")[0] in FORBIDDEN]
    if leaked:
        raise SystemExit(f"the fork server must not import {sorted(leaked)[:5]}")
    threads = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if threads:
        raise SystemExit(f"the fork server has threads after its imports: {threads}")
    gc.collect()
    gc.freeze()  # as the launcher does: a child's collector never walks the preloaded objects (~0.7 s a child)
    gc.enable()
    streams = {"encoding": sys.stdout.encoding, "errors": sys.stdout.errors}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    children: dict[int, socket.socket] = {}
    clients: set[socket.socket] = set()
    parent = os.getppid()
    while True:
        if os.getppid() != parent:  # the pytest process that started us is gone (killed): stop too
            return 0
        readable, _, _ = select.select([listener, *clients], [], [], 0.01)
        for sock in readable:
            if sock is listener:
                conn, _ = listener.accept()
                clients.add(conn)
                continue
            clients.discard(sock)
            try:
                request, fds = _recv_request(sock)
            except (OSError, ValueError):
                request, fds = None, []
            if request is None:  # the client went away before asking
                for fd in fds:
                    os.close(fd)
                sock.close()
                continue
            if request.get("op") == "stop":
                return 0
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(request, fds, [listener, sock, *clients, *children.values()], streams)
            for fd in fds:
                os.close(fd)
            try:
                sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            except OSError:
                pass
            children[pid] = sock
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            sock = children.pop(pid, None)
            if sock is None:
                continue
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            try:
                sock.sendall(json.dumps({"exit": code}).encode() + b"\n")
            except OSError:
                pass
            sock.close()


# ---- the client ------------------------------------------------------------------------

_server: dict = {}
_server_lock = threading.Lock()


def server() -> str:
    """The socket of this process's fork server, started on first use, stopped at exit."""
    with _server_lock:
        if _server.get("proc") is not None and _server["proc"].poll() is None:
            return _server["path"]
        work = Path(tempfile.mkdtemp(prefix="falsify-forkserver-"))
        path = str(work / "sock")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("LLM_", "EMBEDDING_", "FALSIFY_", "COGNEE_", "SYSTEM_ROOT", "DATA_ROOT"))
        }
        log = open(work / "server.log", "w")
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), path],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            raise RuntimeError(f"fork server did not start: {(work / 'server.log').read_text()[-3000:]}")
        _server.update(proc=proc, path=path, work=work)
        atexit.register(_stop, proc, work)
        return path


def _stop(proc, work) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    import shutil

    shutil.rmtree(work, ignore_errors=True)


class ForkPopen:
    """The part of ``subprocess.Popen`` the tests use, for a child of the fork server:
    ``pid``, ``returncode``, ``stdin``/``stdout``/``stderr`` (``subprocess.PIPE``, a file
    or ``None``), ``poll``, ``wait``, ``communicate``, ``send_signal``, ``kill``, ``terminate``."""

    def __init__(
        self,
        args,
        cwd=None,
        env=None,
        stdin=None,
        stdout=None,
        stderr=None,
        text=False,
        start_new_session=False,
    ):
        self.args = args
        args = [str(a) if not isinstance(a, bytes) else os.fsdecode(a) for a in args]
        if not args or args[0] != sys.executable:
            raise ValueError(f"the fork server runs this interpreter ({sys.executable}), not {args[:1]}")
        args = args[1:]
        self.text = text
        self.returncode = None
        self.stdin = self.stdout = self.stderr = None
        child_fds, close_after = [], []

        def pick(spec, fd, mode):
            if spec == subprocess.PIPE:
                r, w = os.pipe()
                ours, theirs = (w, r) if mode == "w" else (r, w)
                close_after.append(theirs)
                child_fds.append(theirs)
                return os.fdopen(ours, mode + "b")
            if spec == subprocess.DEVNULL:
                dn = os.open(os.devnull, os.O_RDWR)
                close_after.append(dn)
                child_fds.append(dn)
                return None
            if spec is None:
                child_fds.append(fd)
                return None
            if spec == subprocess.STDOUT:
                child_fds.append(child_fds[1])
                return None
            child_fds.append(spec if isinstance(spec, int) else spec.fileno())
            return None

        self.stdin = pick(stdin, 0, "w")
        self.stdout = pick(stdout, 1, "r")
        self.stderr = pick(stderr, 2, "r")
        if text:
            import io

            self.stdin = io.TextIOWrapper(self.stdin, write_through=True) if self.stdin else None
            self.stdout = io.TextIOWrapper(self.stdout) if self.stdout else None
            self.stderr = io.TextIOWrapper(self.stderr) if self.stderr else None
        request = {
            "argv": args,
            "cwd": str(cwd or os.getcwd()),
            "env": dict(os.environ if env is None else env),
            "new_group": bool(start_new_session),
        }
        body = json.dumps(request).encode()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(server())
        socket.send_fds(self._sock, [struct.pack("!I", len(body))], child_fds)
        self._sock.sendall(body)
        for fd in close_after:
            os.close(fd)
        self._buf = b""
        self.pid = self._message()["pid"]

    def _message(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._sock], [], [], left)
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout)
            chunk = self._sock.recv(4096)
            if not chunk:
                raise RuntimeError(f"the fork server went away while running {self.args}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def poll(self):
        if self.returncode is None:
            try:
                self.wait(timeout=0)
            except subprocess.TimeoutExpired:
                pass
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            self.returncode = self._message(timeout)["exit"]
            self._sock.close()
        return self.returncode

    def send_signal(self, sig):
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def communicate(self, input=None, timeout=None):
        results = {}

        def drain(name, stream):
            results[name] = stream.read()
            stream.close()

        threads = [
            threading.Thread(target=drain, args=(n, s), daemon=True)
            for n, s in (("stdout", self.stdout), ("stderr", self.stderr))
            if s is not None
        ]
        for t in threads:
            t.start()
        if self.stdin is not None:
            try:
                if input:
                    self.stdin.write(input)
                self.stdin.close()
            except BrokenPipeError:
                pass
        self.wait(timeout)
        for t in threads:
            t.join()
        out, err = results.get("stdout"), results.get("stderr")
        if self.text:  # subprocess's universal newlines
            out = out.replace("\r\n", "\n").replace("\r", "\n") if out is not None else None
            err = err.replace("\r\n", "\n").replace("\r", "\n") if err is not None else None
        return out, err

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for s in (self.stdout, self.stderr, self.stdin):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        self.wait()


def popen(args, cwd=None, env=None, stdin=None, stdout=None, stderr=None, text=False):
    """``subprocess.Popen`` for a child of the fork server (a cold one when ``FALSIFY_TEST_FORK=0``)."""
    if not enabled():
        return subprocess.Popen(args, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=text)
    return ForkPopen(args, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=text)


def run(
    args,
    cwd=None,
    env=None,
    capture_output=False,
    timeout=None,
    input=None,
    text=False,
    stdout=None,
    stderr=None,
    check=False,
) -> subprocess.CompletedProcess:
    """``subprocess.run`` for a child of the fork server (a cold ``subprocess.run`` when
    ``FALSIFY_TEST_FORK=0``)."""
    if not enabled():
        return subprocess.run(
            args,
            cwd=cwd,
            env=env,
            capture_output=capture_output,
            timeout=timeout,
            input=input,
            text=text,
            stdout=stdout,
            stderr=stderr,
            check=check,
        )
    if capture_output:
        stdout = stderr = subprocess.PIPE
    proc = ForkPopen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if input is not None else None,
        stdout=stdout,
        stderr=stderr,
        text=text,
    )
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done


def stdio_command(args: list[str]) -> tuple[str, list[str]]:
    """(command, args) for a client that spawns ``python ARGS...`` itself (the MCP SDK's
    ``stdio_client``): ``tests/support/fork_exec.py``, which starts in milliseconds and has this
    process's fork server fork the real process on its pipes (``python ARGS...`` itself when
    ``FALSIFY_TEST_FORK=0``)."""
    args = [str(a) for a in args]
    if not enabled():
        return sys.executable, args
    return sys.executable, ["-S", str(Path(__file__).resolve().parent / "fork_exec.py"), server(), *args]


if __name__ == "__main__":
    raise SystemExit(serve(sys.argv[1]))
