"""The warm CLI: a command on a root that a running FALSIFY server holds is
answered by that server (cognee already imported, the root already open)
instead of by a fresh process.

A server started by ``python main.py serve`` (or ``mcp``) writes
``<root>/server.json``: its loopback address and a secret made at start (mode
0600, removed when it stops). :func:`forward` (the client side) runs before
anything heavy is imported: ``main.py`` loads this file on its own, standard
library only, so a forwarded command costs the interpreter's start and one local
HTTP request. It sends the raw command line, the working directory and
``FALSIFY_HOME`` as ``POST /api/cli`` with ``Authorization: Bearer <secret>``;
the server (:func:`run_command`) parses it with the CLI's own parser, checks it
names the server's root, and runs the very same command function on its opened
facade; the client prints the output and exits with the exit code. No file, a
dead pid, nothing listening, or another root: the CLI works as it always did.
``FALSIFY_NO_SERVER=1`` forces the cold path.

Nothing runs twice: the cold path is taken only when the request provably never
reached the server (no server, or the connection refused before anything was sent).
Once the request is on its way, a failure (the server killed mid-command, the
connection reset) is reported with exit 1 ("the server may have applied it: run
status"), never answered again by a cold run. Every request carries an id the server
remembers for its lifetime: a retry of the same request (one, when the connection
broke but the server still runs) gets the first answer, not a second run.
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
# the commands a server answers, and the ones it never does (they start servers or
# demos of their own); every command of the CLI's parser is in exactly one of the two
# (tests/test_warm_cli_forwarding.py)
FORWARDED = {"load", "status", "revise", "explain", "recall", "undo", "check", "resolve"}
NOT_FORWARDED = {"serve", "mcp"}
WRITERS = {"load", "revise", "undo", "check", "resolve"}
OTHER_ROOT = 99  # the server's answer when the command line names another root
REMEMBERED = 256  # request ids (and their answers) a server keeps


def _scan(argv: list[str]) -> Optional[tuple[Optional[str], str]]:
    """(--root value, command) from a command line, or None when it is not one to forward
    (help, the demo, serve, mcp, ...). The server re-parses it with the real parser and
    refuses a command line whose root is not its own, so a guess here cannot misroute."""
    root, i = None, 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help", "--demo", "--session", "--database") or arg.startswith(("--session=", "--database=")):
            return None  # help, the demo, another database: always answered here
        if arg == "--root" and i + 1 < len(argv):
            root, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--root="):
            root, i = arg.split("=", 1)[1], i + 1
            continue
        if arg.startswith("-"):
            i += 1
            continue
        if arg not in FORWARDED or "-h" in argv[i + 1:] or "--help" in argv[i + 1:]:
            return None
        return root, arg
    return None


def _root(root: Optional[str], cwd: Path, home: Optional[str]) -> Path:
    """The data root as ``memory_core.store.settings.resolve_root`` finds it, from ``cwd``."""
    if root:
        return (cwd / Path(root).expanduser()).resolve()
    if home:
        return (cwd / Path(home).expanduser()).resolve()
    return (cwd / ".falsify").resolve()


def discover(root: Path) -> Optional[dict]:
    """The running server's address and secret, or None (no server, or not alive)."""
    try:
        info = json.loads((root / DISCOVERY).read_text())
        os.kill(int(info["pid"]), 0)  # alive? (ProcessLookupError if not)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    parts = urlsplit(str(info.get("url", "")))
    if parts.scheme != "http" or not parts.hostname or not info.get("secret"):
        return None
    return info


def forward(argv=None) -> Optional[int]:
    """Answer the command line ``argv`` (default: this process's) through a server running
    on its root; None means "run it here, as usual". Given the CLI's parsed arguments
    instead (``cli.main``'s hook, for the installed ``falsify`` script), it forwards this
    process's command line when that is the command they were parsed from."""
    if os.environ.get("FALSIFY_NO_SERVER"):
        return None
    parsed = argv if isinstance(argv, argparse.Namespace) else None
    argv = list(sys.argv[1:] if argv is None or parsed is not None else argv)
    scanned = _scan(argv)
    if scanned is None or (parsed is not None and getattr(parsed, "command", None) != scanned[1]):
        return None
    cwd = Path.cwd()
    root = _root(scanned[0], cwd, os.environ.get("FALSIFY_HOME"))
    info = discover(root)
    if info is None:
        return None
    parts = urlsplit(info["url"])
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=None)
    try:
        conn.connect()
    except (OSError, ValueError):
        conn.close()
        return None  # nothing listens there (a stale file): nothing was sent, so run it here
    stdin = stdin_bytes = None
    if scanned[1] == "load" and "-" in argv[argv.index("load") + 1:]:
        stdin_bytes = sys.stdin.buffer.read()  # the bytes, exactly
        stdin = base64.b64encode(stdin_bytes).decode("ascii")
    body = json.dumps({"argv": argv, "cwd": str(cwd), "falsify_home": os.environ.get("FALSIFY_HOME"),
                       "stdin": stdin, "request_id": os.urandom(16).hex()}).encode("utf-8")
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {info['secret']}"}
    try:
        resp, data = _exchange(conn, body, headers)
    except (OSError, http.client.HTTPException) as first:
        # the request may have reached the server: never run it here. If the same server
        # still runs, ask once more with the same request id (it answers what it did, or
        # runs it if it never got it); else say so.
        again = discover(root)
        answered = None
        if again is not None and again.get("pid") == info.get("pid") and again.get("url") == info.get("url"):
            retry = http.client.HTTPConnection(parts.hostname, parts.port, timeout=None)
            try:
                answered = _exchange(retry, body, headers)
            except (OSError, http.client.HTTPException):
                answered = None
        if answered is None:
            what = "it" if scanned[1] not in WRITERS else f"the {scanned[1]}"
            print(f"error: the FALSIFY server on this root stopped answering during `{scanned[1]}` "
                  f"({type(first).__name__}); the server may have applied {what}: run status "
                  "(nothing was run a second time)", file=sys.stderr)
            return 1
        resp, data = answered
    if resp.status != 200:
        message = data.decode("utf-8", "replace")
        try:
            message = json.loads(message).get("error", message)
        except (ValueError, AttributeError):
            pass
        print(f"error: the FALSIFY server on this root refused the command: {message}", file=sys.stderr)
        return 1
    try:
        answer = json.loads(data)
        int(answer["exit"]), str(answer["stdout"]), str(answer["stderr"])
    except (ValueError, TypeError, KeyError):
        print("error: the FALSIFY server on this root sent an answer that is not one; the server may have "
              f"applied the {scanned[1]}: run status", file=sys.stderr)
        return 1
    if answer["exit"] == OTHER_ROOT and answer.get("other_root"):
        # the real parser found another root (or a database) than the scan: the server ran
        # nothing; run it here, with the standard input already read
        if stdin_bytes is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin_bytes), encoding="utf-8")
        return None
    sys.stdout.write(answer["stdout"])
    sys.stdout.flush()
    sys.stderr.write(answer["stderr"])
    return int(answer["exit"])


