"""An unexpected error is one line on stderr naming the error and the log file that
holds its full traceback (in the data root), exit 1 — never a traceback on screen.

The error is real: the CLI's own entry point runs with the loader replaced by one
that raises ``KeyError('E1')`` (what a cross-file load used to do)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import forkserver
from harness import clean_env

REPO = Path(__file__).resolve().parents[2]

DRIVER = """
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
