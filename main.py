"""FALSIFY entry point: ``python main.py --help``."""

import importlib.util
import sys
from pathlib import Path


def answered_by_a_server():
    """The warm CLI: when a FALSIFY server runs on this command's root, it answers, before
    anything heavy is imported (memory_core/shell/remote.py, the client, is standard library
    only and loaded on its own, as is the settings parser it reads). None: no server; run
    the command here."""
    spec = importlib.util.spec_from_file_location(
        "falsify_remote", Path(__file__).resolve().parent / "memory_core" / "shell" / "remote.py")
    remote = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(remote)
    return remote.forward(sys.argv[1:])


if __name__ == "__main__":
    code = answered_by_a_server()
    if code is None:
        from memory_core.shell.cli import main

        code = main()
    sys.exit(code)
