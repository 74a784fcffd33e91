"""A mistyped root is bad input: the read-only commands (and undo, resolve) on a data root
that does not exist exit 2 with "no data root at ..." and create nothing; the Python API
does the same with ``create=False``. In this process: the refusal comes before cognee is
configured, so no other root is disturbed. That is the embedded backend's rule (the root
holds the beliefs); on PostgreSQL the database holds them and a new local root reads a shared
database (``PostgresBackend.beliefs_in_root``; a second data root on one database is
tests/system/test_postgres_multiprocess.py's reader), checked here in a process of its own.
A PostgreSQL database that cannot be reached, or a malformed URL for one, is refused naming
it (never its password) and nothing is created (a process of its own: ``--database`` sets the
process's backend). Also: the installed script calls itself ``falsify`` in its usage line."""

from __future__ import annotations

import contextlib
import io
import json
import sys

import pytest

import forkserver
from conftest import BACKEND, REPO, clean_env
from harness import EXAMPLE, run_cli
from memory_core import Falsify, InputError
from memory_core.shell import cli

# on PostgreSQL a missing local root is no refusal: the beliefs live in the database
embedded_only = pytest.mark.skipif(
    BACKEND == "postgres",
    reason="the embedded backend's rule; PostgreSQL: test_a_new_root_reads_the_database",
)

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


@embedded_only
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a))
def test_read_only_command_on_a_missing_root_exits_2_and_creates_nothing(tmp_path, argv):
    missing = tmp_path / "typo" / "root"
    code, err = run_main(["--root", str(missing), *argv])
    assert code == 2, err
    assert f"no data root at {missing}" in err
    assert not (tmp_path / "typo").exists()


@embedded_only
async def test_open_without_create_refuses_a_missing_root(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(InputError, match="no data root at"):
        await Falsify.open(missing, create=False)
    assert not missing.exists()


# a PostgreSQL server nobody listens for (port 1), and a URL whose port is no number
UNUSABLE_DATABASES = [
    ("postgresql://alice:Secr3tPw9@127.0.0.1:1/db", "DatabaseUnavailable", 7, "database 127.0.0.1:1/db"),
    (
        "postgresql://alice:Secr3tPw9@127.0.0.1:notaport/db",
        "InputError",
        2,
        "127.0.0.1:notaport/db is malformed",
    ),
]

OPEN_WITH_DATABASE = """
import asyncio, json, sys
from memory_core import Falsify, FalsifyError
async def main():
    try:
        await Falsify.open(sys.argv[1], database=sys.argv[2])
    except FalsifyError as error:
        print(json.dumps([type(error).__name__, error.exit_code, str(error)]))
asyncio.run(main())
"""


@pytest.mark.parametrize("url, kind, code, words", UNUSABLE_DATABASES, ids=("unreachable", "malformed"))
def test_a_database_that_cannot_be_used_is_refused_naming_it_and_creates_nothing(
    tmp_path, url, kind, code, words
):
    root = tmp_path / "new"
    proc = run_cli(root, "--database", url, "load", str(EXAMPLE))
    err = proc.stderr.decode()
    assert proc.returncode == code, err
    assert words in err and "Secr3tPw9" not in err and "internal error" not in err, err
    assert not root.exists()
    env = clean_env()
    env.pop("FALSIFY_DATABASE_URL", None)
    opened = forkserver.run(
        [sys.executable, "-c", OPEN_WITH_DATABASE, str(root), url],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(opened.stdout.strip().splitlines()[-1])[:2] == [kind, code], opened.stderr[-2000:]
    assert words in opened.stdout and "Secr3tPw9" not in opened.stdout + opened.stderr
    assert not root.exists()


@pytest.mark.skipif(BACKEND != "postgres", reason="PostgreSQL backend only (FALSIFY_TEST_BACKEND=postgres)")
def test_a_new_root_reads_the_database(tmp_path):
    """On PostgreSQL the read-only commands on a data root that does not exist read the database
    (another machine's new root on a shared database): status answers what a load through another
    root stored, exit 0."""
    import pg_server

    loader, reader = tmp_path / "loader", tmp_path / "reader"
    env = dict(clean_env(), **pg_server.root_env(loader, fresh=True))
    assert run_cli(loader, "load", str(EXAMPLE), env=env).returncode == 0
    proc = run_cli(reader, "status", "--json", env=env)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert {n["key"] for n in json.loads(proc.stdout)["nodes"]} >= {"Q", "E_qa", "K"}


def test_installed_script_usage_says_falsify(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/falsify", "--help"])
    assert cli.build_parser().format_usage().startswith("usage: falsify")
    monkeypatch.setattr(sys, "argv", ["main.py", "--help"])
    assert cli.build_parser().format_usage().startswith("usage: python main.py")
