"""Flat memory and bounded disk in a long-lived process: the housekeeping
after each commit (``memory_core.store.backends.housekeeping``) reopens Ladybug's database and
prunes old LanceDB versions without changing any data.

One process (``tests/support/cli_batch.py``) runs revise/undo commands on a copy of the
loaded example root with the housekeeping after EVERY commit: every command
still works (the graph reopened under it), ``check`` finds the stores consistent,
and the vector tables keep only their newest versions -- while the same commands
with pruning off leave a version per write. The memory figures themselves are
measured by ``python -m bench.soak`` (not asserted here).
"""

from __future__ import annotations

import json

import pytest

from harness import DEMO_FACT, clean_env, copy_root, loaded_root, nodes_by_key, run_batch, run_cli, status_of

pytestmark = pytest.mark.slow

STEPS = [
    {"name": "revise1", "op": "cli", "argv": ["revise", DEMO_FACT, "--target", "E_qa", "--json"]},
    {"name": "undo1", "op": "cli", "argv": ["undo", "--json"]},
    {"name": "revise2", "op": "cli", "argv": ["revise", DEMO_FACT, "--target", "E_qa", "--json"]},
    {"name": "undo2", "op": "cli", "argv": ["undo", "--json"]},
    {
        "name": "revise3",
        "op": "cli",
        "argv": ["revise", DEMO_FACT, "--target", "E_qa", "--json"],
        "snapshot": True,
    },
    {"name": "check", "op": "cli", "argv": ["check", "--json"]},
    {"name": "keys", "op": "vector_keys"},
    {"name": "housekeeping", "op": "housekeeping"},
]


def manifests(root) -> dict[str, int]:
    tables = (root / "cognee_system").rglob("*.lance")
    return {
        t.name: len(list((t / "_versions").glob("*.manifest"))) for t in tables if (t / "_versions").is_dir()
    }


def run(tmp_path_factory, name: str, **env):
    base = loaded_root(tmp_path_factory)
    work = tmp_path_factory.mktemp(name)
    root = copy_root(base, work / "root")
    before = manifests(root)
    results = run_batch(root, STEPS, work / "batch", env=clean_env(**env))
    return {r["name"]: r for r in results}, before, manifests(root)


@pytest.fixture(scope="module")
def housekeeping(tmp_path_factory):
    return {
        "on": run(
            tmp_path_factory,
            "housekeeping_on",
            FALSIFY_GRAPH_REOPEN_EVERY="1",
            FALSIFY_VECTOR_PRUNE_EVERY="1",
            FALSIFY_VECTOR_PRUNE_AGE_S="0",
        ),
        "off": run(
            tmp_path_factory,
            "housekeeping_off",
            FALSIFY_GRAPH_REOPEN_EVERY="0",
            FALSIFY_VECTOR_PRUNE_EVERY="0",
        ),
        # a compaction (EXPORT + IMPORT into a new file, swapped in) at every commit after the first
        "compact": run(
            tmp_path_factory,
            "housekeeping_compact",
            FALSIFY_GRAPH_REOPEN_EVERY="1",
            FALSIFY_VECTOR_PRUNE_EVERY="0",
            FALSIFY_GRAPH_COMPACT_RATIO="0.000001",
        ),
    }


def test_reopening_the_graph_after_every_commit_changes_nothing(housekeeping):
    results, _, _ = housekeeping["on"]
    for name in ("revise1", "undo1", "revise2", "undo2", "revise3", "check"):
        assert results[name]["code"] == 0, (name, results[name]["stderr"][-2000:])
    out = json.loads(results["revise3"]["stdout"])
    assert out["refuted"] == ["E_qa"]
    after = nodes_by_key(results["revise3"]["after"]["status"])
    assert after["E_qa"]["state"] == "refuted" and "K" not in after
    assert json.loads(results["check"]["stdout"]).get("ok", True) is not False
    # the same graph and vectors as without housekeeping
    off, _, _ = housekeeping["off"]
    assert results["keys"]["keys"] == off["keys"]["keys"]
    other = nodes_by_key(off["revise3"]["after"]["status"])
    assert {k: (n["state"], n["feedback_weight"]) for k, n in other.items()} == {
        k: (n["state"], n["feedback_weight"]) for k, n in after.items()
    }


