"""Regressions of the partial-view forget bugs, through the real CLI entry point on the real stores.

* A partial view must not decide what is forgotten: evidence a, b; conclusion c
  depends on a (group j1) or on b (group j2); revise --target a --key F1, then
  revise --target b --key F2. The second revision's region is b and its dependent
  c; a is only c's antecedent there, yet the forget rule decides a. It must see
  a's superseder F1 (alive): a stays refuted with the F1 -> a edge, c is forgotten,
  check is clean.
* An antecedent shared by two justifications (Building Problem Solvers' JTMS ex1:
  g justified by (a, e) or by (d, e)) is written with repeated depends_on edges
  in different groups; retracting a leaves g alive through (d, e).
* A second file's conclusion may rest on evidence a first file loaded; revising
  that evidence invalidates it. A reference to a forgotten key is skipped with a
  note; a key that exists nowhere is exit 2 naming the edge.
* check verifies the forget rules against the revision log: a node deleted behind
  FALSIFY's back (while an alive node supersedes it) makes check exit 1 naming it,
  and check --repair restores it from the log, with its state and edges.

All scenarios share one root (their keys differ), run in one batch process
(tests/support/cli_batch.py calls memory_core.shell.cli.main, as python main.py does).
"""

from __future__ import annotations

import json
import sys

import pytest

import forkserver
from harness import REPO, clean_env, copy_root, nodes_by_key, run_batch

pytestmark = pytest.mark.slow

PARTIAL = {
    "question": {"key": "Q12", "text": "Does c hold?"},
    "evidence": [{"key": "a", "claim": "Fact a holds."}, {"key": "b", "claim": "Fact b holds."}],
    "conclusions": [{"key": "c", "statement": "Conclusion c holds."}],
    "edges": [
        {"type": "depends_on", "from": "c", "to": "a", "group": "j1"},
        {"type": "depends_on", "from": "c", "to": "b", "group": "j2"},
    ],
}

# Building Problem Solvers, jtms-ex.lisp ex1: assumptions a..e; f <- (a, b); e <- (b, c);
# g <- (a, e) | (d, e). Here e is a premise (an assumption in ex1) and the edges g -> e repeat
# in groups j3 and j4.
BPS = {
    "question": {"key": "BPS", "text": "BPS JTMS example 1"},
    "evidence": [{"key": f"bps_{k}", "claim": f"Assumption {k} holds."} for k in "abcde"],
    "conclusions": [{"key": "bps_f", "statement": "f holds."}, {"key": "bps_g", "statement": "g holds."}],
    "edges": [
        {"type": "depends_on", "from": "bps_f", "to": "bps_a", "group": "j1"},
        {"type": "depends_on", "from": "bps_f", "to": "bps_b", "group": "j1"},
        {"type": "depends_on", "from": "bps_g", "to": "bps_a", "group": "j3"},
        {"type": "depends_on", "from": "bps_g", "to": "bps_e", "group": "j3"},
        {"type": "depends_on", "from": "bps_g", "to": "bps_d", "group": "j4"},
        {"type": "depends_on", "from": "bps_g", "to": "bps_e", "group": "j4"},
    ],
}

FIRST = {
    "question": {"key": "XF", "text": "Cross-file question"},
    "evidence": [
        {"key": "xf_e1", "claim": "The first file's evidence one."},
        {"key": "xf_e2", "claim": "The first file's evidence two."},
    ],
}
# a fragment of the stored question: its conclusion rests on the first file's evidence
SECOND = {
    "question": {"key": "XF"},
    "conclusions": [{"key": "xf_k", "statement": "Concluded from the first file's evidence one."}],
    "edges": [{"type": "depends_on", "from": "xf_k", "to": "xf_e1"}],
}
# a whole file with its own question, resting on the first file's evidence two
THIRD = {
    "question": {"key": "XF3", "text": "A later investigation"},
    "conclusions": [{"key": "xf3_k", "statement": "Concluded from the first file's evidence two."}],
    "edges": [{"type": "depends_on", "from": "xf3_k", "to": "xf_e2"}],
}
# names xf_k, forgotten by then
FORGOTTEN_REF = {
    "question": {"key": "XF"},
    "conclusions": [{"key": "xf_k2", "statement": "Rests on the forgotten conclusion."}],
    "edges": [{"type": "depends_on", "from": "xf_k2", "to": "xf_k"}],
}
NOWHERE_REF = {
    "question": {"key": "XF"},
    "conclusions": [{"key": "xf_k3", "statement": "Rests on nothing known."}],
    "edges": [{"type": "depends_on", "from": "xf_k3", "to": "xf_nowhere"}],
}


