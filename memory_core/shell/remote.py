"""The warm CLI's client: a command on a root that a running FALSIFY server holds is
answered by that server (cognee already imported, the root already open)
instead of by a fresh process.

A server started by ``python main.py serve`` (or ``mcp``) writes
``<root>/server.json``: its loopback address and a secret made at start (mode
0600, removed when it stops). :func:`forward` (this module) runs before
anything heavy is imported: ``main.py`` loads this file on its own, standard
library only (and FALSIFY's settings, ``memory_core/store/settings.py``, loaded on
its own as well), so a forwarded command costs the interpreter's start and one local
HTTP request. It sends the raw command line, the working directory and
``FALSIFY_HOME`` as ``POST /api/cli`` with ``Authorization: Bearer <secret>``;
the server (``memory_core.shell.warm_server.run_command``) parses it with the CLI's own
parser, checks it names the server's root, and runs the very same command function on its
opened facade; the client prints the output and exits with the exit code. No file, a
dead pid, nothing listening, or another root: the CLI works as it always did.
``FALSIFY_NO_SERVER=1`` forces the cold path.

Nothing runs twice: the cold path is taken only when the request provably never
reached the server (no server, or the connection refused before anything was sent).
Once the request is on its way, a failure (the server killed mid-command, the
connection reset) is reported with exit 1 ("the server may have applied it: run
status"), never answered again by a cold run. Every request carries an id the server
remembers for its lifetime: a retry of the same request (one, when the connection
broke but the server still runs) gets the first answer, not a second run.

This module imports nothing of the CLI or of the server side (they import it: the
command lists below and :func:`root_of`).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import importlib.util
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
# the commands that may change the graph, for this client's wording only (it runs before anything
# of memory_core is imported); the server decides from the facade's declarations (memory_core.api's
# @writes), which tests/system/test_warm_cli_safety.py holds this list to
WRITERS = {"load", "revise", "undo", "check", "resolve"}
OTHER_ROOT = 99  # the server's answer when the command line names another root (or another store)
# The settings a forwarded command must share with the server that runs it, as its cold run would
# read them: FALSIFY's (memory_core/store/settings.py), the LLM's and the embedder's. Those not
# compared do not change what a command does, or are the server process's own.
SETTING_PREFIXES = ("FALSIFY_", "LLM_", "EMBEDDING_")
NOT_COMPARED = frozenset(
    {
        "FALSIFY_HOME",
        "FALSIFY_LOCK_TIMEOUT",
        "FALSIFY_NO_SERVER",
        "FALSIFY_LAUNCHER",
        "FALSIFY_LAUNCHER_IDLE_S",
        "FALSIFY_RUNTIME_DIR",
        "FALSIFY_TOKEN",
        "FALSIFY_TOKEN_FILE",
        "FALSIFY_MALLOC_ARENA_MAX",
        "FALSIFY_ARROW_POOL",
        "FALSIFY_GRAPH_REOPEN_EVERY",
        "FALSIFY_GRAPH_COMPACT_RATIO",
        "FALSIFY_VECTOR_PRUNE_EVERY",
        "FALSIFY_VECTOR_PRUNE_AGE_S",
        "FALSIFY_VECTOR_RECONNECT",
        "FALSIFY_RUN_HISTORY_KEEP",
        "FALSIFY_FAULT_AT",
    }
)
STORE = ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL")  # differing: another store than the server's


def _scan(argv: list[str]) -> Optional[tuple[Optional[str], str]]:
    """(--root value, command) from a command line, or None when it is not one to forward
    (help, the demo, serve, mcp, ...). The server re-parses it with the real parser and
    refuses a command line whose root is not its own, so a guess here cannot misroute."""
    root, i = None, 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help", "--demo", "--session", "--cold") or arg.startswith("--session="):
            return None  # help, the demo, a session, --cold: always answered here
        if arg == "--database" and i + 1 < len(argv):  # its store: compared as FALSIFY_DATABASE_URL is
            i += 2
            continue
        if arg == "--root" and i + 1 < len(argv):
            root, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--root="):
            root, i = arg.split("=", 1)[1], i + 1
            continue
        if arg.startswith("-"):
            i += 1
            continue
        if arg not in FORWARDED or "-h" in argv[i + 1 :] or "--help" in argv[i + 1 :]:
            return None
        return root, arg
    return None


def _with_database(env, argv: list[str]) -> dict:
    """The environment a command line runs with: ``--database URL`` selects the PostgreSQL
    backend on that database, as ``FALSIFY_DATABASE_URL`` does (``data_root.use_database``)."""
    env = dict(env)
    for i, arg in enumerate(argv):
        url = argv[i + 1] if arg == "--database" and i + 1 < len(argv) else None
        if arg.startswith("--database="):
            url = arg.split("=", 1)[1]
        if url is not None:
            env["FALSIFY_BACKEND"], env["FALSIFY_DATABASE_URL"] = "postgres", url
    return env


def root_of(root: Optional[str], cwd: Path, home: Optional[str]) -> Path:
    """The data root as ``memory_core.store.data_root.resolve_root`` finds it, from ``cwd``."""
    if root:
        return (cwd / Path(root).expanduser()).resolve()
    if home:
        return (cwd / Path(home).expanduser()).resolve()
    return (cwd / ".falsify").resolve()


def _settings():
    """FALSIFY's typed settings (``memory_core.store.settings``) as this command's environment
    gives them. In a process that imported memory_core (``cli.main``, which reloads them at
    its start): those. Loaded on its own (``main.py``): settings.py loaded on its own too, with
    the one module it imports (``memory_core/core/errors.py``, standard library only) in
    ``sys.modules`` for the load and then taken out again, so nothing heavy is imported and
    nothing is left for the real package to find. A value that does not parse raises (a
    ``ValueError``: config's ``SettingsError``)."""
    if "memory_core" in sys.modules:
        from memory_core.store import settings as config

        return config.current()
    package = Path(__file__).resolve().parent.parent
    files = {
        "memory_core.core.errors": package / "core" / "errors.py",  # settings.py's one import
        "falsify_remote_config": package / "store" / "settings.py",
    }
    saved = {name: sys.modules.get(name) for name in files}
    try:
        for name, path in files.items():
            spec = importlib.util.spec_from_file_location(name, path)
            sys.modules[name] = module = importlib.util.module_from_spec(spec)  # dataclasses looks it up
            spec.loader.exec_module(module)
    finally:
        for name, before in saved.items():
            if before is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = before
    return module.read()


def settings_digests(env, salt: str) -> dict:
    """{name: salted digest of its value} of the settings in ``env`` a forwarded command must
    share with its server (values, keys included, are never sent). FALSIFY_BACKEND by meaning
    (unset, ``embedded`` and ``ladybug`` are one backend)."""
    import hashlib

    values = {
        k: v.strip() for k, v in env.items() if k.startswith(SETTING_PREFIXES) and k not in NOT_COMPARED
    }
    backend = values.pop("FALSIFY_BACKEND", "").lower()
    if backend not in ("", "ladybug", "embedded"):
        values["FALSIFY_BACKEND"] = "postgres" if backend in ("postgresql", "pgvector") else backend
    # FALSIFY_EMBEDDER by meaning too: "local", or unset with no hosted embedding configured (no
    # EMBEDDING_* model, no LLM key: memory_core/store/environment.py), is the bundled model
    embedder = values.pop("FALSIFY_EMBEDDER", "").lower()
    hosted = any(
        values.get(k)
        for k in (
            "EMBEDDING_PROVIDER",
            "EMBEDDING_MODEL",
            "EMBEDDING_ENDPOINT",
            "EMBEDDING_API_KEY",
            "LLM_API_KEY",
        )
    )
    if embedder != "local" and (embedder or hosted):
        values["FALSIFY_EMBEDDER"] = embedder or "hosted"
    return {k: hashlib.sha256(f"{salt}\0{k}\0{v}".encode()).hexdigest()[:32] for k, v in values.items() if v}


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
    parsed = argv if isinstance(argv, argparse.Namespace) else None
    argv = list(sys.argv[1:] if argv is None or parsed is not None else argv)
    scanned = _scan(argv)
    if scanned is None or (parsed is not None and getattr(parsed, "command", None) != scanned[1]):
        return None
    try:
        settings = _settings()
    except ValueError:  # a FALSIFY_* value that does not parse: the command, run here, says which
        return None
    if settings.no_server:
        return None
    cwd = Path.cwd()
    root = root_of(scanned[0], cwd, settings.home)
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
    refused = refuse_special_files(argv, scanned[1], cwd)
    if refused is not None:
        conn.close()
        return refused
    stdin = stdin_bytes = None
    if scanned[1] == "load" and "-" in argv[argv.index("load") + 1 :]:
        stdin_bytes = read_stdin()
        stdin = base64.b64encode(stdin_bytes).decode("ascii")
    salt, rid = os.urandom(16).hex(), os.urandom(16).hex()
    body = json.dumps(
        {
            "argv": argv,
            "cwd": str(cwd),
            "falsify_home": settings.home,
            "stdin": stdin,
            "request_id": rid,
            "settings": {"salt": salt, "digests": settings_digests(_with_database(os.environ, argv), salt)},
        }
    ).encode("utf-8")
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {info['secret']}"}
    with _interrupts_sent(parts, headers, rid) as interrupts:
        return interrupts.answered(
            _forwarded(conn, body, headers, root, info, parts, scanned[1], stdin_bytes), scanned[1]
        )


def _forwarded(conn, body, headers, root, info, parts, command, stdin_bytes) -> Optional[int]:
    """Send the command (``body``) to the server and answer with what it did (see :func:`forward`)."""
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
            what = "it" if command not in WRITERS else f"the {command}"
            print(
                f"error: the FALSIFY server on this root stopped answering during `{command}` "
                f"({type(first).__name__}); the server may have applied {what}: run status "
                "(nothing was run a second time)",
                file=sys.stderr,
            )
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
        print(
            "error: the FALSIFY server on this root sent an answer that is not one; the server may have "
            f"applied the {command}: run status",
            file=sys.stderr,
        )
        return 1
    if answer["exit"] == OTHER_ROOT and answer.get("other_root"):
        # the real parser found another root (or a database) than the scan: the server ran
        # nothing; run it here, with the standard input already read
        if stdin_bytes is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin_bytes), encoding="utf-8")
        return None
    try:
        sys.stdout.write(answer["stdout"])
        sys.stdout.flush()
    except BrokenPipeError:
        return output_closed()
    sys.stderr.write(answer["stderr"])
    return int(answer["exit"])


