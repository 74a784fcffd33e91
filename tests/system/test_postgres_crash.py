"""A crash-trial sample on PostgreSQL: the real ``revise`` SIGKILLed by the fault
hook (``FALSIFY_FAULT_AT``) at each step of its write, then the next process opens the
database, which recovers the intent left in ``falsify_intent``. Nothing is half-written:
``check`` is clean, no intent is left, and the graph (``status``) and the vectors are
exactly as before the revision, or, when the kill came after the commit point, exactly as
after it. Runs in the postgres session of ``make test`` (each root has its own database,
copied from the loaded example's with CREATE DATABASE ... TEMPLATE).
"""

from __future__ import annotations

import json

import pytest

from conftest import BACKEND
from harness import DEMO_FACT, clean_env, copy_root, loaded_root, run_batch, run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        BACKEND != "postgres", reason="PostgreSQL backend only (FALSIFY_TEST_BACKEND=postgres)"
    ),
]

# the steps the pinned demo revision passes (it adds a node and its edges, updates states,
# forgets K); "committed" is after the commit point
STEPS = ("journalled", "nodes", "node_edges", "updates", "del_nodes", "committed")
READ = [
    {"name": "check", "op": "cli", "argv": ["check", "--json"]},
    {"name": "status", "op": "cli", "argv": ["status", "--json"]},
    {"name": "vectors", "op": "vector_keys"},
]


def intents_left(root) -> int:
    import pg_server

    url = pg_server.root_env(root)["FALSIFY_DATABASE_URL"]
    return pg_server._admin_sql("SELECT count(*) FROM falsify_intent", url)[0][0]


def read(root, work) -> dict:
    results = {r["name"]: r for r in run_batch(root, READ, work)}
    assert results["check"]["code"] == 0, results["check"]["stderr"][-2000:]
    return {
        "check": json.loads(results["check"]["stdout"]),
        "status": json.loads(results["status"]["stdout"]),
        "vectors": results["vectors"]["keys"],
    }


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    base = loaded_root(tmp_path_factory)
    work = tmp_path_factory.mktemp("pgcrash")
    before = read(copy_root(base, work / "before"), work / "read-before")
    after_root = copy_root(base, work / "after")
    proc = run_cli(after_root, "revise", DEMO_FACT, "--target", "E_qa", "--json")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    after = read(after_root, work / "read-after")
    assert before["status"] != after["status"]
    return base, work, before, after


@pytest.mark.parametrize("step", STEPS)
def test_sigkill_mid_revision_leaves_nothing_half_written(references, step):
    base, work, before, after = references
    root = copy_root(base, work / f"crash-{step}")
    proc = run_cli(
        root, "revise", DEMO_FACT, "--target", "E_qa", "--json", env=clean_env(FALSIFY_FAULT_AT=step)
    )
    assert proc.returncode == -9, proc.stderr.decode(errors="replace")[-2000:]  # killed by the fault hook
    assert intents_left(root) == (0 if step == "committed" else 1)  # killed mid-revision: its intent is there
    now = read(root, work / f"read-{step}")
    assert now["check"]["clean"] is True, now["check"]
    recovered = str(now["check"].get("recovered_at_open") or "")
    if step == "committed":
        assert "rolled back" not in recovered
    else:
        assert "rolled back the unfinished change of epoch 2" in recovered, now["check"]
    assert intents_left(root) == 0
    expected = after if step == "committed" else before
    assert now["status"] == expected["status"]
    assert now["vectors"] == expected["vectors"]