def test_old_vector_versions_are_pruned(housekeeping):
    _, _, on = housekeeping["on"]
    _, before_off, off = housekeeping["off"]
    assert on and off
    grew = {t: off[t] - before_off.get(t, 0) for t in off}
    assert max(grew.values()) >= 3, grew  # without pruning, writes leave versions behind
    assert max(on.values()) <= 2, on  # with it, each table keeps its newest version(s)


def test_compacting_the_graph_after_every_commit_changes_nothing(housekeeping):
    """Ladybug has no VACUUM: ``backends.housekeeping.compact_graph`` rewrites its file (EXPORT/IMPORT
    into a new file, checked row for row, swapped in). Doing it after every commit leaves the
    same states, weights and vectors as no housekeeping at all, and ``check`` clean."""
    results, _, _ = housekeeping["compact"]
    for name in ("revise1", "undo1", "revise2", "undo2", "revise3", "check"):
        assert results[name]["code"] == 0, (name, results[name]["stderr"][-2000:])
    stats = results["housekeeping"]["stats"]
    assert stats["graph_compactions"] >= 4, stats  # every commit after the first (which records the size)
    assert json.loads(results["check"]["stdout"]).get("ok", True) is not False
    off, _, _ = housekeeping["off"]
    assert results["keys"]["keys"] == off["keys"]["keys"]
    after = nodes_by_key(results["revise3"]["after"]["status"])
    other = nodes_by_key(off["revise3"]["after"]["status"])
    assert {k: (n["state"], n["feedback_weight"]) for k, n in other.items()} == {
        k: (n["state"], n["feedback_weight"]) for k, n in after.items()
    }
    assert json.loads(results["revise3"]["stdout"])["refuted"] == ["E_qa"]


COMPACT_EVERY_COMMIT = {"FALSIFY_GRAPH_REOPEN_EVERY": "1", "FALSIFY_GRAPH_COMPACT_RATIO": "0.000001"}
_LOADED: dict = {}


@pytest.mark.parametrize("step", ["compact_exported", "compact_imported", "compact_swapped"])
def test_a_compaction_killed_midway_leaves_a_whole_graph(tmp_path_factory, step):
    """SIGKILL inside the graph file's compaction (after the export, after the new file is
    built, right after the swap): the revision had committed before it, so the next process
    sees it whole, ``check`` is clean, and the next compaction clears the debris (a half-built
    ``.compact`` file, an ``.export`` directory); an undo then gives back the loaded state."""
    base = loaded_root(tmp_path_factory)
    root = copy_root(base, tmp_path_factory.mktemp("compact_" + step) / "root")
    databases = root / "cognee_system" / "databases"
    proc = run_cli(
        root,
        "revise",
        DEMO_FACT,
        "--target",
        "E_qa",
        "--json",
        env=clean_env(FALSIFY_FAULT_AT=step, **COMPACT_EVERY_COMMIT),
    )
    assert proc.returncode == -9, proc.stderr.decode(errors="replace")[-2000:]  # killed where asked
    assert (databases / "cognee_graph_ladybug").is_file()
    # the next process (one batch process: status, check, then an undo that compacts again after it)
    steps = [
        {"name": "status", "op": "cli", "argv": ["status", "--json"]},
        {"name": "check", "op": "cli", "argv": ["check", "--json"]},
        {"name": "undo", "op": "cli", "argv": ["undo", "--json"], "env": COMPACT_EVERY_COMMIT},
        {"name": "after", "op": "cli", "argv": ["status", "--json"]},
    ]
    r = {x["name"]: x for x in run_batch(root, steps, root.parent / "batch")}
    assert r["status"]["code"] == 0, r["status"]["stderr"][-2000:]
    assert nodes_by_key(json.loads(r["status"]["stdout"]))["E_qa"]["state"] == "refuted"
    assert r["check"]["code"] == 0, r["check"]["stderr"][-2000:]
    assert json.loads(r["check"]["stdout"]).get("ok", True) is not False
    assert r["undo"]["code"] == 0, r["undo"]["stderr"][-2000:]
    assert not [p.name for p in databases.iterdir() if p.name.endswith((".compact", ".export"))]
    if str(base) not in _LOADED:  # the loaded template's states, read once for the three kill points
        _LOADED[str(base)] = {
            k: (n["state"], n["feedback_weight"]) for k, n in nodes_by_key(status_of(base)).items()
        }
    loaded = _LOADED[str(base)]
    after = nodes_by_key(json.loads(r["after"]["stdout"]))
    assert {k: (n["state"], n["feedback_weight"]) for k, n in after.items()} == loaded