OUTPUT_CLOSED = 141  # what a shell reports for a process its reader's end of the pipe stopped (128 + SIGPIPE)


def output_closed() -> int:
    """Standard output was closed by its reader (``falsify status | head``): the output is cut
    short, the command's work stands as done; nothing more is written (the interpreter's last
    flush included) and no error is reported."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real descriptor behind sys.stdout
        pass
    return OUTPUT_CLOSED


# what `load -` reads at most: the cold path's limit (memory_core.core.investigation.MAX_FILE) and
# one byte more, so a larger input is refused by the server as the cold path refuses it
LOAD_LIMIT = 50 * 1024 * 1024


def read_stdin() -> bytes:
    """Standard input's bytes for `load -` (exactly, up to LOAD_LIMIT + 1)."""
    return sys.stdin.buffer.read(LOAD_LIMIT + 1)


def file_arguments(argv: list[str], command: str) -> list[str]:
    """The file names a command line hands the server to read (``load FILE``, ``revise --file FILE``)."""
    rest = argv[argv.index(command) + 1 :]
    found = []
    for i, arg in enumerate(rest):
        if arg == "--file" and i + 1 < len(rest):
            found.append(rest[i + 1])
        elif arg.startswith("--file="):
            found.append(arg.split("=", 1)[1])
    if command == "load":
        found += [a for a in rest if not a.startswith("-")][:1]
    return found


