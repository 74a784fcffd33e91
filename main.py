"""FALSIFY entry point: ``python main.py --help``."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SHELL = Path(__file__).resolve().parent / "memory_core" / "shell"


def _standalone(name: str, file: str) -> ModuleType:
    """A module of memory_core/shell loaded on its own, standard library only (nothing heavy,
    and no ``memory_core`` package imported)."""
    spec = importlib.util.spec_from_file_location(name, SHELL / file)
    if spec is None or spec.loader is None:  # a .py file always has its loader
        raise ImportError(f"cannot load {SHELL / file}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answered_by_a_server():
    """The warm CLI: when a FALSIFY server runs on this command's root, it answers
    (memory_core/shell/remote.py, the client, and the settings parser it reads). None: no
    server; run the command here."""
    return _standalone("falsify_remote", "remote.py").forward(sys.argv[1:])


def launched():
    """The launcher: the command runs in a child of this user's warm launcher
    (memory_core/shell/launcher.py), which starts itself if none runs. Its ``code`` is None
    when the command runs here (its ``reason`` says why)."""
    return _standalone("falsify_launcher", "launcher.py").launch(sys.argv[1:])


def run() -> int:
    code = answered_by_a_server()
    ran = None
    if code is None:
        outcome = launched()
        code, ran = outcome.code, {"by": None, "reason": outcome.reason}
    if code is None:
        from memory_core.shell.cli import main

        code = main(ran=ran)
    return code


if __name__ == "__main__":
    try:
        sys.exit(run())
    except KeyboardInterrupt:  # Ctrl-C before the command's own handling: as the command answers it
        print("interrupted", file=sys.stderr)
        sys.exit(130)
