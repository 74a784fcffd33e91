"""An unexpected error is one line on stderr naming the error and the log file that
holds its full traceback (in the data root), exit 1 — never a traceback on screen.

The error is real: the CLI's own entry point runs with the loader replaced by one
that raises ``KeyError('E1')`` (what a cross-file load used to do)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import forkserver
from harness import clean_env

REPO = Path(__file__).resolve().parents[2]

DRIVER = """
import subprocess
import sys
from memory_core.ops import load as load_op

async def broken(stores, source):
    raise KeyError('E1')

load_op.load = broken
from memory_core.shell.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_unexpected_error_is_one_line_and_a_log_file(tmp_path):
    root = tmp_path / "root"
    proc = forkserver.run(
        [
            sys.executable,
            "-c",
            DRIVER,
            "--root",
            str(root),
            "load",
            str(REPO / "examples" / "company_x.json"),
        ],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("internal error: KeyError 'E1' (full traceback in "), lines[0]
    log = Path(lines[0].rsplit("full traceback in ", 1)[1].rstrip(")"))
    assert log.parent == root / "logs" and log.is_file()
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "KeyError: 'E1'" in text and "broken" in text
    assert "Traceback" not in proc.stdout and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_reader_that_closes_the_output_early_is_not_an_error(tmp_path, tmp_path_factory):
    """``falsify status | head -1``: the reader's end of the pipe closes before the command has
    written everything. The command exits 141 (a process the closed pipe stopped), says
    nothing on stderr and writes no internal-error log (it used to report a BrokenPipeError)."""
    import os

    from harness import copy_root, loaded_root

    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "r")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        proc = forkserver.run(
            [sys.executable, "main.py", "--root", str(root), "--cold", "status"],
            cwd=REPO,
            env=clean_env(),
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
        )
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == "", proc.stderr
    assert not list((root / "logs").glob("internal-error-*"))
