"""The README is a short tour and the reference is the docs site: the README stays under
300 lines and says how to run the tests, every link it makes to a file of the repository
resolves, every page in docs/ is in mkdocs.yml's nav (and every nav entry exists), and
the site builds with --strict (a broken link or anchor fails it), as `make docs` runs it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_is_short_and_names_the_commands():
    lines = README.splitlines()
    assert len(lines) < 300, f"README.md has {len(lines)} lines"
    for command in ("make demo", "make test", "make test-fast", "make docs"):
        assert command in README, command


def test_readme_links_resolve():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert local, "the README links no docs page"
    missing = [t for t in local if not (REPO / t).exists()]
    assert not missing, missing


def nav_files(config: str) -> list[str]:
    return re.findall(r":\s*([\w./-]+\.md)\s*$", config, flags=re.M)


def test_every_page_is_in_the_nav():
    listed = nav_files((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = sorted(p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md"))
    assert sorted(listed) == pages


def test_the_site_builds_strictly(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "python-api.html").exists()
