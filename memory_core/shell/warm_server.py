"""The warm CLI's server side: a command forwarded by the client
(``memory_core.shell.remote.forward``) is run in the long-lived server process, on the
facade it holds open, with the CLI's own parser and command functions
(``memory_core.shell.commands``). The web server (``POST /api/cli``) calls
:func:`run_command`; ``cli.py`` hands it over when it starts ``serve`` or ``mcp``.
A command runs in one session of the server's gate (:mod:`memory_core.session`), one at
a time with every MCP tool call and viewer request; whether it changed the graph (and
is announced to the open viewers) is what the facade declares of the method it runs.
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

from memory_core.api import Falsify, changes_graph
from memory_core.core.errors import FalsifyError, error_message
from memory_core.session import Gate
from memory_core.shell.commands import (
    BORROWED,
    COMMANDS,
    EXIT_BUSY,
    EXIT_PROBLEMS,
    INTERRUPTED,
    build_parser,
    internal_error,
    late_note,
)
from memory_core.shell.remote import FORWARDED, OTHER_ROOT, STORE, root_of, settings_digests
from memory_core.store import writer
from memory_core.store.streams import captured

REMEMBERED = 256  # request ids (and their answers) a server keeps
# the environment this server's settings were read from (its start, with the project's .env), set by
# the CLI before it serves: a forwarded command runs here only with the same settings
SETTINGS_ENV: dict = {}


# the facade method each forwarded command runs (``revise --file``: revise_many, declared alike);
# its declaration (``@writes`` in memory_core.api) says whether the command changed the graph
RUNS: dict[str, Callable[..., Any]] = {
    "load": Falsify.load,
    "status": Falsify.status,
    "revise": Falsify.revise,
    "explain": Falsify.explain,
    "recall": Falsify.recall,
    "undo": Falsify.undo,
    "check": Falsify.check,
    "resolve": Falsify.resolve,
}


class Borrowed(Falsify):
    """The server's facade lent to one CLI command: its opened stores, under a facade whose
    ``close`` leaves them open (the server keeps them)."""

    def __init__(self, app: Falsify):
        super().__init__(app.stores, None)

    async def close(self) -> None:
        pass


_answers: dict[str, asyncio.Future] = {}  # request id -> its answer (insertion order: oldest first)
# request id -> the task running it and its interruption, while it runs (remote.forward's Ctrl-C)
_running: dict[str, tuple[asyncio.Task, writer.Interruption]] = {}


def interrupt(rid) -> dict:
    """A client's Ctrl-C during its command ``rid``: as the cold CLI answers it
    (memory_core.shell.commands.interruptible). Before the command's change reached its commit
    point the command is cancelled (rolled back whole; its answer: exit 130, "interrupted");
    past it nothing is cancelled and the command's answer is its result, with a note. The
    answer to this request only says which (``"cancelled"``)."""
    running = _running.get(rid) if isinstance(rid, str) else None
    if running is None:
        return {"stdout": "", "stderr": "", "exit": 0, "cancelled": False}
    task, interruption = running
    if task.done() or interruption.past_commit_point():
        interruption.late = interruption.past_commit_point()
        return {"stdout": "", "stderr": "", "exit": 0, "cancelled": False}
    if not interruption.asked:
        interruption.asked = True
        task.get_loop().call_soon_threadsafe(task.cancel)  # on the loop that runs it
    return {"stdout": "", "stderr": "", "exit": 0, "cancelled": True}


async def run_command(gate: Gate, request: dict, stdin: Optional[str]) -> dict:
    """The server side of ``remote.forward``: parse the command line with the CLI's parser,
    check it names this server's root, and run the command against the gate's facade,
    one at a time with every other call, capturing what it prints and its exit code
    (``stdin``: standard input's bytes, base64, for ``load -``). A request id seen before
    (a client's retry) gets the answer of its first run, never a second run."""
    if isinstance(request, dict) and "interrupt" in request:
        return interrupt(request["interrupt"])
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
    interruption = writer.Interruption()
    task = asyncio.current_task()
    if task is not None:
        _running[rid] = (task, interruption)
    token = writer.INTERRUPTION.set(interruption)
    try:
        try:
            answer = await _run_command(gate, request, stdin)
        except asyncio.CancelledError:
            if not interruption.asked or task is None or task.uncancel() > 0:
                raise  # not (only) the client's Ctrl-C: the server is stopping
            answer = {"stdout": "", "stderr": "interrupted\n", "exit": INTERRUPTED}
        if interruption.late:
            answer = {**answer, "stderr": answer["stderr"] + late_note(interruption.committing)}
    except BaseException as error:
        future.set_exception(error)
        future.exception()  # retrieved: a retry re-raises it, nobody else needs to
        raise
    finally:
        writer.INTERRUPTION.reset(token)
        _running.pop(rid, None)
    future.set_result(answer)
    return answer


def settings_differ(theirs) -> list[str]:
    """The settings (names) in which a forwarded command's cold run would differ from this
    server's: the client's, with what the project's .env adds to them, against the server's.
    A request that does not carry its settings (a caller other than the CLI's client, which
    always does: one inside the server's process, or a hand-made request) runs with the server's."""
    from memory_core.store.data_root import PROJECT_DIR

    if not isinstance(theirs, dict):
        return []
    salt = str(theirs.get("salt") or "")
    given = theirs.get("digests")
    digests: dict = given if isinstance(given, dict) else {}
    env_file = PROJECT_DIR / ".env"
    if env_file.is_file():  # the client's cold run would load it too, without overriding its environment
        from dotenv import dotenv_values

        added = {k: v for k, v in dotenv_values(env_file).items() if v is not None}
        digests = {**settings_digests(added, salt), **digests}
    ours = settings_digests(SETTINGS_ENV or os.environ, salt)
    return sorted(k for k in set(ours) | set(digests) if ours.get(k) != digests.get(k))


def _not_regular(name: str) -> Optional[str]:
    """The error line for a file argument that is not a regular file (a FIFO would stall the
    server's one event loop, and every client behind it); None for a regular or missing one."""
    import stat

    try:
        mode = Path(name).stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return (
        f"error: {name} is not a regular file; the FALSIFY server reads only regular files "
        "(pipe a stream: load - < FILE)\n"
    )


async def _run_command(gate: Gate, request: dict, stdin: Optional[str]) -> dict:
    argv, cwd = request.get("argv"), Path(str(request.get("cwd") or "/"))
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return {"stdout": "", "stderr": "error: the command line must be a list of strings\n", "exit": 2}
    out, err = io.StringIO(), io.StringIO()
    with captured(out, err):
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exit_:  # usage errors: the parser's own message and exit code
            return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": int(exit_.code or 0)}
    command = getattr(args, "command", None)
    app = await gate.ready()
    here = app.paths.root if app.paths is not None else None
    wanted = root_of(args.root, cwd, request.get("falsify_home"))
    if (
        command not in FORWARDED
        or command not in COMMANDS
        or args.demo
        or args.session
        or here is None
        or Path(here).resolve() != wanted
    ):
        return {"stdout": "", "stderr": "", "exit": OTHER_ROOT, "other_root": True}
    differ = settings_differ(request.get("settings"))
    if set(differ) & set(STORE):  # another backend or database: not this server's store; run it cold
        return {"stdout": "", "stderr": "", "exit": OTHER_ROOT, "other_root": True}
    if differ:
        return {
            "stdout": "",
            "exit": EXIT_BUSY,
            "stderr": f"error: the FALSIFY server holding this root (pid {os.getpid()}) runs with other settings "
            f"than this command ({', '.join(differ)}); nothing was run. Run the command with the "
            "server's settings, or stop the server (the command then runs cold)\n",
        }
    for name in ("file",):  # file arguments are relative to the client's directory
        value = getattr(args, name, None)
        if isinstance(value, str) and value != "-":
            setattr(args, name, str((cwd / Path(value).expanduser()).resolve()))
            refused = _not_regular(getattr(args, name))
            if refused:
                return {"stdout": "", "stderr": refused, "exit": 2}
    args.root = None

    async def job(app: Falsify) -> int:
        token = BORROWED.set(Borrowed(app))
        saved_stdin = sys.stdin
        try:
            with captured(out, err):
                if stdin is not None:
                    sys.stdin = io.TextIOWrapper(io.BytesIO(base64.b64decode(stdin)), encoding="utf-8")
                try:
                    return await COMMANDS[command](args)
                except FalsifyError as error:  # exactly as commands.run maps them
                    print(error_message(error), file=sys.stderr)
                    return error.exit_code
                except Exception as error:  # noqa: BLE001
                    print(internal_error(error, here), file=sys.stderr)
                    return EXIT_PROBLEMS
        finally:
            sys.stdin = saved_stdin
            BORROWED.reset(token)

    async with gate.session() as fx:
        code = await job(fx.facade)
    if changes_graph(RUNS[command], vars(args)):  # --dry-run, check without --repair: nothing changed
        gate.announce(f"cli {command}")
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": code}