def refuse_special_files(argv: list[str], command: str, cwd: Path) -> Optional[int]:
    """Exit 2 (one line) when a file the command names is not a regular file (a FIFO, a device,
    a folder): the server would read it on its one event loop, and a FIFO nobody writes to
    stalls every other client behind it. ``load - < FILE`` reads any stream here instead."""
    import stat

    for name in file_arguments(argv, command):
        path = cwd / Path(name).expanduser()
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # missing or unreadable: the command says so, as the cold path does
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a folder"
                if stat.S_ISDIR(mode)
                else "a device or socket"
            )
            print(
                f"error: {name} is {kind}, not a regular file; the FALSIFY server on this root reads only regular "
                f"files (to pass a stream, pipe it: `{command} - < {name}`"
                + (")" if command == "load" else "; or save it to a file first)"),
                file=sys.stderr,
            )
            return 2
    return None


@contextlib.contextmanager
def _interrupts_sent(parts, headers: dict, rid: str):
    """While the server runs this command, Ctrl-C is passed on to it (``{"interrupt": rid}``,
    memory_core.shell.warm_server.interrupt) and the answer still awaited: the server cancels
    the command before its change reached its commit point (its answer: exit 130, rolled back
    whole), and past it lets it finish (its answer: the result). A second Ctrl-C stops waiting
    (the server may apply the change). Only when Ctrl-C has Python's default handling here."""
    import signal
    import threading

    state = _Forwarding()
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield state
        return

    def on_interrupt(_signum, _frame):
        if state.finished:  # a change the server made is being reported: Ctrl-C changes nothing now
            return
        if state.sent:
            raise KeyboardInterrupt
        state.sent = True
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            _exchange(conn, json.dumps({"argv": [], "interrupt": rid}).encode(), headers)
        except (OSError, http.client.HTTPException):
            raise KeyboardInterrupt from None  # not passed on: stop waiting, as before

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield state
    finally:
        if not state.finished:
            signal.signal(signal.SIGINT, signal.default_int_handler)


class _Forwarding:
    """A forwarded command's Ctrl-C: passed on to the server (``sent``); ``finished`` once a
    command that may have changed the graph has answered 0 (its report is not cut short)."""

    def __init__(self) -> None:
        self.sent = False
        self.finished = False

    def answered(self, code: Optional[int], command: str) -> Optional[int]:
        self.finished = code == 0 and command in WRITERS
        return code


def _exchange(conn: http.client.HTTPConnection, body: bytes, headers: dict):
    try:
        conn.request("POST", "/api/cli", body=body, headers=headers)
        resp = conn.getresponse()
        return resp, resp.read()
    finally:
        conn.close()
