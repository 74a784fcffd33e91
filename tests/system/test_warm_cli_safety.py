"""The warm CLI never runs a command twice, and forwards exactly the parser's commands.

* A server killed after its commit point (``FALSIFY_FAULT_AT=committed``) while it
  answers a forwarded ``undo``: the client reports the failure (exit 1, "the server may
  have applied it: run status") instead of running ``undo`` again cold; the log holds
  one undo, of the revision only, and the load is intact.
* ``load -`` on a root whose ``server.json`` names another root's live server runs cold,
  with the standard input it already read.
* Every command of the CLI's parser is either forwarded or exempted (``resolve`` too);
  ``--database`` in either spelling is never answered by a server of another store.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import signal
import subprocess
import sys

import pytest

from backend_helpers import POSTGRES, log_entries
from conftest import REPO, SEED, cli, clean_env
from harness import copy_root, nodes_by_key, revised_root
from test_warm_cli import start_serve


def remote_module():
    """remote.py as main.py loads it: on its own, standard library only."""
    spec = importlib.util.spec_from_file_location(
        "falsify_remote_test", REPO / "memory_core" / "shell" / "remote.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_parser_command_is_forwarded_or_exempted():
    from memory_core.shell import cli as cli_module

    remote = remote_module()
    parser = cli_module.build_parser()
    commands = set()
    for action in parser._subparsers._group_actions:  # the sub-command action
        commands |= set(action.choices)
    assert commands == remote.FORWARDED | remote.NOT_FORWARDED, (
        "a command of the parser is neither forwarded to a running server nor exempted: "
        f"{sorted(commands ^ (remote.FORWARDED | remote.NOT_FORWARDED))}"
    )
    assert not remote.FORWARDED & remote.NOT_FORWARDED
    assert remote.FORWARDED <= set(cli_module.COMMANDS) and remote.WRITERS <= remote.FORWARDED
    assert "resolve" in remote.FORWARDED and "resolve" in remote.WRITERS


def test_a_database_option_is_compared_as_the_variable_is():
    """``--database URL`` is forwarded like ``FALSIFY_DATABASE_URL``: the server answers it when
    it holds that database, and a command on another database (or backend) differs in its
    store settings, which the server never answers (it runs cold)."""
    remote = remote_module()
    for argv in (
        ["--database", "postgresql://u@h/db", "status"],
        ["--database=postgresql://u@h/db", "status"],
    ):
        assert remote._scan(argv) == (None, "status"), argv
        env = remote._with_database({}, argv)
        assert env == {"FALSIFY_BACKEND": "postgres", "FALSIFY_DATABASE_URL": "postgresql://u@h/db"}
        digests = remote.settings_digests(env, "s")
        same = remote.settings_digests(
            {"FALSIFY_BACKEND": "postgres", "FALSIFY_DATABASE_URL": "postgresql://u@h/db"}, "s"
        )
        other = remote.settings_digests(
            {"FALSIFY_BACKEND": "postgres", "FALSIFY_DATABASE_URL": "postgresql://u@h/other"}, "s"
        )
        assert digests == same and digests != other and digests != remote.settings_digests({}, "s")
    assert remote._scan(["--root", "r", "resolve", "E1", "--winner", "E2"]) == ("r", "resolve")


def test_the_client_reads_the_typed_settings_and_imports_nothing_heavy(tmp_path):
    """remote.py loaded on its own (as main.py does) reads FALSIFY_HOME and FALSIFY_NO_SERVER
    with store/settings.py's parser, and leaves nothing of memory_core (nor pydantic, cognee)
    imported; a value config cannot parse is not an error here: forward says "run it here"
    (where cli.main reports it, exit 2)."""
    code = (
        "import importlib.util, json, sys\n"
        "spec = importlib.util.spec_from_file_location('falsify_remote', "
        f"{str(REPO / 'memory_core' / 'shell' / 'remote.py')!r})\n"
        "remote = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(remote)\n"
        "try:\n"
        "    settings = remote._settings()\n"
        "    seen = [settings.home, settings.no_server]\n"
        "except ValueError as error:\n"
        "    seen = [type(error).__name__, str(error)]\n"
        "answered = remote.forward(['status'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('memory_core', 'pydantic', 'cognee', 'dotenv'))\n"
        "print(json.dumps({'seen': seen, 'answered': answered, 'heavy': heavy}))\n"
    )

    def client(**env):
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=clean_env(**env),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    home = str(tmp_path / "home")
    assert client(FALSIFY_HOME=home, FALSIFY_NO_SERVER="yes") == {
        "seen": [home, True],
        "answered": None,
        "heavy": [],
    }
    assert client(FALSIFY_HOME=" ", FALSIFY_NO_SERVER="0") == {
        "seen": [None, False],
        "answered": None,
        "heavy": [],
    }
    bad = client(FALSIFY_NO_SERVER="sometimes")
    assert bad["seen"][0] == "SettingsError" and "FALSIFY_NO_SERVER" in bad["seen"][1], bad
    assert bad["answered"] is None and bad["heavy"] == [], bad


@pytest.fixture(scope="module")
def revised(tmp_path_factory):
    return revised_root(tmp_path_factory, "warm-safety")


@pytest.mark.slow
@pytest.mark.skipif(POSTGRES, reason="start_serve runs the embedded backend")
def test_a_server_killed_after_committing_is_not_asked_twice(revised, monkeypatch):
    work, r1 = revised
    root = copy_root(r1, work / "killed")
    monkeypatch.setattr(
        "test_warm_cli.clean_env", lambda **extra: clean_env(FALSIFY_FAULT_AT="committed", **extra)
    )
    server = start_serve(root)
    try:
        undo = cli(root, "undo")
        server.wait(60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(60)
    assert server.returncode == -signal.SIGKILL  # the fault hook killed it right after the commit point
    assert undo.returncode == 1, (undo.returncode, undo.stdout, undo.stderr)
    assert "the server may have applied the undo: run status" in undo.stderr, undo.stderr
    assert "undid" not in undo.stdout
    entries = log_entries(root)
    assert [(e["epoch"], e["kind"], e.get("undoes")) for e in entries] == [
        (1, "load", None),
        (2, "revise", None),
        (3, "undo", 2),
    ]
    # the root is whole: the load is there, the revision reverted; the stale server.json is ignored
    status = cli(root, "status", "--json")
    assert status.returncode == 0, status.stderr
    nodes = nodes_by_key(json.loads(status.stdout))
    assert {"Q", "A", "B", "C", "E_qa", "E_email", "K"} <= set(nodes)
    assert nodes["E_qa"]["state"] == "alive" and nodes["K"]["state"] == "alive"


@pytest.mark.slow
@pytest.mark.skipif(POSTGRES, reason="start_serve runs the embedded backend")
def test_load_from_stdin_on_a_root_served_by_another_roots_server_runs_cold(revised):
    work, r1 = revised
    served = copy_root(r1, work / "served")
    other = work / "other"
    server = start_serve(served)
    try:
        other.mkdir()
        shutil.copy(served / "server.json", other / "server.json")  # a copied root, pointing at a live server
        loaded = cli(other, "load", "-", "--json", input=SEED.read_text())
        assert loaded.returncode == 0, loaded.stderr
        assert "K" in json.loads(loaded.stdout)["added"]
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(180)  # a wait, not a measure: a loaded machine stops it slowly
    assert [e["kind"] for e in log_entries(other)] == ["load"]
    assert [e["kind"] for e in log_entries(served)] == ["load", "revise"]  # the server ran nothing


def test_the_warm_cli_carries_what_the_cold_path_takes():
    """``load -`` reads up to the cold path's file limit and one byte more (so a larger input is
    refused by the server as the cold path refuses it), and the server takes that in base64."""
    import base64
    import json

    from memory_core.core.investigation import MAX_FILE
    from memory_core.shell.remote import LOAD_LIMIT
    from memory_core.web.app import CLI_MAX_BODY

    assert LOAD_LIMIT == MAX_FILE  # remote.py is loaded on its own (standard library only): a copy
    body = json.dumps(
        {"argv": ["load", "-"], "cwd": "/" * 4096, "stdin": base64.b64encode(b"x" * 3).decode()}
    )
    assert len(base64.b64encode(b"x" * (LOAD_LIMIT + 1))) + len(body) < CLI_MAX_BODY