def cli(name, *argv):
    return {"name": name, "op": "cli", "argv": [str(a) for a in argv]}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The partial-view sequence through the CLI on a fresh root (one process)."""
    work = tmp_path_factory.mktemp("partial_view")
    path = work / "partial.json"
    path.write_text(json.dumps(PARTIAL), encoding="utf-8")
    root = work / "root"
    steps = [
        cli("load_partial", "load", path, "--json"),
        cli("r1", "revise", "Fact a does not hold.", "--target", "a", "--key", "F1", "--json"),
        cli("r2", "revise", "Fact b does not hold.", "--target", "b", "--key", "F2", "--json"),
        cli("status_partial", "status", "--json"),
        cli("check_partial", "check", "--json"),
        cli("explain_a", "explain", "a", "--json"),
    ]
    return {r["name"]: r for r in run_batch(root, steps, work / "batch")}, root


def out(results, name):
    r = results[name]
    assert r["code"] == 0, f"{name}: exit {r['code']}\n{r['stderr'][-3000:]}"
    return json.loads(r["stdout"])


def edges_of(status, kind=None):
    return {(e["type"], e["from"], e["to"]): e for e in status["edges"] if kind is None or e["type"] == kind}


def test_partial_view_does_not_forget_a_superseded_node(run):
    results, _ = run
    assert out(results, "r1")["refuted"] == ["a"] and out(results, "r1")["forgotten"] == []
    r2 = out(results, "r2")
    assert r2["refuted"] == ["b"] and r2["invalidated"] == ["c"]
    assert r2["forgotten"] == ["c"]  # not a: F1 (alive) supersedes it
    nodes = nodes_by_key(out(results, "status_partial"))
    assert nodes["a"]["state"] == "refuted" and nodes["b"]["state"] == "refuted"
    assert "c" not in nodes
    assert ("supersedes", "F1", "a") in edges_of(out(results, "status_partial"))
    assert ("supersedes", "F2", "b") in edges_of(out(results, "status_partial"))
    assert out(results, "check_partial") == {"clean": True, "problems": []}
    explained = out(results, "explain_a")
    assert explained["state"] == "refuted"
    assert not any(e["rule"] == "orphaned" for e in explained["events"])


@pytest.fixture(scope="module")
def damaged(run, tmp_path_factory):
    """The root after the sequence, with a deleted behind FALSIFY's back (graph node and its
    edges through cognee's graph engine, vector row with lancedb), then check / --repair."""
    _, source = run
    work = tmp_path_factory.mktemp("partial_view_damaged")
    root = copy_root(source, work / "root")
    proc = forkserver.run(
        [
            sys.executable,
            str(REPO / "tests" / "support" / "delete_behind_back.py"),
            str(root),
            "evidence",
            "a",
        ],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    steps = [
        cli("status_damaged", "status", "--json"),
        cli("check", "check", "--json"),
        cli("repair", "check", "--repair", "--json"),
        cli("check_again", "check", "--json"),
        cli("status", "status", "--json"),
        cli("explain_a", "explain", "a", "--json"),
    ]
    return {r["name"]: r for r in run_batch(root, steps, work / "batch")}


def test_check_names_a_node_deleted_behind_falsifys_back_and_repair_restores_it(run, damaged):
    before = out(run[0], "status_partial")
    assert "a" not in nodes_by_key(out(damaged, "status_damaged"))  # the damage is real
    r = damaged["check"]
    assert r["code"] == 1, r["stderr"][-2000:]
    problems = json.loads(r["stdout"])["problems"]
    assert any(p.startswith("a is missing from the graph") and "alive F1" in p for p in problems), problems
    assert all(p.startswith("a ") for p in problems), problems  # nothing else is wrong
    repair = out(damaged, "repair")
    assert any(line.startswith("restored a from the revision log") for line in repair["repaired"]), repair
    assert repair["clean_after_repair"] is True and repair["problems_after_repair"] == []
    assert out(damaged, "check_again") == {"clean": True, "problems": []}
    after = out(damaged, "status")
    a_before, a_after = nodes_by_key(before)["a"], nodes_by_key(after)["a"]
    assert a_after == a_before  # state, weight, epoch, text as before the damage
    assert edges_of(after)[("supersedes", "F1", "a")] == edges_of(before)[("supersedes", "F1", "a")]
    assert edges_of(after) == edges_of(before)
    assert out(damaged, "explain_a")["state"] == "refuted"


# ---- in-process, through the facade (one event loop, the shared session root) --------------


def prefixed(data: dict, p: str) -> dict:
    """``data`` with every key (question, nodes, edge ends) prefixed by ``p``."""
    data = json.loads(json.dumps(data))
    data["question"]["key"] = p + data["question"]["key"]
    for section in ("hypotheses", "evidence", "conclusions"):
        for node in data.get(section, []):
            node["key"] = p + node["key"]
    for edge in data.get("edges", []):
        edge["from"], edge["to"] = p + edge["from"], p + edge["to"]
    return data


def mine(status: dict, p: str):
    nodes = {n["key"][len(p) :]: n for n in status["nodes"] if n["key"].startswith(p)}
    edges = {
        (e["type"], e["from"][len(p) :], e["to"][len(p) :]): e
        for e in status["edges"]
        if e["from"].startswith(p) and e["to"].startswith(p)
    }
    return nodes, edges


async def test_shared_antecedent_in_two_justifications(app, prefix):
    loaded = await app.load(prefixed(BPS, prefix))
    assert f"depends_on {prefix}bps_g -> {prefix}bps_e" in loaded["edges_added"]
    nodes, edges = mine(await app.status(), prefix)
    edge = edges[("depends_on", "bps_g", "bps_e")]
    assert edge["groups"] == ["j3", "j4"]  # one stored edge, one membership per justification
    assert nodes["bps_g"]["state"] == "alive"
    assert (await app.explain(prefix + "bps_g"))["why_alive"]["justification"] == "j3"
    retract = await app.revise("Assumption a is retracted.", target=prefix + "bps_a", key=prefix + "not_a")
    assert retract["refuted"] == [prefix + "bps_a"]
    assert retract["invalidated"] == [prefix + "bps_f"]  # f <- (a, b) only
    nodes, _ = mine(await app.status(), prefix)
    assert nodes["bps_g"]["state"] == "alive"  # through (d, e)
    why = (await app.explain(prefix + "bps_g"))["why_alive"]
    assert why["justification"] == "j4"
    assert sorted(a["key"] for a in why["antecedents"]) == [prefix + "bps_d", prefix + "bps_e"]
    # and retracting e as well kills g: e was in both justifications
    retract = await app.revise("Assumption e is retracted.", target=prefix + "bps_e", key=prefix + "not_e")
    assert retract["invalidated"] == [prefix + "bps_g"]


async def test_exact_repeat_is_still_a_duplicate(app, prefix):
    from memory_core.core.errors import InputError

    data = prefixed(BPS, prefix)
    data["edges"].append(dict(data["edges"][-1]))  # g -> e in j4 again
    with pytest.raises(InputError, match=r"edges\[6\] \(depends_on .*bps_g -> .*bps_e\): duplicate edge"):
        await app.load(data)
    data = prefixed(BPS, prefix)
    data["edges"][-1]["critical"] = False  # the same antecedent, another group, another 'critical'
    with pytest.raises(InputError, match=r"edges\[5\].*another 'critical'"):
        await app.load(data)
    assert not [n for n in (await app.status())["nodes"] if n["key"].startswith(prefix)]


async def test_second_file_rests_on_the_first_files_evidence(app, prefix):
    await app.load(prefixed(FIRST, prefix))
    second = await app.load(prefixed(SECOND, prefix))
    assert second["added"] == [prefix + "xf_k"]
    assert second["edges_added"] == [f"depends_on {prefix}xf_k -> {prefix}xf_e1"]
    third = await app.load(prefixed(THIRD, prefix))  # its own question, resting on XF's evidence
    assert third["edges_added"] == [f"depends_on {prefix}xf3_k -> {prefix}xf_e2"]
    nodes, edges = mine(await app.status(), prefix)
    assert nodes["xf_k"]["state"] == "alive" and nodes["xf3_k"]["state"] == "alive"
    assert ("depends_on", "xf3_k", "xf_e2") in edges  # status shows edges between investigations
    r = await app.revise(
        "The first file's evidence one was wrong.", target=prefix + "xf_e1", key=prefix + "n1"
    )
    assert r["refuted"] == [prefix + "xf_e1"] and r["invalidated"] == [prefix + "xf_k"]
    assert r["forgotten"] == [prefix + "xf_k"]
    r = await app.revise(
        "The first file's evidence two was wrong.", target=prefix + "xf_e2", key=prefix + "n2"
    )
    assert r["refuted"] == [prefix + "xf_e2"] and r["invalidated"] == [prefix + "xf3_k"]

    # a node resting on a forgotten key: it enters invalidated (the labelling's state), the edge is kept
    # in the revision log (its target is in neither store), the rest loads
    loaded = await app.load(prefixed(FORGOTTEN_REF, prefix))
    assert loaded["added"] == [prefix + "xf_k2"] and loaded["edges_added"] == []
    assert loaded["invalidated"] == [prefix + "xf_k2"]
    assert any(
        n.startswith(
            f"edge depends_on {prefix}xf_k2 -> {prefix}xf_k: {prefix}xf_k was forgotten by the "
            "revision of epoch"
        )
        and "is invalidated" in n
        for n in loaded["notes"]
    ), loaded["notes"]
    # an edge naming a key that exists nowhere: refused, naming the edge, nothing written
    from memory_core.core.errors import InputError

    with pytest.raises(InputError, match=rf"edges\[0\]: 'to' names unknown key '{prefix}xf_nowhere'"):
        await app.load(prefixed(NOWHERE_REF, prefix))
    nodes, _ = mine(await app.status(), prefix)
    assert "xf_k3" not in nodes and "xf_k" not in nodes


RIVALS = {
    "question": {"key": "P1", "text": "Which hypothesis holds?"},
    "hypotheses": [{"key": "h1", "statement": "h1 holds."}, {"key": "h1b", "statement": "h1b holds."}],
    "evidence": [
        {"key": "e", "claim": "e was observed."},
        {"key": "s", "claim": "s was observed."},
        {"key": "t", "claim": "t was observed."},
    ],
    "edges": [
        {"type": "supports", "from": "e", "to": "h1"},
        {"type": "supports", "from": "s", "to": "h1"},
        {"type": "supports", "from": "t", "to": "h1b"},
    ],
}
OTHER = {  # another investigation's hypothesis also rests on e
    "question": {"key": "P2", "text": "Another question"},
    "hypotheses": [{"key": "h2", "statement": "h2 holds."}],
    "edges": [{"type": "supports", "from": "e", "to": "h2"}],
}


async def test_supporting_evidence_kept_for_an_alive_hypothesis_outside_the_region(app, prefix):
    """The same partial-view risk on the supports side: e (refuted) is kept because h2 of
    another question still uses it; a later revision supersedes h1, so the forget rule
    decides e again (a supporter of a changed hypothesis) and must see e -> h2."""
    await app.load(prefixed(RIVALS, prefix))
    await app.load(prefixed(OTHER, prefix))
    r = await app.revise("e was a misreading.", target=prefix + "e", key=prefix + "not_e")
    assert r["refuted"] == [prefix + "e"] and r["forgotten"] == []
    r = await app.revise("s was a misreading.", target=prefix + "s", key=prefix + "not_s")
    assert (
        r["refuted"] == [prefix + "s"]
        and prefix + "h1" in r["superseded"]
        and r["promoted"] == [prefix + "h1b"]
    )
    assert r["forgotten"] == []  # not e: alive h2 (outside the revision's region) consumes it
    nodes, edges = mine(await app.status(), prefix)
    assert nodes["e"]["state"] == "refuted" and ("supports", "e", "h2") in edges
