"""FALSIFY's annotations are part of its API: ``memory_core/py.typed`` (PEP 561) lets a
type checker use them, and mypy (pinned alike in requirements.txt, requirements.lock and
pyproject's test extra) checks tests/typed/client.py clean and reports every marked line
of tests/typed/mistakes.py. tests/system/test_packaging.py runs the same check on the installed
wheel, where only py.typed makes mypy read the package. The package's own modules listed in
tests/typed/checked.txt are checked clean too (as ``make lint`` checks them)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TYPED = REPO / "tests" / "typed"
CHECKED = TYPED / "checked.txt"  # the package's paths mypy checks clean (its header says what the list means)


def checked_paths() -> list[Path]:
    """The paths tests/typed/checked.txt lists (comments and blank lines left out)."""
    lines = (line.split("#", 1)[0].strip() for line in CHECKED.read_text().splitlines())
    return [REPO / line for line in lines if line]


def mypy(
    *files: Path,
    python: str | None = None,
    cwd: Path | None = None,
    mypypath: Path | None = None,
    cache: Path | None = None,
):
    """mypy on ``files``; with ``cache`` incremental, in that cache directory (the session's checks
    share one: pydantic is checked once; mypy rechecks any module whose source differs from it)."""
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    if mypypath is not None:
        env["MYPYPATH"] = str(mypypath)
    args = [sys.executable, "-m", "mypy", "--config-file", str(TYPED / "mypy.ini")]
    if cache is not None:
        args += ["--incremental", "--cache-dir", str(cache)]
    if python:
        args += ["--python-executable", python]
    return subprocess.run(
        args + [str(f) for f in files], cwd=cwd or REPO, env=env, capture_output=True, text=True, timeout=600
    )


def marked_lines(path: Path) -> set[int]:
    return {i for i, line in enumerate(path.read_text().splitlines(), 1) if "# MISTAKE" in line}


def check_report(proc) -> None:
    """client.py is clean; each MISTAKE line of mistakes.py, and only those, is an error."""
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert not [e for e in errors if "client.py" in e], proc.stdout
    reported = {int(m.group(1)) for e in errors for m in [re.search(r"mistakes\.py:(\d+): error", e)] if m}
    assert reported == marked_lines(TYPED / "mistakes.py"), proc.stdout + proc.stderr


def test_mypy_is_pinned_alike_everywhere():
    def pin(text: str):
        found = re.findall(r'"?mypy==([0-9][^"\s,]*)', text)
        assert len(found) == 1, found
        return found[0]

    versions = {
        name: pin((REPO / name).read_text())
        for name in ("requirements.txt", "requirements.lock", "pyproject.toml")
    }
    assert len(set(versions.values())) == 1, versions
    from importlib.metadata import version

    assert version("mypy") == versions["requirements.txt"]


def test_py_typed_is_package_data():
    assert (REPO / "memory_core" / "py.typed").is_file()
    assert '"memory_core" = ["py.typed"]' in (REPO / "pyproject.toml").read_text()


def test_mypy_checks_a_client_against_the_public_api(tmp_path, mypy_cache):
    """Against a checkout: MYPYPATH names it (docs/python-api.md, "Type checking")."""
    proc = mypy(TYPED / "client.py", TYPED / "mistakes.py", cwd=tmp_path, mypypath=REPO, cache=mypy_cache)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # 1: type errors found (2 would be a crash)
    check_report(proc)


def test_mypy_sees_the_package_this_environment_installed(tmp_path, mypy_cache):
    """Against the installed package, as a host program's own mypy run finds it: no MYPYPATH,
    from a directory outside the checkout, with this interpreter's site-packages (the
    editable install of ``make setup`` is a path entry mypy follows; tests/system/test_packaging.py
    checks a wheel the same way)."""
    proc = mypy(
        TYPED / "client.py", TYPED / "mistakes.py", python=sys.executable, cwd=tmp_path, cache=mypy_cache
    )
    assert "Cannot find implementation or library stub" not in proc.stdout, (
        "mypy cannot see memory_core in this environment: an editable install in setuptools' default mode "
        "(an import hook); reinstall with `make setup` (editable_mode=compat)\n" + proc.stdout
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    check_report(proc)


def test_the_listed_packages_type_check(mypy_cache):
    """Every module of tests/typed/checked.txt is mypy-clean (its own errors, not only its API's)."""
    paths = checked_paths()
    assert paths and not [p for p in paths if not p.exists()], paths
    proc = mypy(*paths, cache=mypy_cache)
    assert proc.returncode == 0 and "Success" in proc.stdout, proc.stdout + proc.stderr


def test_make_lint_checks_the_same_list():
    """``make lint`` reads the list from the same file (one list, written once)."""
    assert "tests/typed/checked.txt" in (REPO / "Makefile").read_text()
