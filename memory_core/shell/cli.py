"""Command line: ``python main.py [--root DIR] COMMAND ...``.

The entry point: parse the command line, let a server running on the root answer it
(the warm CLI's client, ``memory_core.shell.remote``), else run it in this process. The
parser, the commands and their exit codes are in ``memory_core.shell.commands`` (shared
with the server side of the warm CLI, ``memory_core.shell.warm_server``); the names
callers use (``main``, ``build_parser``, ``COMMANDS``, ``run``, ``internal_error``, the
``EXIT_*`` codes) are importable from here too.

Exit codes: ``memory_core.shell.commands`` (also in docs/guarantees.md).
"""

from __future__ import annotations

import os
import sys

from memory_core.core.errors import VOCABULARY, FalsifyError, error_message
from memory_core.shell import commands, remote
from memory_core.shell.commands import (
    COMMANDS,
    EXIT_JUDGE,  # noqa: F401
    EXIT_OK,
    build_parser,
    run,
)
from memory_core.shell.demo import run_demo, run_session
from memory_core.shell import warm_server
from memory_core.shell.warm_server import run_command
from memory_core.store import settings
from memory_core.store.data_root import (
    claim_process,
    llm_key_configured,
    load_dotenv_file,
    resolve_root,
    use_database,
)
from memory_core.web.server import run_server


def main(argv=None, ran=None) -> int:
    """``python main.py`` / ``falsify`` (through ``memory_core.shell.entry``): run the command
    in this process. Errors and notes name the CLI's flags (memory_core.core.errors.render)
    for the whole command, and only for it. ``ran``: how this process came to run it
    (``commands.RAN``: the launcher's child, or cold and why)."""
    commands.RAN.clear()
    commands.RAN.update(ran or {})
    token = VOCABULARY.set("cli")
    try:
        return _main(argv)
    finally:
        VOCABULARY.reset(token)


def _main(argv=None) -> int:
    os.umask(0o077)  # the data root is private: what this process creates is its owner's only
    claim_process()  # FALSIFY's own process: cognee settings inherited from the shell are the root's to set
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "database", None):
            use_database(args.database)
        settings.reload()  # this command's settings: the environment it was started with (and --database)
    except FalsifyError as error:  # a FALSIFY_* value that does not parse: exit 2, naming it
        print(error_message(error), file=sys.stderr)
        return error.exit_code
    answered = None if args.cold else remote.forward(args)  # a server running on this root answers it
    if answered is not None:
        return answered
    try:
        if load_dotenv_file():  # .env added settings (it never overrides the environment): read them again
            settings.reload()
    except FalsifyError as error:
        print(error_message(error), file=sys.stderr)
        return error.exit_code
    if args.demo or args.session:
        if args.demo:
            return run_demo(args.root, keep=args.keep)
        return run(run_session(args.session, args.root), args.root)
    if args.command is None:
        if not llm_key_configured(settings.current()):
            print(
                "FALSIFY runs offline by default, no key needed:\n"
                "  python main.py --demo          the two-session demo (offline, deterministic judge pin)\n"
                "  python main.py --help          every command\n"
                "For LLM judging and LLM answers, set LLM_API_KEY (and optionally LLM_PROVIDER, LLM_MODEL,\n"
                "LLM_ENDPOINT) in the environment or in .env (see .env.template)."
            )
            return EXIT_OK
        return run_demo(args.root, keep=args.keep)
    if args.command in ("serve", "mcp"):  # the settings a forwarded command must share with this server
        warm_server.SETTINGS_ENV.clear()
        warm_server.SETTINGS_ENV.update(os.environ)
    if args.command == "serve":
        return serve(args)
    if args.command == "mcp":
        from memory_core.mcp.server import serve_stdio  # the MCP SDK costs ~1.4 s: only for this command
        from memory_core.web.server import serve_alongside

        root = resolve_root(args.root, settings.current())
        return run(
            serve_stdio(
                args.root,
                alongside=lambda gate, stop: serve_alongside(
                    gate, root, run_command, stop, viewer=args.viewer
                ),
            ),
            args.root,
            server=True,
        )
    return run(COMMANDS[args.command](args), args.root)


def serve(args) -> int:
    return run_server(args.root, args.host, args.port, token=args.token, mcp=args.mcp, cli=run_command)
