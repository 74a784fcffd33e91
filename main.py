"""FALSIFY entry point: ``python main.py --help``."""

import sys

from memory_core.shell.cli import main

if __name__ == "__main__":
    sys.exit(main())
