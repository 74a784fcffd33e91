"""The installable package: ``pip install .`` gives ``import memory_core`` and the
``falsify`` console script, which is exactly ``python main.py``.

The test installs the project (no dependencies: those come from this venv's
site-packages through a .pth file, the same pinned set) into a new venv, from a
copy of the sources, and runs the script from another directory so nothing is
imported from the checkout. pyproject.toml's pins must equal requirements.txt's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pins(text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r'"?([A-Za-z0-9_.\-]+)==([0-9][^"\s,]*)', text)}


def test_pyproject_pins_match_requirements():
    declared = pins((REPO / "pyproject.toml").read_text().split("[project.scripts]")[0].split("[build-system]")[1]
                    .split("[project]")[1])
    required = pins((REPO / "requirements.txt").read_text())
    assert declared, "no pins found in pyproject.toml"
    for name, version in declared.items():
        assert required.get(name) == version, f"{name}: pyproject {version}, requirements.txt {required.get(name)}"


@pytest.mark.slow
def test_pip_install_gives_the_falsify_command(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv", ".git", "node_modules", ".falsify*", "__pycache__",
                                                             "*.egg-info", "build"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    (site / "_falsify_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                              "--no-deps", "--no-build-isolation", str(src)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    help_ = subprocess.run([str(venv / "bin" / "falsify"), "--help"], cwd=elsewhere, capture_output=True, text=True)
    assert help_.returncode == 0, help_.stderr
    assert "revise" in help_.stdout and "--root" in help_.stdout
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import memory_core, sys; print(memory_core.__file__); "
                            "print(sorted(memory_core.__all__)[:3]); from memory_core.store import embedder; "
                            "print(embedder._SHIPPED.is_dir())"], cwd=elsewhere, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    path, _, shipped = where.stdout.splitlines()
    assert str(site) in path, path  # the installed copy, not the checkout
    assert shipped == "True"  # the model's metadata files are package data
