"""The warm CLI: a command on a root that a running FALSIFY server holds is
answered by that server (cognee already imported, the root already open)
instead of by a fresh process.

A server started by ``python main.py serve`` (or ``mcp``) writes
``<root>/server.json``: its loopback address and a secret made at start (mode
0600, removed when it stops). :func:`forward` (the client side, standard library
only: it runs before anything heavy is imported) sends the parsed command there
as ``POST /api/cli`` with ``Authorization: Bearer <secret>``; the server runs the
very same command function (:func:`run_command`, the server side) against its
opened facade and returns the output and exit code, which the client prints and
exits with. No file, no answer (the server is gone): the CLI works as it always
did. ``FALSIFY_NO_SERVER=1`` forces the cold path.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import io
import json
import os
import sys
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

DISCOVERY = "server.json"
# the commands a server answers, and the arguments that name files (made absolute)
FORWARDED = {"load", "status", "revise", "explain", "recall", "search", "undo", "check"}
WRITERS = {"load", "revise", "undo", "check"}
PATH_ARGS = {("load", "file"), ("revise", "file")}


def _root(args) -> Path:
    if args.root:
        return Path(args.root).expanduser().resolve()
    env = os.environ.get("FALSIFY_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return (Path.cwd() / ".falsify").resolve()


def discover(root: Path) -> Optional[dict]:
    """The running server's address and secret, or None (no server, or not ours)."""
    try:
        info = json.loads((root / DISCOVERY).read_text())
        pid = int(info["pid"])
        os.kill(pid, 0)  # alive? (ProcessLookupError if not)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    parts = urlsplit(str(info.get("url", "")))
    if parts.scheme != "http" or not parts.hostname or not info.get("secret"):
        return None
    return info


def forward(args: argparse.Namespace) -> Optional[int]:
    """Answer ``args`` through a running server; None means "run it here, as usual"."""
    if args.command not in FORWARDED or os.environ.get("FALSIFY_NO_SERVER"):
        return None
    info = discover(_root(args))
    if info is None:
        return None
    payload = {k: v for k, v in vars(args).items() if k not in ("root", "demo", "session", "keep")}
    for command, name in PATH_ARGS:
        value = payload.get(name)
        if args.command == command and isinstance(value, str) and value != "-":
            payload[name] = str(Path(value).expanduser().resolve())
    stdin = None
    if args.command == "load" and payload.get("file") == "-":
        stdin = base64.b64encode(sys.stdin.buffer.read()).decode("ascii")  # the bytes, exactly
    body = json.dumps({"args": payload, "stdin": stdin}).encode("utf-8")
    parts = urlsplit(info["url"])
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=None)
    try:
        conn.request("POST", "/api/cli", body=body, headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {info['secret']}"})
        resp = conn.getresponse()
        data = resp.read()
    except OSError:
        if stdin is not None:  # stdin is consumed: the cold path cannot read it again
            print("error: the FALSIFY server on this root stopped answering", file=sys.stderr)
            return 1
        return None  # the server is gone (the file is stale): run it here
    finally:
        conn.close()
    if resp.status != 200:
        message = data.decode("utf-8", "replace")
        try:
            message = json.loads(message).get("error", message)
        except (ValueError, AttributeError):
            pass
        print(f"error: the FALSIFY server on this root refused the command: {message}", file=sys.stderr)
        return 1
    answer = json.loads(data)
    sys.stdout.write(answer["stdout"])
    sys.stdout.flush()
    sys.stderr.write(answer["stderr"])
    return int(answer["exit"])


class Borrowed:
    """The server's facade lent to one CLI command: closing it is a no-op (the server keeps it)."""

    def __init__(self, app):
        self._app = app

    def __getattr__(self, name):
        return getattr(self._app, name)

    async def close(self) -> None:
        pass


async def run_command(gate, args: dict, stdin: Optional[str]) -> dict:
    """The server side of :func:`forward`: run one CLI command against the gate's facade,
    one at a time with every other call, capturing what it prints and its exit code
    (``stdin``: standard input's bytes, base64, for ``load -``)."""
    from memory_core.core.errors import FalsifyError, error_message
    from memory_core.shell import cli

    command = args.get("command")
    if command not in FORWARDED or command not in cli.COMMANDS:
        return {"stdout": "", "stderr": f"error: {command!r} is not answered by a server\n", "exit": 2}
    ns = argparse.Namespace(**{**args, "root": None})
    out, err = io.StringIO(), io.StringIO()

    async def job(app):
        token = cli.BORROWED.set(Borrowed(app))
        saved_stdin = sys.stdin
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                if stdin is not None:
                    sys.stdin = io.TextIOWrapper(io.BytesIO(base64.b64decode(stdin)), encoding="utf-8")
                try:
                    return await cli.COMMANDS[command](ns)
                except FalsifyError as error:  # exactly as cli.run maps them
                    print(error_message(error), file=sys.stderr)
                    return error.exit_code
                except Exception as error:  # noqa: BLE001
                    print(cli.internal_error(error, app.paths.root if app.paths else None), file=sys.stderr)
                    return cli.EXIT_PROBLEMS
        finally:
            sys.stdin = saved_stdin
            cli.BORROWED.reset(token)

    code = await gate.run(job)
    if command in WRITERS and not args.get("dry_run") and (command != "check" or args.get("repair")):
        gate.announce(f"cli {command}")
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": code}
