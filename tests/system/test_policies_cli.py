"""Reconciliation policies, disputes, resolve and reinstatement through the real
CLI on the real stores, one batch process (tests/support/cli_batch.py) per
scenario group.

The example investigation is loaded with sources (the QA lab trusted 0.9) and the
default policy; every revision pins E_qa (``--target``: the pin decides *that* the
facts contradict, the policy decides who wins). After each step ``status --json``
is compared with what it must be, and ``undo`` must give back exactly the status
before the step.
"""

from __future__ import annotations

import json

import pytest

from harness import DEMO_FACT, EXAMPLE, after, before, edges, js, nodes_by_key, ok, run_batch, states

pytestmark = pytest.mark.slow

QA_SP = "Company X's internal QA report on the brake-valve defect|is dated"
K_TEXT = "Company X knew about the brake-valve defect by March 2021, per its QA report."
R2_FACT = "The forensic audit's author retracted it: the QA report's date was genuine."


def investigation(tmp_path) -> str:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    data["sources"] = [
        {"id": data["evidence"][0]["source_id"], "trust": 0.9, "name": "Company X QA"},
        {"id": "tabloid", "trust": 0.2},
    ]
    path = tmp_path / "company_x_sources.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def facts_file(work) -> str:
    lines = [
        {
            "fact": DEMO_FACT,
            "target": "E_qa",
            "key": "F_l1",
            "source": "blog2",
            "trust": 0.1,
            "policy": "trust_ranked",
        },
        {
            "fact": "The Valtec email was fabricated.",
            "target": "E_email",
            "key": "F_l2",
            "policy": "preserve_both",
        },
    ]
    path = work / "facts.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def cli(name, *argv, snapshot=True):
    return {"name": name, "op": "cli", "argv": list(argv), "snapshot": snapshot}


def search_k(name):
    return {"name": name, "op": "search", "kind": "conclusion", "text": K_TEXT, "limit": 3}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("policies")
    root = work / "root"
    steps = [
        cli("load", "load", investigation(work), "--json"),
        # latest_wins: a fact dated before the QA report loses and is recorded refuted
        cli(
            "older",
            "revise",
            DEMO_FACT,
            "--target",
            "E_qa",
            "--asserted-at",
            "2019-01-01",
            "--key",
            "F_old",
            "--json",
        ),
        cli("undo_older", "undo", "--json"),
        # latest_wins: an undated fact is dated today and wins (what FALSIFY always did)
        cli("newer", "revise", DEMO_FACT, "--target", "E_qa", "--key", "F_new", "--json"),
        search_k("search_newer"),
        cli("undo_newer", "undo", "--json"),
        # trust_ranked: a tabloid loses to the QA lab whatever its date
        cli(
            "tabloid",
            "revise",
            DEMO_FACT,
            "--target",
            "E_qa",
            "--key",
            "F_tab",
            "--source",
            "tabloid",
            "--policy",
            "trust_ranked",
            "--json",
        ),
        cli(
            "tabloid_text",
            "revise",
            "The QA report is fake, says a blog.",
            "--target",
            "E_qa",
            "--key",
            "F_blog",
            "--source",
            "blog",
            "--trust",
            "0.1",
            "--policy",
            "trust_ranked",
        ),
        cli("undo_blog", "undo", "--json"),
        cli("undo_tabloid", "undo", "--json"),
        # the same fields on revise --file lines (one batch, one epoch)
        cli("file", "revise", "--file", facts_file(work), "--json"),
        cli("undo_file", "undo", "--json"),
        # bad values: exit 2, nothing written
        cli("bad_policy", "revise", DEMO_FACT, "--target", "E_qa", "--policy", "coin_toss", "--json"),
        cli("bad_trust", "revise", DEMO_FACT, "--target", "E_qa", "--source", "s", "--trust", "2", "--json"),
        # preserve_both: a dispute
        cli(
            "dispute",
            "revise",
            DEMO_FACT,
            "--target",
            "E_qa",
            "--key",
            "F_d",
            "--policy",
            "preserve_both",
            "--json",
        ),
        cli("recall_dispute", "recall", "--json", snapshot=False),
        cli("recall_dispute_text", "recall", snapshot=False),
        cli("check_dispute", "check", "--json", snapshot=False),
        # resolved for the new fact: same labels as winning outright
        cli("resolve_fact", "resolve", "E_qa", "--winner", "F_d", "--json"),
        search_k("search_resolved"),
        cli("check_resolved", "check", "--json", snapshot=False),
        cli("undo_resolve_fact", "undo", "--json"),
        # resolved for the stored evidence
        cli("resolve_evidence", "resolve", "F_d", "--winner", "E_qa", "--json"),
        cli("undo_resolve_evidence", "undo", "--json"),
        cli("resolve_not_disputed", "resolve", "E_email", "--winner", "E_qa", "--json"),
        cli("undo_dispute", "undo", "--json"),
        # a dispute found by the structured judge, settled by a later revision whose policy picks a winner
        cli(
            "tri_dispute",
            "revise",
            "The QA report is dated 20 May 2021.",
            "--triple",
            QA_SP + "|20 May 2021",
            "--key",
            "F_may",
            "--policy",
            "preserve_both",
            "--json",
        ),
        cli(
            "tri_settle",
            "revise",
            "The QA report is dated 1 June 2021.",
            "--triple",
            QA_SP + "|1 June 2021",
            "--key",
            "F_june",
            "--json",
        ),
        cli("check_settled", "check", "--json", snapshot=False),
        cli("undo_settle", "undo", "--json"),
        cli("undo_tri_dispute", "undo", "--json"),
        # reinstatement: F1 refutes E_qa (K forgotten), F2 refutes F1: E_qa, K, A come back
        cli("r1", "revise", DEMO_FACT, "--target", "E_qa", "--key", "F1", "--json"),
        search_k("search_r1"),
        cli("r2", "revise", R2_FACT, "--target", "F1", "--key", "F2", "--json"),
        search_k("search_r2"),
        cli("explain_e", "explain", "E_qa", "--json", snapshot=False),
        cli("explain_e_text", "explain", "E_qa", snapshot=False),
        cli("check_r2", "check", "--json", snapshot=False),
        cli("undo_r2", "undo", "--json"),
        search_k("search_undo_r2"),
        cli("check_undo_r2", "check", "--json", snapshot=False),
        cli("undo_r1", "undo", "--json"),
        cli("check_end", "check", "--json", snapshot=False),
    ]
    return {r["name"]: r for r in run_batch(root, steps, work / "batch", timeout=900)}


