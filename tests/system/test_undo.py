"""Undo, on the real stores: it reverts the last change completely, and again
reverts the one before.

One batch process (tests/support/cli_batch.py, the real CLI entry point) on a copy of
the loaded example root: revise R1 (pins E_qa: refutes it, supersedes A, kills
and forgets K, promotes B), revise R2 (pins E_email), then undo four times.
``status --json`` (every node's state, weight, epoch, text; every edge with its
properties) after each undo must equal ``status`` before the change it undid;
the vector store must hold exactly the rows it held then, and a vector search
must find the forgotten conclusion K again, at the same distance.
"""

from __future__ import annotations

import json

import pytest

from harness import DEMO_FACT, copy_root, loaded_root, nodes_by_key, run_batch

pytestmark = pytest.mark.slow

R2_FACT = "Discovery showed the Valtec email of 12 January 2021 was fabricated after the recall."
K_TEXT = "Company X knew about the brake-valve defect by March 2021, per its QA report."


def search_k(name):
    return {"name": name, "op": "search", "kind": "conclusion", "text": K_TEXT, "limit": 3}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    base = loaded_root(tmp_path_factory)
    work = tmp_path_factory.mktemp("undo")
    root = copy_root(base, work / "root")
    steps = [
        {"name": "vectors_loaded", "op": "vector_keys"},
        search_k("search_loaded"),
        {
            "name": "r1",
            "op": "cli",
            "argv": ["revise", DEMO_FACT, "--target", "E_qa", "--json"],
            "snapshot": True,
        },
        search_k("search_r1"),
        {"name": "vectors_r1", "op": "vector_keys"},
        {
            "name": "r2",
            "op": "cli",
            "argv": ["revise", R2_FACT, "--target", "E_email", "--json"],
            "snapshot": True,
        },
        {"name": "vectors_r2", "op": "vector_keys"},
        {"name": "undo_r2", "op": "cli", "argv": ["undo", "--json"], "snapshot": True},
        {"name": "vectors_undo_r2", "op": "vector_keys"},
        {"name": "undo_r1", "op": "cli", "argv": ["undo", "--json"], "snapshot": True},
        search_k("search_undo_r1"),
        {"name": "vectors_undo_r1", "op": "vector_keys"},
        {"name": "check_after_undos", "op": "cli", "argv": ["check", "--json"]},
        {"name": "explain_k", "op": "cli", "argv": ["explain", "K", "--json"]},
        {"name": "undo_load", "op": "cli", "argv": ["undo", "--json"], "snapshot": True},
        {"name": "vectors_empty", "op": "vector_keys"},
        {"name": "undo_nothing", "op": "cli", "argv": ["undo", "--json"], "snapshot": True},
        {"name": "undo_nothing_text", "op": "cli", "argv": ["undo"]},
        {"name": "check_end", "op": "cli", "argv": ["check", "--json"]},
    ]
    return {r["name"]: r for r in run_batch(root, steps, work / "batch")}


def ok(r):
    assert r["code"] == 0, f"{r['name']}: exit {r['code']}\n{r['stderr'][-2000:]}"
    return json.loads(r["stdout"]) if r["stdout"].strip().startswith("{") else r["stdout"]


def test_the_revisions_did_what_the_undos_must_revert(run):
    r1, r2 = ok(run["r1"]), ok(run["r2"])
    assert r1["refuted"] == ["E_qa"] and "K" in r1["forgotten"] and r1["epoch"] == 2
    assert r2["refuted"] == ["E_email"] and r2["epoch"] == 3
    assert "K" not in [k for k, _ in run["search_r1"]["keys"]]  # forgotten: gone from the vector store
    assert "K" not in run["vectors_r1"]["keys"]["conclusion"]


def test_undo_reverts_the_last_revision_exactly(run):
    undo = ok(run["undo_r2"])
    assert undo["undone"] == 3 and undo["kind"] == "revise" and undo["fact"] == R2_FACT
    assert run["undo_r2"]["after"]["status"] == run["r2"]["before"]["status"]
    assert run["vectors_undo_r2"]["keys"] == run["vectors_r1"]["keys"]


def test_undo_again_reverts_the_one_before_and_restores_forgotten_nodes(run):
    undo = ok(run["undo_r1"])
    assert undo["undone"] == 2 and undo["fact"] == DEMO_FACT
    assert "K" in undo["restored"] and any(k.startswith("F_") for k in undo["removed"])
    before, after = run["r1"]["before"]["status"], run["undo_r1"]["after"]["status"]
    assert after == before  # states, weights, epochs, texts, edges and their properties
    nodes = nodes_by_key(after)
    assert nodes["K"]["state"] == "alive" and nodes["K"]["epoch"] == 1 and nodes["K"]["confidence"] == 0.8
    assert {(e["type"], e["from"], e["to"]) for e in after["edges"]} >= {("depends_on", "K", "E_qa")}
    # both stores: the vector rows are exactly those before R1, and search finds K again, equally near
    assert run["vectors_undo_r1"]["keys"] == run["vectors_loaded"]["keys"]
    top_before, top_after = run["search_loaded"]["keys"][0], run["search_undo_r1"]["keys"][0]
    assert top_before[0] == top_after[0] == "K"
    assert abs(top_before[1] - top_after[1]) < 1e-5


def test_undo_is_logged_and_explained(run):
    events = ok(run["explain_k"])["events"]
    assert [e["rule"] for e in events] == ["loaded", "justification_lost", "orphaned", "undo"]
    assert [e["undone"] for e in events[:3]] == [False, True, True]  # R1's changes to K are marked undone
    assert events[-1]["text"] == "undo of epoch 2: back to alive"
    assert ok(run["check_after_undos"])["clean"] is True


def test_undo_reverts_a_load_too_and_then_says_nothing_is_left(run):
    undo = ok(run["undo_load"])
    assert undo["undone"] == 1 and undo["kind"] == "load"
    assert run["undo_load"]["after"]["status"] == {"nodes": [], "edges": []}
    assert all(not keys for keys in run["vectors_empty"]["keys"].values())
    nothing = ok(run["undo_nothing"])
    assert nothing["undone"] is None and "nothing to undo" in nothing["note"]
    r = run["undo_nothing"]
    assert r["after"]["status"] == r["before"]["status"] and r["after"]["log"] == r["before"]["log"]
    assert "nothing to undo" in run["undo_nothing_text"]["stdout"] and run["undo_nothing_text"]["code"] == 0
    assert ok(run["check_end"])["clean"] is True
