"""The installed ``falsify`` command: what ``main.py`` does in a checkout. A server running
on the command's root answers it (``memory_core.shell.remote``), else a child of the warm
launcher runs it (``memory_core.shell.launcher``), else this process does
(``memory_core.shell.cli.main``)."""

from __future__ import annotations

import sys

from memory_core.shell import launcher, remote


def main() -> int:
    answered = remote.forward(sys.argv[1:])
    if answered is not None:
        return answered
    outcome = launcher.launch(sys.argv[1:])
    if outcome.code is not None:
        return outcome.code
    from memory_core.shell.cli import main as run_here

    return run_here(ran={"by": None, "reason": outcome.reason})


def console() -> int:
    """``main`` for the console script: Ctrl-C before the command's own handling answers as
    the command does (one line, exit 130), not with a traceback."""
    try:
        return main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(console())
