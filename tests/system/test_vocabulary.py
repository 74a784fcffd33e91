"""Each shell speaks its caller's vocabulary: a message produced once, naming the
argument by its CLI flag, reaches a Python caller with the keyword (``target='X'``),
an MCP client with the tool argument (tests/system/test_mcp_strict.py) and the CLI with the
flag; a note says "nothing recorded" once."""

from __future__ import annotations

import contextlib
import io

import pytest

from conftest import seed_with_prefix
from memory_core import InputError
from memory_core.core.errors import render
from memory_core.shell import cli


def test_render_per_vocabulary():
    text = "--target 'NOPE': no evidence; give the fact as --triple 'S|P|O' or --target KEY; --trust: must be a number"
    assert render(text, "cli") == text
    assert render(text, "python") == (
        "target='NOPE': no evidence; give the fact as triple='S|P|O' or target=KEY; trust: must be a number"
    )
    assert render(text, "mcp") == (
        "target 'NOPE': no evidence; give the fact as triple 'S|P|O' or target KEY; trust: must be a number"
    )
    assert (
        render("with --file, put them on each line; --targets", "python")
        == "with --file, put them on each line; --targets"
    )  # not an argument of the API


async def test_python_callers_read_keywords(app, prefix):
    await app.load(seed_with_prefix(prefix))
    with pytest.raises(InputError) as raised:
        await app.revise("The QA report was back-dated.", target=f"{prefix}NOPE")
    assert str(raised.value).startswith(f"target='{prefix}NOPE'") and "--" not in str(raised.value)
    result = await app.revise(
        "Forensic audit: the March QA report was back-dated.", target=f"{prefix}E_qa", dry_run=True
    )
    assert "pinned by target" in result["note"] and "--target" not in result["note"]


def test_the_cli_reads_flags(tmp_path):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["--root", str(tmp_path / "r"), "revise", "a fact", "--trust", "lots"])
    assert code == 2 and "--trust" in err.getvalue(), err.getvalue()
    from memory_core.core.errors import VOCABULARY

    assert VOCABULARY.get() == "python"  # the CLI's vocabulary ended with its command


@pytest.mark.slow
def test_an_empty_root_says_nothing_is_loaded(tmp_path):
    from harness import run_cli

    proc = run_cli(tmp_path / "empty", "revise", "The QA report was back-dated.", "--json")
    assert proc.returncode == 0, proc.stderr
    import json

    result = json.loads(proc.stdout)
    assert result["note"].startswith("nothing loaded yet") and result["epoch"] is None
    assert result["note"].count("nothing recorded") == 1
