"""The CLI's commands: the parser, the command table and the exit codes, used by the
entry point (``memory_core.shell.cli``, a command run in this process) and by a server
answering the warm CLI (``memory_core.shell.warm_server``, a command run in the
long-lived process on its opened root), so both run the very same command functions.

Exit codes (also in docs/guarantees.md):
  0  success (including "nothing to do" and "no judge could decide")
  1  ``check`` found problems, or an unexpected internal error
  2  bad input: invalid file, fact, key, flag or JSON; nothing was written
  3  the data root is busy (another writer held the lock past the timeout)
  4  the data root was built with another embedder
  5  the judge failed (LLM timeout, error status, malformed verdict); nothing was written
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import inspect
import json
import shlex
import os
import sys
from pathlib import Path
from typing import Optional

from memory_core.api import Falsify
from memory_core.core.errors import VOCABULARY, FalsifyError, InputError, error_message, speak
from memory_core.core import validity
from memory_core.core.fields import FACT_FIELDS, FIELDS
from memory_core.core.requests import fact_lines, revision_request
from memory_core.ops import revise as revise_op
from memory_core.shell import report
from memory_core.store import writer
from memory_core.store.data_root import resolve_root

EXIT_OK, EXIT_PROBLEMS, EXIT_INPUT, EXIT_BUSY, EXIT_EMBEDDER, EXIT_JUDGE = 0, 1, 2, 3, 4, 5


def program_name() -> str:
    """How the user started FALSIFY: ``falsify`` (the installed script) or ``python main.py``."""
    return "python main.py" if Path(sys.argv[0] or "").name in ("main.py", "") else "falsify"


# how this process came to run the command: {"by": "launcher", "launcher_pid": N, "started": bool}
# for a child of the launcher, {"by": None, "reason": why not} for a cold one (memory_core.shell.cli.main)
RAN: dict = {}


def run_note() -> str:
    """One line saying whether this command ran warm, and how (``status`` and ``--help`` print it)."""
    if BORROWED.get() is not None:
        return f"ran warm: answered by the FALSIFY server holding this root (pid {os.getpid()})"
    if RAN.get("by") == "launcher":
        if RAN.get("started"):
            return (
                f"ran in the FALSIFY launcher this command started (pid {RAN.get('launcher_pid')}); "
                "the next commands start warm"
            )
        spare = ", cognee already imported for this root" if RAN.get("spare") else ""
        return f"ran warm: forked by the FALSIFY launcher (pid {RAN.get('launcher_pid')}){spare}"
    reason = RAN.get("reason")
    return f"ran cold ({reason})" if reason else "ran cold"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=program_name(),
        description="FALSIFY: belief-revision research memory on cognee. Drop one contradicting fact; "
        "dependent conclusions die, a rival hypothesis rises, dead ends are forgotten.",
        epilog="Data root: --root DIR, else $FALSIFY_HOME, else ./.falsify. Exit codes: 0 ok, 1 problems found / "
        "internal error, 2 bad input (nothing written), 3 data root busy, 4 embedder mismatch, 5 judge failed. "
        "Start-up: commands run in a child of a per-user warm launcher, started by the first command "
        "(FALSIFY_LAUNCHER=0, FALSIFY_NO_SERVER=1 or --cold: run in this process); this one "
        + run_note()
        + ".",
    )
    p.add_argument("--root", help="data root (default: $FALSIFY_HOME or ./.falsify)")
    p.add_argument(
        "--cold",
        action="store_true",
        help="run the command in this process: no warm launcher, no server's warm CLI "
        "(as FALSIFY_NO_SERVER=1)",
    )
    p.add_argument(
        "--database",
        metavar="URL",
        help="the PostgreSQL backend on this database, postgresql://user:password@host:port/db "
        "(same as FALSIFY_BACKEND=postgres + FALSIFY_DATABASE_URL)",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="run the two-session demo offline (session 1, then session 2 in a new process)",
    )
    p.add_argument(
        "--session", type=int, choices=(1, 2), help="run one demo session: 1 builds the graph, 2 revises it"
    )
    p.add_argument(
        "--keep", action="store_true", help="with --demo: reuse the demo root instead of starting clean"
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser(
        "load",
        help="load an investigation file (JSON; '-' reads standard input), or a fragment "
        "into a stored question; re-loading adds only what is new",
    )
    s.add_argument("file", help="the investigation file, or - for standard input")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "status", help="every node (key, type, state, weight, epoch, confidence, text) and edge"
    )
    s.add_argument(
        "--epoch",
        help="the graph as it stood after epoch N (rebuilt from the revision log; nothing is written)",
    )
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "revise", help="revise the beliefs with a new fact (two-gate detection, cascade, forget)"
    )
    for field in FIELDS:  # the request's fields, declared once (memory_core.core.fields)
        if not field.flag:
            s.add_argument(field.name, nargs="?", help=field.help)
        elif field.kind == "bool":
            s.add_argument(field.flag, action="store_true", help=field.help)
        else:
            s.add_argument(field.flag, metavar=field.metavar, help=field.help)
    s.add_argument(
        "--file",
        help="JSONL file of facts, one JSON object per line with the flags' fields ("
        + ", ".join(FACT_FIELDS)
        + "), revised as one batch",
    )
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "resolve",
        help="end a dispute, or decide that WINNER contradicts LOSER (two alive facts of one question): "
        "LOSER refuted, WINNER alive, everything relabelled",
    )
    s.add_argument("loser", help="the evidence that loses (disputed, or alive)")
    s.add_argument("--winner", required=True, help="the evidence that wins (disputed, or alive)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("explain", help="why a node (forgotten ones included) is in its state")
    s.add_argument("key")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("recall", help="answer a question twice: FALSIFY (alive beliefs only) vs plain RAG")
    s.add_argument(
        "question", nargs="?", help="default: the demo question, else the only inquiry's own question"
    )
    s.add_argument("--inquiry", metavar="KEY", help="answer only from the beliefs of this question (its key)")
    s.add_argument(
        "--path",
        metavar="S|P|P...",
        help="follow alive triples from subject S, one predicate per hop (instead of a question)",
    )
    s.add_argument("--epoch", help="answer from the beliefs alive after epoch N (as stored then)")
    s.add_argument(
        "--as-of",
        help="ISO date, year or month: answer from the beliefs valid then (valid time; a question "
        "naming its time, 'in 2018', is read so when this is not given)",
    )
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "undo", help="revert the last revision (or load) completely; again reverts the one before"
    )
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("check", help="verify graph/vector agreement, revision rules and the journal")
    s.add_argument("--repair", action="store_true", help="fix what can be fixed and say what was done")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "serve",
        help="browser viewer of the belief graph (http://127.0.0.1:8765); answers this "
        "root's CLI commands while it runs",
    )
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)
    s.add_argument(
        "--mcp", action="store_true", help="also serve MCP over streamable HTTP at /mcp (same process)"
    )
    s.add_argument("--token", help="access token, required beyond loopback (default: $FALSIFY_TOKEN)")

    s = sub.add_parser(
        "mcp",
        help="serve MCP over stdio on this root (for an agent's mcpServers entry); while it runs "
        "it answers this root's CLI commands",
    )
    s.add_argument(
        "--viewer",
        action="store_true",
        help="also serve the browser viewer on a free loopback port (printed on stderr), behind an access "
        "token: FALSIFY_TOKEN, else one made for the session and kept in <root>/server.json",
    )
    return p


def emit(data, as_json: bool, human) -> None:
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human(data)


def run(coro, root=None, server: bool = False) -> int:
    """Run a command; map every FALSIFY error to its exit code (one place), and turn an
    unexpected one into one line on stderr plus the full traceback in a log file. Ctrl-C
    (:func:`interruptible`): before the command's change reached its commit point the change
    is rolled back whole (exit 130); past it the command finishes and reports its result.
    ``server``: a long-lived server (``mcp``), many changes: Ctrl-C stops it, each change under way
    rolled back whole or, past its commit point, kept."""
    interruption = writer.Interruption()
    try:
        code = interruptible(coro, None if server else interruption)
        sys.stdout.flush()  # a reader gone before the last buffered line is seen here, not at exit
        if interruption.late:
            print(late_note(interruption.committing), file=sys.stderr, end="")
        return code
    except FalsifyError as error:
        print(error_message(error), file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader closed standard output (a pipe to head): not an error
        from memory_core.shell.remote import output_closed

        return output_closed()
    except Exception as error:  # noqa: BLE001  (anything else is a bug: one line, and a log file)
        print(internal_error(error, root), file=sys.stderr)
        return EXIT_PROBLEMS


INTERRUPTED = 130  # Ctrl-C before the command's change reached its commit point: nothing of it kept


def late_note(epoch) -> str:
    """The line a command interrupted past its commit point adds on stderr (it finished)."""
    return (
        f"note: interrupted too late to stop it: the change of epoch {epoch} was committed, so the "
        "command finished (do not run it again)\n"
    )


def interruptible(coro, interruption: Optional[writer.Interruption]):
    """``asyncio.run(coro)``, with Ctrl-C turned into a cancellation of the command as asyncio
    does, but only before its change reached its commit point (``interruption``, which the
    writer marks there): from the commit point on, the change holds and a Ctrl-C cancels nothing
    (``interruption.late``); the command finishes. A second Ctrl-C before it stops at once, as
    asyncio's does. Raises KeyboardInterrupt when the command was cancelled. ``interruption``
    None: Ctrl-C always cancels (a server's changes are each rolled back or kept by the writer)."""
    import signal
    import threading

    running: dict = {}
    asked = interruption or writer.Interruption()  # what the handler notes (a server: never marked)

    async def command():
        running["task"] = asyncio.current_task()
        if interruption is not None:
            writer.INTERRUPTION.set(interruption)
        return await coro

    def on_interrupt(_signum, _frame):
        task = running.get("task")
        if task is None:  # the command has not begun: nothing to roll back
            raise KeyboardInterrupt
        if task.done() or asked.past_commit_point():
            asked.late = asked.past_commit_point()
            return
        if asked.asked:
            raise KeyboardInterrupt
        asked.asked = True
        task.cancel()
        running["loop"].call_soon_threadsafe(lambda: None)  # wake the loop to deliver it

    with asyncio.Runner() as runner:
        running["loop"] = runner.get_loop()
        ours = (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        )
        if ours:
            signal.signal(signal.SIGINT, on_interrupt)
        try:
            return runner.run(command())
        except asyncio.CancelledError:
            if asked.asked:
                raise KeyboardInterrupt from None
            raise
        finally:
            # past a commit point the handler stays: a Ctrl-C while the result is printed changes
            # nothing (the command has finished), it must not end the process as "interrupted"
            if ours and signal.getsignal(signal.SIGINT) is on_interrupt and not asked.past_commit_point():
                signal.signal(signal.SIGINT, signal.default_int_handler)


def internal_error(error: BaseException, root=None) -> str:
    """The one line printed for an unexpected error (its traceback goes to a log file)."""
    from memory_core.store.environment import redact

    where = crash_log(error, root)
    detail = redact(" ".join(str(error).split()))[:300]
    return f"internal error: {type(error).__name__} {detail} (full traceback in {where})"


def crash_log(error: BaseException, root=None) -> str:
    """Write the traceback of an unexpected error to ``<root>/logs/internal-error-*.log``
    (else the system temp directory). Returns the file's path."""
    import tempfile
    import time
    import traceback

    import shlex as quoting

    from memory_core.store.environment import redact, redact_argv

    # secrets (a URL's password, --token, API keys) masked; the file is its owner's only
    text = redact("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    command = quoting.join(redact_argv(sys.argv[1:]))
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    try:
        from memory_core.store import settings as config

        folder = resolve_root(root, config.current()) / "logs"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (OSError, ValueError):
        folder = Path(tempfile.gettempdir())
    path = folder / f"internal-error-{stamp}-{os.getpid()}.log"
    try:
        with open(path, "w", encoding="utf-8", opener=lambda p, flags: os.open(p, flags, 0o600)) as f:
            f.write(f"python main.py {command}\n\n{text}")
    except OSError:
        fd, name = tempfile.mkstemp(prefix="falsify-internal-error-", suffix=".log")  # 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        path = Path(name)
    return str(path)


# the warm CLI: a server running a command lends its opened facade (shell/warm_server.py)
BORROWED: contextvars.ContextVar = contextvars.ContextVar("falsify_borrowed_facade", default=None)


# commands that only read (or change) what is stored: on a missing root, exit 2 and create nothing
NEEDS_ROOT = frozenset({"status", "explain", "recall", "check", "undo", "resolve"})


# commands that read only the graph and the revision log: opened without the vector store, the
# embedding model and a write's imports (Falsify.open(warm=False); they load if used after all)
GRAPH_AND_LOG_ONLY = frozenset({"status", "explain"})


async def _open(args, purpose="cli"):
    if BORROWED.get() is not None:
        return BORROWED.get()
    app = await Falsify.open(
        args.root,
        purpose=f"python main.py {purpose}",
        create=purpose not in NEEDS_ROOT,
        warm=purpose not in GRAPH_AND_LOG_ONLY,
    )
    if app.recovered:
        print(f"[recovery] {app.recovered}", file=sys.stderr)
    return app


async def _simple(args, name: str, call, printer) -> dict:
    """Open the root, run ``call(app)``, close, print (JSON or the human form)."""
    app = await _open(args, name)
    try:
        result = call(app)
        if inspect.isawaitable(result):
            result = await result
    finally:
        await app.close()
    emit(result, args.json, printer)
    return result


def _whole_epoch(value):
    """``--epoch``'s text as the facade's whole number (None when not given); one that is not a
    whole number fails before the root is opened (the range is checked against the root's epochs
    once it is). A number longer than 20 digits is past every epoch: it is passed as one (never
    converted whole: Python refuses to read one of more than 4,300 digits)."""
    if value is None:
        return None
    text = value.strip()
    if not (text.isdigit() and text.isascii()):
        raise InputError(f"the epoch must be a whole number from 0 to the current epoch, got {value!r}")
    return int(text) if len(text) <= 20 else 10**21


async def cmd_load(args) -> int:
    source = args.file
    if source == "-":
        source = sys.stdin.buffer.read()
        if not source.strip():
            raise InputError("load -: nothing on standard input")
    else:
        source = _readable(Path(source))
    _validate_first(args, source)
    await _simple(args, "load", lambda app: app.load(source), report.print_load)
    return EXIT_OK


def _readable(path: Path):
    """A regular file stays a path (the facade reads it and names it in its messages); anything
    else (a FIFO, a device, process substitution) is read here, once."""
    try:
        if path.is_file():
            return path
        return path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None


def _validate_first(args, source) -> None:
    """A file that cannot load anywhere (not JSON, a repeated field, a bad entry) is refused
    before the root is opened, so a rejected load creates nothing. On a root that does not
    exist yet (embedded: nothing is stored that the file could name) the whole file is
    validated; elsewhere the store-dependent checks run after opening, writing nothing."""
    from memory_core.core.investigation import loads_json, parse
    from memory_core.store import settings as config
    from memory_core.store.data_root import root_exists

    if BORROWED.get() is not None:
        return
    data = source.read_bytes() if isinstance(source, Path) else source
    what = str(source) if isinstance(source, Path) else "investigation"
    settings = config.current()
    if settings.backend == "ladybug" and not root_exists(args.root, settings):
        parse(data, known={}, what=what)
    else:
        loads_json(data, what)


async def cmd_status(args) -> int:
    epoch = _whole_epoch(args.epoch)
    await _simple(args, "status", lambda app: app.status(epoch=epoch), report.print_status)
    if not args.json:
        print(f"\n({run_note()})")
    return EXIT_OK


def _number_arg(value, flag: str):
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise InputError(f"{flag}: must be a number from 0 to 1, got {value!r}", field=flag[2:]) from None


async def cmd_revise(args) -> int:
    if args.file and args.fact:
        raise InputError("give either a FACT or --file, not both")
    if not args.file and args.fact is None:
        raise InputError("revise needs a FACT (or --file FACTS.jsonl)")
    per_line = [f for f in FACT_FIELDS if f != "fact"]
    if args.file:
        if any(getattr(args, f) for f in per_line):
            raise InputError(f"with --file, put {'/'.join(per_line)} on each line")
        try:
            data = open(args.file, "rb").read()
        except OSError as error:
            raise InputError(f"cannot read {args.file}: {error.strerror}") from None
        # a line is a JSON object: its messages and notes name its fields as the line spells them
        # ("trust", "record", "target 'X'"), never a flag
        VOCABULARY.set("viewer")
        try:
            requests = fact_lines(
                data, args.file
            )  # the whole file, before waiting for the lock or importing cognee
        except InputError as error:
            raise speak(error, "viewer") from None
    else:
        fields = {
            "triple": args.triple,
            "target": args.target,
            "key": args.key,
            "source": args.source,
            "asserted_at": args.asserted_at,
            "trust": _number_arg(args.trust, "--trust"),
            "policy": args.policy,
            "valid_from": args.valid_from,
            "valid_to": args.valid_to,
            "record": args.record,
            "supports": args.supports,
            "refutes": args.refutes,
            "weight": _number_arg(args.weight, "--weight"),
            "inquiry": args.inquiry,
        }
        request = revision_request(args.fact, **fields)  # before waiting for the lock or importing cognee

    batch = requests if args.file else [request]
    shown = iter(batch)  # results come one per fact, in order

    def show(result):
        asked = next(shown, None)
        if args.json:
            print(
                json.dumps(result, ensure_ascii=False)
                if args.file
                else json.dumps(result, indent=2, ensure_ascii=False),
                flush=True,
            )
        else:
            from memory_core.store.data_root import PROJECT_DIR

            prog = (
                "python main.py" if (PROJECT_DIR / "main.py").is_file() else "falsify"
            )  # checkout or installed
            report.print_revision(
                result,
                again=prog + (f" --root {shlex.quote(args.root)}" if args.root else ""),
                keep=report.flags_of(asked) if asked is not None else "",
            )

    if _nothing_stored(args):
        for result in _nothing_to_revise(batch, args.dry_run, args.file):
            show(result)
        return EXIT_OK
    app = await _open(args, "revise")
    try:
        if args.file:
            await app.revise_many(requests, what=args.file, dry_run=args.dry_run, on_result=show)
        else:
            show(await app.revise(args.fact, **fields, dry_run=args.dry_run))
    finally:
        await app.close()
    return EXIT_OK


def _nothing_stored(args) -> bool:
    """A root that does not exist yet, on the embedded backend (on PostgreSQL a new local root
    reads a shared database): nothing to revise, and nothing is created to say so."""
    from memory_core.store import settings as config
    from memory_core.store.data_root import root_exists

    settings = config.current()
    return BORROWED.get() is None and settings.backend == "ladybug" and not root_exists(args.root, settings)


def _nothing_to_revise(requests, dry_run: bool, what=None) -> list[dict]:
    """What revising on a root with nothing loaded answers (a pinned target is unknown there:
    InputError), without creating the root. ``what``: the --file the requests came from."""
    for request in requests:
        if request.target is not None:
            where = f"{what} line {request.line}: " if what and request.line is not None else ""
            raise speak(
                InputError(
                    f"{where}--target {request.target!r}: no evidence with that key (nothing is loaded in "
                    "this data root, and nothing was created)",
                    field="target",
                )
            )
    results = []
    for request in requests:
        result = dict(
            revise_op.empty_result(request.fact, None),
            dry_run=dry_run,
            llm={"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0},
        )
        if not dry_run:
            result["note"] = revise_op.NOTHING_LOADED
        results.append(result)
    return results


async def cmd_explain(args) -> int:
    await _simple(args, "explain", lambda app: app.explain(args.key), report.print_explain)
    return EXIT_OK


async def cmd_recall(args) -> int:
    epoch = _whole_epoch(args.epoch)
    validity.check_when(args.as_of, "--as-of")  # a bad date fails before the root is opened
    await _simple(
        args,
        "recall",
        lambda app: app.recall(
            args.question, epoch=epoch, as_of=args.as_of, inquiry=args.inquiry, path=args.path
        ),
        report.print_recall,
    )
    return EXIT_OK


async def cmd_resolve(args) -> int:
    await _simple(args, "resolve", lambda app: app.resolve(args.loser, args.winner), report.print_revision)
    return EXIT_OK


async def cmd_undo(args) -> int:
    await _simple(args, "undo", lambda app: app.undo(), report.print_undo)
    return EXIT_OK


async def cmd_check(args) -> int:
    result = await _simple(args, "check", lambda app: app.check(repair=args.repair), report.print_check)
    return EXIT_OK if result["clean"] or (args.repair and result.get("clean_after_repair")) else EXIT_PROBLEMS


def _in_cli_words(command):
    """A command run anywhere (cold, or by a server for the warm CLI) names the CLI's flags."""

    async def run_in_cli_words(args) -> int:
        VOCABULARY.set("cli")
        with writer.collecting() as warnings:
            try:
                return await command(args)
            finally:
                for warning in warnings.new():  # committed; what followed the commit point failed
                    print(f"warning: {warning}", file=sys.stderr)

    return run_in_cli_words


COMMANDS = {
    name: _in_cli_words(command)
    for name, command in {
        "load": cmd_load,
        "status": cmd_status,
        "revise": cmd_revise,
        "explain": cmd_explain,
        "recall": cmd_recall,
        "undo": cmd_undo,
        "check": cmd_check,
        "resolve": cmd_resolve,
    }.items()
}
