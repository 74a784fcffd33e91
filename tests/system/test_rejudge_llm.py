"""Re-judged reinstatement with the LLM judge (a real local HTTP stub, tests/support/llm_stub.py):
free-text claims, no triples, so only the LLM can say whether the fact that killed the
refuter contradicts the evidence that would come back.

Acme -> Bolt -> Crane as sentences. When the judge says Crane contradicts Acme, Acme
(and what rests on it) stays dead; when it says they are unrelated, Acme comes back.
"""

from __future__ import annotations

import json

import pytest

from harness import nodes_by_key, run_batch
from llm_stub import StubLLM

pytestmark = pytest.mark.slow

ACME, BOLT, CRANE = (
    "Lot 7 was manufactured by Acme.",
    "Lot 7 was manufactured by Bolt.",
    "Lot 7 was manufactured by Crane.",
)
CONTRA = {"rationale": "one maker per lot", "relation": "contradicts", "confidence": 0.9}
UNRELATED = {"rationale": "different claims", "relation": "unrelated", "confidence": 0.9}


def investigation(path) -> str:
    path.write_text(
        json.dumps(
            {
                "question": {"key": "Q_lot", "text": "Who manufactured lot 7?"},
                "hypotheses": [{"key": "H_acme", "statement": "Acme manufactured lot 7.", "prior": 0.6}],
                "evidence": [{"key": "E_acme", "claim": ACME}],
                "conclusions": [
                    {
                        "key": "K",
                        "statement": "Lot 7's defects trace back to Acme's plant.",
                        "confidence": 0.8,
                    }
                ],
                "edges": [
                    {"type": "depends_on", "from": "K", "to": "E_acme"},
                    {"type": "supports", "from": "E_acme", "to": "H_acme", "weight": 0.9},
                ],
            }
        ),
        encoding="utf-8",
    )
    return str(path)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("rejudge_llm")
    with StubLLM() as stub:
        env = stub.judge_env(FALSIFY_VERDICT_CACHE="0")
        both = {json.dumps(ACME): CONTRA, json.dumps(BOLT): CONTRA}
        only_bolt = {json.dumps(ACME): UNRELATED, json.dumps(BOLT): CONTRA}

        def cli(name, *argv):
            return {"name": name, "op": "cli", "argv": list(argv), "snapshot": True}

        def judge(name, verdicts):
            return stub.control(name, mode="verdict", verdict_by_stored=verdicts, verdict=UNRELATED, tag=name)

        steps = [
            cli("load", "load", investigation(work / "lot7.json"), "--json"),
            judge("set_both", both),
            cli("bolt", "revise", BOLT, "--key", "F_bolt", "--json"),
            cli("crane", "revise", CRANE, "--key", "F_crane", "--json"),
            cli("explain", "explain", "E_acme", "--json"),
            cli("undo_crane", "undo", "--json"),
            judge("set_only_bolt", only_bolt),
            cli("crane_unrelated", "revise", CRANE, "--key", "F_crane", "--json"),
            cli("check", "check", "--json"),
        ]
        results = run_batch(work / "root", steps, work / "batch", env=env)
        requests = stub.chat_requests()
    return {r["name"]: r for r in results}, requests


def js(r):
    assert r["code"] == 0, (r["name"], r["stdout"][-2000:], r["stderr"][-3000:])
    return json.loads(r["stdout"])


def states(r):
    return {k: n["state"] for k, n in nodes_by_key(r["after"]["status"]).items()}


def test_the_llm_keeps_a_contradicted_value_dead(run):
    results, requests = run
    assert js(results["bolt"])["refuted"] == ["E_acme"]
    crane = js(results["crane"])
    assert crane["refuted"] == ["F_bolt"] and crane["not_reinstated"] == ["E_acme"], crane
    assert "E_acme" not in crane["reinstated"] and "K" not in crane["reinstated"]
    s = states(results["crane"])
    assert s["E_acme"] == "refuted" and s.get("K", "forgotten") != "alive" and s["F_crane"] == "alive"
    texts = " ".join(e["text"] for e in js(results["explain"])["events"])
    assert "not reinstated" in texts and "llm" in texts
    # the re-judgement asked the LLM about Acme against Crane
    asked = [q for q in requests if q["tag"] == "set_both"]
    assert any(
        ACME in m["content"] and CRANE in m["content"]
        for q in asked
        for m in q["body"]["messages"]
        if m["role"] == "user"
    )


def test_the_llm_lets_an_unrelated_value_come_back(run):
    results, _ = run
    crane = js(results["crane_unrelated"])
    assert (
        crane["refuted"] == ["F_bolt"] and "E_acme" in crane["reinstated"] and not crane.get("not_reinstated")
    )
    s = states(results["crane_unrelated"])
    assert s["E_acme"] == "alive" and s["K"] == "alive"
    assert js(results["check"])["clean"]
