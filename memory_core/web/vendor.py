"""The viewer's vendored browser libraries: the allow-list and where the files live.

The npm project ``ui/`` of a checkout (``ui/package.json`` + lock file) installs
React, ReactDOM and react-force-graph into ``ui/node_modules``; ``make ui`` then
runs this file (``python memory_core/web/vendor.py``), which copies exactly the
allow-listed UMD builds into ``memory_core/web/static/vendor/`` with
``THIRD_PARTY_LICENSES.txt`` (the licence of every npm package in ui/'s lock file:
the builds bundle them). That folder is committed and is package data, so a clone,
an sdist, a wheel and ``pip install`` serve the viewer with no npm and no checkout;
``make ui`` refreshes it after ui/package.json changes. The server looks there
first and falls back to ``ui/node_modules`` in a checkout.

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
LICENSES = "THIRD_PARTY_LICENSES.txt"  # beside the builds: the licences of what they bundle
FIX = (
    "memory_core/web/static/vendor/ is committed and ships in the package; in a checkout that lacks it, run "
    "`make ui` (npm ci in ui/, then copies the builds there)"
)


def vendor_file(
    name: str, vendor_dir: Path = VENDOR_DIR, node_modules: Path = NODE_MODULES
) -> Optional[Path]:
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
        if stale.name not in VENDOR and stale.name != LICENSES and (stale.is_file() or stale.is_symlink()):
            stale.unlink()
    copied = []
    for name, rel in VENDOR.items():
        target = vendor_dir / name
        shutil.copyfile(node_modules / rel, target)
        copied.append(target)
    (vendor_dir / LICENSES).write_text(licences(node_modules), encoding="utf-8")
    copied.append(vendor_dir / LICENSES)
    return copied


# force-graph (inside the react-force-graph-2d build) injects its CSS as <style> elements
# (rollup's styleInject: an empty element is appended, then its text); the page's
# Content-Security-Policy allows exactly those by hash (style_hashes), so no style is refused
STYLED = "react-force-graph-2d.min.js"
STYLE_INJECT = r'type="text/css".{0,400}?\}\}\("((?:[^"\\]|\\.)*)"'


def injected_styles(path: Optional[Path] = None) -> list[str]:
    """The CSS texts the vendored graph build injects as <style> elements (the empty text
    first: each element is appended empty before its text is set). [] when the build is
    not there."""
    import json
    import re

    path = path or vendor_file(STYLED)
    if path is None:
        return []
    source = path.read_text(encoding="utf-8", errors="replace")
    found = [json.loads(f'"{m.group(1)}"') for m in re.finditer(STYLE_INJECT, source, re.S)]
    return [""] + found if found else []


def style_hashes(path: Optional[Path] = None) -> list[str]:
    """CSP hash sources (``'sha256-...'``) of :func:`injected_styles`."""
    import base64
    import hashlib

    return [
        f"'sha256-{base64.b64encode(hashlib.sha256(css.encode('utf-8')).digest()).decode('ascii')}'"
        for css in injected_styles(path)
    ]


def licences(node_modules: Path = NODE_MODULES) -> str:
    """Every npm package installed in ``node_modules`` (what the builds are made of), with
    its version, declared licence and its licence file's text (or, when the package ships
    none, its declared licence and copyright holder)."""
    import json

    parts = [
        "Third-party software in the viewer's vendored builds (memory_core/web/static/vendor/).",
        "react.production.min.js, react-dom.production.min.js and react-force-graph-2d.min.js are the",
        "unmodified UMD builds of the npm packages below; the react-force-graph-2d build bundles its",
        "dependencies. Generated by memory_core/web/vendor.py from ui/node_modules.",
        "",
    ]
    manifests = sorted(node_modules.glob("*/package.json")) + sorted(node_modules.glob("@*/*/package.json"))
    for manifest in manifests:
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        folder = manifest.parent
        texts = [
            p
            for p in sorted(folder.iterdir())
            if p.is_file() and p.name.lower().startswith(("license", "licence"))
        ]
        author = meta.get("author")
        if isinstance(author, dict):
            author = author.get("name")
        parts += [
            "=" * 78,
            f"{meta.get('name')} {meta.get('version')}  (license: {meta.get('license')})",
            f"{meta.get('homepage') or ''}".strip(),
            "-" * 78,
        ]
        if texts:
            parts += [texts[0].read_text(encoding="utf-8", errors="replace").strip()]
        else:
            parts += [
                f"The npm package ships no licence file; it declares the {meta.get('license')} licence"
                + (f", copyright {author}." if author else ".")
            ]
        parts.append("")
    return "\n".join(parts) + "\n"


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