def test_latest_wins_older_fact_loses_and_is_recorded_refuted(run):
    r = run["older"]
    result = js(r)
    assert result["refuted"] == ["F_old"] and result["invalidated"] == [] and result["forgotten"] == []
    assert result["decisions"][0]["winner"] == "E_qa"
    assert result["decisions"][0]["reason"] == "E_qa kept: 2021-03-15 > 2019-01-01 (latest_wins)"
    s0, s1 = states(before(r)), states(after(r))
    assert s1.pop("F_old") == "refuted" and s1 == s0  # nothing else changed
    assert ("E_qa", "supersedes", "F_old") in edges(after(r))
    assert after(run["undo_older"]) == before(r)


def test_latest_wins_undated_fact_wins(run):
    result = js(run["newer"])
    assert result["refuted"] == ["E_qa"] and result["forgotten"] == ["K"] and result["promoted"] == ["B"]
    assert "F_new wins" in result["decisions"][0]["reason"] and "(today)" in result["decisions"][0]["reason"]
    assert "K" not in [k for k, _ in run["search_newer"]["keys"]]
    assert after(run["undo_newer"]) == before(run["newer"])


def test_trust_ranked_tabloid_loses(run):
    result = js(run["tabloid"])
    assert result["decisions"][0]["reason"] == "E_qa kept: trust 0.9 > 0.2 (trust_ranked)"
    assert result["refuted"] == ["F_tab"]
    s1 = states(after(run["tabloid"]))
    assert s1["E_qa"] == "alive" and s1["K"] == "alive" and s1["F_tab"] == "refuted"
    text = ok(run["tabloid_text"])["stdout"]
    assert "E_qa kept: trust 0.9 > 0.1 (trust_ranked)" in text
    blog = nodes_by_key(after(run["tabloid_text"]))["F_blog"]
    assert blog["state"] == "refuted"
    assert after(run["undo_blog"]) == before(run["tabloid_text"])
    assert after(run["undo_tabloid"]) == before(run["tabloid"])


def test_bad_policy_and_trust_exit_2_and_change_nothing(run):
    for name, word in (("bad_policy", "--policy"), ("bad_trust", "--trust")):
        r = run[name]
        assert r["code"] == 2 and word in r["stderr"], r
        assert r["after"] == r["before"]


def test_dispute_keeps_both_and_flags_what_rests_on_them(run):
    r = run["dispute"]
    result = js(r)
    assert sorted(result["disputed"]) == ["E_qa", "F_d", "K"]
    assert result["forgotten"] == [] and result["promoted"] == [] and result["superseded"] == []
    s = states(after(r))
    assert s["E_qa"] == s["F_d"] == s["K"] == "disputed" and s["A"] == "alive" and s["E_email"] == "alive"
    assert ("F_d", "disputes", "E_qa") in edges(after(r))
    recall = js(run["recall_dispute"])
    assert sorted(recall["falsify"]["disputed"]) == ["E_qa", "F_d", "K"]
    assert "E_qa" not in recall["falsify"]["nodes"]  # only alive beliefs answer
    assert "disputed: E_qa vs F_d" in ok(run["recall_dispute_text"])["stdout"]
    assert js(run["check_dispute"])["clean"]


