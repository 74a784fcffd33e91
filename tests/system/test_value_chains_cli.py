"""Chains of updates to one value, multi-valued predicates and dry runs through the
real CLI on the real stores, one batch process (tests/support/cli_batch.py) for them all.

* Acme -> Bolt -> Crane: when Crane refutes Bolt, the Acme evidence Bolt had refuted
  is judged against Crane before it could come back: it stays dead (Crane supersedes
  it), and what rested on it stays dead; undo twice gives the loaded graph back.
  The same chain as one ``--file`` batch.
* Predicate cardinality: with ``speaks`` declared ``many``, another language is
  recorded beside the first (nothing refuted); a declared single-valued predicate
  beside it still refutes; bad declarations are exit 2 and write nothing.
* ``--dry-run`` returns exactly the lists the real revision then applies.
"""

from __future__ import annotations

import json

import pytest

from harness import after, before, edges, js, jsl, nodes_by_key, ok, run_batch, states

pytestmark = pytest.mark.slow

PLAN_KEYS = ("refuted", "superseded", "invalidated", "weakened", "promoted", "forgotten", "reinstated")
LOT_SP = "lot 7|manufactured by"


def acme() -> dict:
    return {
        "question": {"key": "Q_lot", "text": "Who manufactured lot 7?"},
        "hypotheses": [
            {"key": "H_acme", "statement": "Acme manufactured lot 7.", "prior": 0.6},
            {"key": "H_crane", "statement": "Crane manufactured lot 7.", "prior": 0.3},
        ],
        "evidence": [
            {
                "key": "E_acme",
                "claim": "Lot 7 was manufactured by Acme.",
                "subject": "lot 7",
                "predicate": "manufactured by",
                "object": "Acme",
                "asserted_at": "2024-01-01",
            }
        ],
        "conclusions": [
            {"key": "K", "statement": "Lot 7's defects trace back to Acme's plant.", "confidence": 0.8}
        ],
        "edges": [
            {"type": "depends_on", "from": "K", "to": "E_acme"},
            {"type": "supports", "from": "E_acme", "to": "H_acme", "weight": 0.9},
        ],
    }


def curie(predicates) -> dict:
    data = {
        "question": {"key": "Q_curie", "text": "What do we know about Marie Curie?"},
        "hypotheses": [{"key": "H_curie", "statement": "Marie Curie lived in France.", "prior": 0.5}],
        "evidence": [
            {
                "key": "E_fr",
                "claim": "Marie Curie speaks French.",
                "subject": "Marie Curie",
                "predicate": "speaks",
                "object": "French",
            },
            {
                "key": "E_cap",
                "claim": "The capital of Poland is Krakow.",
                "subject": "Poland",
                "predicate": "Capital",
                "object": "Krakow",
            },
        ],
        "conclusions": [
            {
                "key": "K_fr",
                "statement": "Marie Curie could lecture at the Sorbonne in its language.",
                "confidence": 0.7,
            },
            {"key": "K_cap", "statement": "Poland's government sits in Krakow.", "confidence": 0.6},
        ],
        "edges": [
            {"type": "depends_on", "from": "K_fr", "to": "E_fr"},
            {"type": "depends_on", "from": "K_cap", "to": "E_cap"},
            {"type": "supports", "from": "E_fr", "to": "H_curie", "weight": 0.8},
        ],
    }
    if predicates is not None:
        data["predicates"] = predicates
    return data


