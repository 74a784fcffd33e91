"""The viewer's vendored browser libraries: the allow-list and where the files live.

The npm project ``ui/`` of a checkout (``ui/package.json`` + lock file) installs
React, ReactDOM and react-force-graph into ``ui/node_modules``; ``make ui`` then
runs this file (``python memory_core/web/vendor.py``), which copies exactly the
allow-listed UMD builds into ``memory_core/web/static/vendor/`` (git-ignored,
package data), so an installed package serves them without any checkout.
The server looks there first and falls back to ``ui/node_modules`` in a checkout.

Standard library only: the Makefile runs it as a plain script, before any
virtual environment or package import.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Optional

# The only files served under /vendor/: name -> path inside node_modules.
VENDOR = {
    "react.production.min.js": "react/umd/react.production.min.js",
    "react-dom.production.min.js": "react-dom/umd/react-dom.production.min.js",
    "react-force-graph-2d.min.js": "react-force-graph-2d/dist/react-force-graph-2d.min.js",
}
STATIC_DIR = Path(__file__).resolve().parent / "static"  # the viewer's own files (package data)
VENDOR_DIR = STATIC_DIR / "vendor"  # the copies made by `make ui` (package data, git-ignored)
NODE_MODULES = Path(__file__).resolve().parents[2] / "ui" / "node_modules"  # a checkout's npm install
FIX = "run `make ui` in the FALSIFY checkout (npm ci in ui/, then copies them into memory_core/web/static/vendor/)"


def vendor_file(name: str, vendor_dir: Path = VENDOR_DIR, node_modules: Path = NODE_MODULES) -> Optional[Path]:
    """The file to serve for ``/vendor/<name>``: the package's copy, else the checkout's
    ``ui/node_modules``; None when neither exists. KeyError for a name not allow-listed."""
    rel = VENDOR[name]
    for candidate in (vendor_dir / name, node_modules / rel):
        if candidate.is_file():
            return candidate
    return None


def missing(vendor_dir: Path = VENDOR_DIR, node_modules: Path = NODE_MODULES) -> list[str]:
    """The allow-listed names that cannot be served."""
    return [name for name in VENDOR if vendor_file(name, vendor_dir, node_modules) is None]


def copy_from_node_modules(node_modules: Path = NODE_MODULES, vendor_dir: Path = VENDOR_DIR) -> list[Path]:
    """Copy exactly the allow-listed files from node_modules into vendor_dir (replacing
    what is there; nothing else is left in it). Raises FileNotFoundError naming a missing one."""
    absent = [str(node_modules / rel) for rel in VENDOR.values() if not (node_modules / rel).is_file()]
    if absent:
        raise FileNotFoundError(f"not in node_modules (run `npm ci` in ui/ first): {', '.join(absent)}")
    vendor_dir.mkdir(parents=True, exist_ok=True)
    for stale in vendor_dir.iterdir():
        if stale.name not in VENDOR and (stale.is_file() or stale.is_symlink()):
            stale.unlink()
    copied = []
    for name, rel in VENDOR.items():
        target = vendor_dir / name
        shutil.copyfile(node_modules / rel, target)
        copied.append(target)
    return copied


def main() -> int:
    try:
        copied = copy_from_node_modules()
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"vendored {len(copied)} files into {VENDOR_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
