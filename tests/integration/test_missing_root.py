"""A mistyped root is bad input: the read-only commands (and undo, resolve) on a data root
that does not exist exit 2 with "no data root at ..." and create nothing; the Python API
does the same with ``create=False``. In this process: the refusal comes before cognee is
configured, so no other root is disturbed. Also: the installed script calls itself
``falsify`` in its usage line."""

from __future__ import annotations

import contextlib
import io
import sys

import pytest

from memory_core import Falsify, InputError
from memory_core.shell import cli

COMMANDS = [
    ["status"],
    ["status", "--json"],
    ["explain", "K"],
    ["recall"],
    ["check"],
    ["undo"],
    ["resolve", "E1", "--winner", "E2"],
]


def run_main(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue()


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a))
def test_read_only_command_on_a_missing_root_exits_2_and_creates_nothing(tmp_path, argv):
    missing = tmp_path / "typo" / "root"
    code, err = run_main(["--root", str(missing), *argv])
    assert code == 2, err
    assert f"no data root at {missing}" in err
    assert not (tmp_path / "typo").exists()


async def test_open_without_create_refuses_a_missing_root(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(InputError, match="no data root at"):
        await Falsify.open(missing, create=False)
    assert not missing.exists()


def test_installed_script_usage_says_falsify(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/falsify", "--help"])
    assert cli.build_parser().format_usage().startswith("usage: falsify")
    monkeypatch.setattr(sys, "argv", ["main.py", "--help"])
    assert cli.build_parser().format_usage().startswith("usage: python main.py")