def test_resolving_for_the_fact_equals_winning_outright(run):
    result = js(run["resolve_fact"])
    assert result["judge"] == "resolve" and result["refuted"] == ["E_qa"] and result["forgotten"] == ["K"]
    resolved = states(after(run["resolve_fact"]))
    outright = states(after(run["newer"]))
    resolved["F_new"] = resolved.pop("F_d")
    assert resolved == outright
    assert ("F_d", "supersedes", "E_qa") in edges(after(run["resolve_fact"]))
    assert ("F_d", "disputes", "E_qa") not in edges(after(run["resolve_fact"]))
    assert "K" not in [k for k, _ in run["search_resolved"]["keys"]]
    assert js(run["check_resolved"])["clean"]
    assert after(run["undo_resolve_fact"]) == after(run["dispute"])


def test_resolving_for_the_stored_evidence(run):
    result = js(run["resolve_evidence"])
    assert result["refuted"] == ["F_d"] and sorted(result["reinstated"]) == ["E_qa", "K"]
    s = states(after(run["resolve_evidence"]))
    s0 = states(before(run["dispute"]))
    assert s.pop("F_d") == "refuted" and s == s0
    assert after(run["undo_resolve_evidence"]) == after(run["dispute"])
    r = run["resolve_not_disputed"]
    assert r["code"] == 2 and "not in a dispute" in r["stderr"] and r["after"] == r["before"]
    assert after(run["undo_dispute"]) == before(run["dispute"])


def test_reinstatement_brings_back_forgotten_nodes(run):
    r1 = js(run["r1"])
    assert r1["forgotten"] == ["K"] and r1["promoted"] == ["B"]
    assert "K" not in nodes_by_key(after(run["r1"]))
    assert "K" not in [k for k, _ in run["search_r1"]["keys"]]
    r2 = js(run["r2"])
    assert r2["refuted"] == ["F1"] and r2["restored"] == ["K"]
    assert set(r2["reinstated"]) >= {"E_qa", "K", "A"} and r2["demoted"] == ["B"]
    s = states(after(run["r2"]))
    loaded = states(before(run["r1"]))
    assert s.pop("F1") == "refuted" and s.pop("F2") == "alive" and s == loaded
    nodes, loaded_nodes = nodes_by_key(after(run["r2"])), nodes_by_key(before(run["r1"]))
    for key in ("A", "B", "K", "E_qa"):
        assert nodes[key]["feedback_weight"] == loaded_nodes[key]["feedback_weight"], key
    assert nodes["K"]["text"] == loaded_nodes["K"]["text"]
    assert ("K", "depends_on", "E_qa") in edges(after(run["r2"]))
    assert run["search_r2"]["keys"][0][0] == "K"  # found again by vector search
    texts = [e["text"] for e in js(run["explain_e"])["events"]]
    assert any("refuted" in t and "F1" in t for t in texts)
    assert any("reinstated" in t and "F1 was refuted by F2" in t for t in texts)
    assert "F1 was refuted by F2" in ok(run["explain_e_text"])["stdout"]
    assert js(run["check_r2"])["clean"]


def test_undo_reverts_reinstatement_exactly(run):
    assert after(run["undo_r2"]) == before(run["r2"])
    assert "K" not in [k for k, _ in run["search_undo_r2"]["keys"]]
    assert js(run["check_undo_r2"])["clean"]
    assert after(run["undo_r1"]) == before(run["r1"])
    assert js(run["check_end"])["clean"]


def test_a_later_revision_settles_a_dispute(run):
    d = js(run["tri_dispute"])
    assert d["judge"] == "structured" and sorted(d["disputed"]) == ["E_qa", "F_may", "K"]
    settle = js(run["tri_settle"])
    assert {c["key"] for c in settle["candidates"]} >= {"E_qa", "F_may"}  # disputed evidence is contestable
    assert sorted(settle["refuted"]) == ["E_qa", "F_may"] and settle["forgotten"] == ["K"]
    assert {d["winner"] for d in settle["decisions"]} == {"F_june"}
    s = states(after(run["tri_settle"]))
    assert s["E_qa"] == s["F_may"] == "refuted" and s["F_june"] == "alive" and "K" not in s
    assert js(run["check_settled"])["clean"]
    assert after(run["undo_settle"]) == before(run["tri_settle"])
    assert after(run["undo_tri_dispute"]) == before(run["tri_dispute"])


def test_policy_and_trust_on_file_lines(run):
    r = run["file"]
    results = [json.loads(line) for line in ok(r)["stdout"].splitlines() if line.strip()]
    assert [x["new_evidence"] for x in results] == ["F_l1", "F_l2"]
    assert results[0]["decisions"][0]["reason"] == "E_qa kept: trust 0.9 > 0.1 (trust_ranked)"
    assert results[0]["refuted"] == ["F_l1"]
    assert sorted(results[1]["disputed"]) == ["E_email", "F_l2"] and results[1]["superseded"] == []
    s = states(after(r))
    assert s["F_l1"] == "refuted" and s["E_qa"] == "alive" and s["E_email"] == s["F_l2"] == "disputed"
    assert s["B"] == "alive"  # its only supporter is disputed: neither superseded nor a rival promoted
    assert after(run["undo_file"]) == before(r)