def _exchange(conn: http.client.HTTPConnection, body: bytes, headers: dict):
    try:
        conn.request("POST", "/api/cli", body=body, headers=headers)
        resp = conn.getresponse()
        return resp, resp.read()
    finally:
        conn.close()


class Borrowed:
    """The server's facade lent to one CLI command: closing it is a no-op (the server keeps it)."""

    def __init__(self, app):
        self._app = app

    def __getattr__(self, name):
        return getattr(self._app, name)

    async def close(self) -> None:
        pass


_answers: "dict[str, asyncio.Future]" = {}  # request id -> its answer (insertion order: oldest first)


async def run_command(gate, request: dict, stdin: Optional[str]) -> dict:
    """The server side of :func:`forward`: parse the command line with the CLI's parser,
    check it names this server's root, and run the command against the gate's facade,
    one at a time with every other call, capturing what it prints and its exit code
    (``stdin``: standard input's bytes, base64, for ``load -``). A request id seen before
    (a client's retry) gets the answer of its first run, never a second run."""
    import asyncio  # the server side only: the client stays light

    rid = request.get("request_id") if isinstance(request, dict) else None
    if not (isinstance(rid, str) and 16 <= len(rid) <= 128):
        return await _run_command(gate, request, stdin)
    if rid in _answers:
        return await asyncio.shield(_answers[rid])
    future = asyncio.get_running_loop().create_future()
    _answers[rid] = future
    while len(_answers) > REMEMBERED:
        oldest = next(iter(_answers))
        if not _answers[oldest].done():
            break
        del _answers[oldest]
    try:
        answer = await _run_command(gate, request, stdin)
    except BaseException as error:
        future.set_exception(error)
        future.exception()  # retrieved: a retry re-raises it, nobody else needs to
        raise
    future.set_result(answer)
    return answer


async def _run_command(gate, request: dict, stdin: Optional[str]) -> dict:
    from memory_core.core.errors import FalsifyError, error_message
    from memory_core.shell import cli

    argv, cwd = request.get("argv"), Path(str(request.get("cwd") or "/"))
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return {"stdout": "", "stderr": "error: the command line must be a list of strings\n", "exit": 2}
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            args = cli.build_parser().parse_args(argv)
        except SystemExit as exit_:  # usage errors: the parser's own message and exit code
            return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": int(exit_.code or 0)}
    command = getattr(args, "command", None)
    app = await gate.ready()
    here = app.paths.root if getattr(app, "paths", None) is not None else None
    wanted = _root(args.root, cwd, request.get("falsify_home"))
    if command not in FORWARDED or command not in cli.COMMANDS or args.demo or args.session or here is None \
            or getattr(args, "database", None) or Path(here).resolve() != wanted:
        return {"stdout": "", "stderr": "", "exit": OTHER_ROOT, "other_root": True}
    for name in ("file",):  # file arguments are relative to the client's directory
        value = getattr(args, name, None)
        if isinstance(value, str) and value != "-":
            setattr(args, name, str((cwd / Path(value).expanduser()).resolve()))
    args.root = None

    async def job(app):
        token = cli.BORROWED.set(Borrowed(app))
        saved_stdin = sys.stdin
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                if stdin is not None:
                    sys.stdin = io.TextIOWrapper(io.BytesIO(base64.b64decode(stdin)), encoding="utf-8")
                try:
                    return await cli.COMMANDS[command](args)
                except FalsifyError as error:  # exactly as cli.run maps them
                    print(error_message(error), file=sys.stderr)
                    return error.exit_code
                except Exception as error:  # noqa: BLE001
                    print(cli.internal_error(error, here), file=sys.stderr)
                    return cli.EXIT_PROBLEMS
        finally:
            sys.stdin = saved_stdin
            cli.BORROWED.reset(token)

    code = await gate.run(job)
    if command in WRITERS and not getattr(args, "dry_run", False) and (command != "check" or args.repair):
        gate.announce(f"cli {command}")
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": code}