def write(path, data) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def lines(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


BOLT = [
    "revise",
    "Lot 7 was manufactured by Bolt.",
    "--triple",
    LOT_SP + "|Bolt",
    "--asserted-at",
    "2024-02-01",
    "--key",
    "F_bolt",
    "--json",
]
CRANE = [
    "revise",
    "Lot 7 was manufactured by Crane.",
    "--triple",
    LOT_SP + "|Crane",
    "--asserted-at",
    "2024-03-01",
    "--key",
    "F_crane",
    "--json",
]


def cli(name, *argv, snapshot=True):
    return {"name": name, "op": "cli", "argv": list(argv), "snapshot": snapshot}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("chains")
    chain = lines(
        work / "chain.jsonl",
        [
            {
                "fact": "Lot 7 was manufactured by Bolt.",
                "triple": LOT_SP + "|Bolt",
                "asserted_at": "2024-02-01",
                "key": "F_bolt",
            },
            {
                "fact": "Lot 7 was manufactured by Crane.",
                "triple": LOT_SP + "|Crane",
                "asserted_at": "2024-03-01",
                "key": "F_crane",
            },
        ],
    )
    steps = [
        cli("load", "load", write(work / "acme.json", acme()), "--json"),
        # one at a time
        cli("bolt_dry", *BOLT, "--dry-run"),
        cli("bolt", *BOLT),
        cli("crane_dry", *CRANE, "--dry-run"),
        cli("crane", *CRANE),
        cli("explain_acme", "explain", "E_acme", "--json", snapshot=False),
        cli("explain_acme_text", "explain", "E_acme", snapshot=False),
        cli("recall", "recall", "Who manufactured lot 7?", "--json", snapshot=False),
        cli("check", "check", "--json", snapshot=False),
        cli("undo_crane", "undo", "--json"),
        cli("undo_bolt", "undo", "--json"),
        # the same chain as one batch
        cli("file_dry", "revise", "--file", chain, "--json", "--dry-run"),
        cli("file", "revise", "--file", chain, "--json"),
        cli("recall_file", "recall", "Who manufactured lot 7?", "--json", snapshot=False),
        cli("check_file", "check", "--json", snapshot=False),
        cli("undo_file", "undo", "--json"),
        # a dispute (no policy can order Bolt and Crane), then resolved for Crane
        cli("bolt2", *BOLT),
        cli("crane_dispute", *CRANE, "--policy", "preserve_both"),
        cli("resolve", "resolve", "F_bolt", "--winner", "F_crane", "--json"),
        cli("check_resolve", "check", "--json", snapshot=False),
        cli("undo_resolve", "undo", "--json"),
        cli("undo_dispute", "undo", "--json"),
        cli("undo_bolt2", "undo", "--json"),
        # predicate cardinality
        cli("bad_value", "load", write(work / "bad1.json", curie({"speaks": "several"})), "--json"),
        cli("bad_type", "load", write(work / "bad2.json", curie(["speaks"])), "--json"),
        cli("bad_name", "load", write(work / "bad3.json", curie({"speaks|to": "many"})), "--json"),
        cli(
            "load_curie",
            "load",
            write(work / "curie.json", curie({"Speaks": "many", "capital": "one"})),
            "--json",
        ),
        cli(
            "polish",
            "revise",
            "Marie Curie speaks Polish.",
            "--triple",
            "Marie Curie|speaks|Polish",
            "--key",
            "F_pl",
            "--json",
        ),
        cli(
            "warsaw",
            "revise",
            "The capital of Poland is Warsaw.",
            "--triple",
            "Poland|capital|Warsaw",
            "--key",
            "F_waw",
            "--json",
        ),
        cli("check_curie", "check", "--json", snapshot=False),
    ]
    return {r["name"]: r for r in run_batch(work / "root", steps, work / "batch", timeout=900)}


def test_a_value_replaced_twice_keeps_the_oldest_dead(run):
    bolt = js(run["bolt"])
    assert bolt["refuted"] == ["E_acme"] and "K" in bolt["invalidated"]
    crane = js(run["crane"])
    assert crane["refuted"] == ["F_bolt"]
    assert "E_acme" not in crane.get("reinstated", []) and "K" not in crane.get("reinstated", [])
    s = states(after(run["crane"]))
    assert s["F_crane"] == "alive" and s["F_bolt"] == "refuted", s
    assert s.get("E_acme", "forgotten") != "alive" and s.get("K", "forgotten") != "alive", (s, crane)
    # H_acme lost its only support to Bolt (weakened: no supported rival) and does not get it back
    assert "H_acme" not in crane["reinstated"]
    weight = lambda r, k: nodes_by_key(after(run[r]))[k]["feedback_weight"]
    assert weight("crane", "H_acme") == weight("bolt", "H_acme") < weight("load", "H_acme")
    # the new fact supersedes the evidence it kept dead (provenance; it attacks in the TMS)
    assert ("F_crane", "supersedes", "E_acme") in edges(after(run["crane"])) or "E_acme" not in s
    assert js(run["check"])["clean"]


def test_recall_answers_the_latest_value(run):
    answer = js(run["recall"])["falsify"]["answer"]
    assert "Crane" in answer and "Acme" not in answer, answer


def test_explain_says_why_it_was_not_reinstated(run):
    texts = " ".join(e["text"] for e in js(run["explain_acme"])["events"])
    assert "F_crane" in texts and "not reinstated" in texts, texts
    assert "not reinstated" in ok(run["explain_acme_text"])["stdout"]


def test_undo_twice_restores_the_loaded_graph(run):
    assert after(run["undo_crane"]) == before(run["crane"])
    assert after(run["undo_bolt"]) == after(run["load"])


def test_the_chain_in_one_batch(run):
    results = jsl(run["file"])
    assert [r["new_evidence"] for r in results] == ["F_bolt", "F_crane"]
    s = states(after(run["file"]))
    assert s["F_crane"] == "alive" and s["F_bolt"] == "refuted"
    assert s.get("E_acme", "forgotten") != "alive" and s.get("K", "forgotten") != "alive"
    assert "H_acme" not in results[1]["reinstated"]
    assert (
        nodes_by_key(after(run["file"]))["H_acme"]["feedback_weight"]
        == nodes_by_key(after(run["bolt"]))["H_acme"]["feedback_weight"]
    )
    assert "Crane" in js(run["recall_file"])["falsify"]["answer"]
    assert js(run["check_file"])["clean"]
    assert after(run["undo_file"]) == after(run["load"])


def _plan(result: dict) -> dict:
    return {k: result.get(k, []) for k in PLAN_KEYS}


def test_dry_run_previews_exactly_what_the_revision_applies(run):
    for dry, real in (("bolt_dry", "bolt"), ("crane_dry", "crane")):
        d, r = js(run[dry]), js(run[real])
        assert d["dry_run"] is True
        assert _plan(d) == _plan(r), (dry, _plan(d), _plan(r))
        assert any(_plan(r).values())
        assert after(run[dry]) == before(run[dry])  # wrote nothing
    d, r = jsl(run["file_dry"]), jsl(run["file"])
    assert [_plan(x) for x in d] == [_plan(x) for x in r]
    assert after(run["file_dry"]) == before(run["file_dry"])


def test_bad_predicate_declarations_exit_2_and_write_nothing(run):
    for name in ("bad_value", "bad_type", "bad_name"):
        r = run[name]
        assert r["code"] == 2, (name, r["stdout"], r["stderr"])
        assert "predicates" in r["stderr"] + r["stdout"]
        assert after(r) == before(r)


def test_a_multi_valued_predicate_keeps_both_values(run):
    status = after(run["load_curie"])
    assert nodes_by_key(status)["Q_curie"]["predicates"] == {"capital": "one", "speaks": "many"}
    polish = js(run["polish"])
    assert polish["refuted"] == [] and polish["invalidated"] == [] and polish["forgotten"] == []
    assert polish["new_evidence"] == "F_pl"
    s = states(after(run["polish"]))
    assert s["E_fr"] == "alive" and s["K_fr"] == "alive" and s["F_pl"] == "alive"
    assert nodes_by_key(after(run["polish"]))["F_pl"]["question"] == "Q_curie"


def test_a_declared_single_valued_predicate_still_refutes(run):
    warsaw = js(run["warsaw"])
    assert warsaw["refuted"] == ["E_cap"] and "K_cap" in warsaw["invalidated"]
    s = states(after(run["warsaw"]))
    assert s["E_fr"] == "alive" and s["K_fr"] == "alive"
    assert js(run["check_curie"])["clean"]


def test_a_dispute_and_its_resolution_keep_the_oldest_dead(run):
    # neither Bolt nor Crane won: Acme, which both contradict, is not alive either. The
    # three-valued labelling makes it disputed (its attackers are), not dead; Crane
    # supersedes it, so whichever side wins, Acme stays dead
    d = js(run["crane_dispute"])
    assert sorted(d["disputed"]) == ["E_acme", "F_bolt", "F_crane", "K"], d
    assert ("F_crane", "supersedes", "E_acme") in edges(after(run["crane_dispute"]))
    r = js(run["resolve"])
    assert sorted(r["refuted"]) == ["E_acme", "F_bolt"] and "E_acme" not in r["reinstated"], r
    s = states(after(run["resolve"]))
    assert (
        s["F_crane"] == "alive"
        and s.get("E_acme", "forgotten") != "alive"
        and s.get("K", "forgotten") != "alive"
    )
    assert js(run["check_resolve"])["clean"]
    assert after(run["undo_resolve"]) == before(run["resolve"])
    assert after(run["undo_bolt2"]) == after(run["load"])
