"""The words for a value re-judging kept dead (rule not_reinstated), read from its record: the
value holding its single-valued slot when that is the reason (in the detail written now and in
the one written before it named the holder), else the fact that contradicts it; and what would
have brought it back, from the same entry's writes."""

from __future__ import annotations

from memory_core.core import reinstatement, why
from memory_core.core.beliefs import BeliefView, Node
from memory_core.core.revision import begin

SLOT = "F12 holds another value of the single-valued 'lives in' of 'Ann': 'Porto', not 'Lisbon'"


def state(s: str, w: float = 0.5) -> dict:
    return {"state": s, "weight": w, "confidence": None}


def entries(detail: str, intent: bool) -> list[dict]:
    load = {"epoch": 1, "kind": "load", "question": "Q", "added": ["Q", "E10"]}
    kept = {
        "epoch": 4,
        "kind": "revise",
        "new_evidence": "F13",
        "changes": [
            {
                "key": "E10",
                "rule": "not_reinstated",
                "cause": ["F13"],
                "detail": detail,
                "before": state("refuted", 0.0),
                "after": state("refuted", 0.0),
            },
            {
                "key": "F11",
                "rule": "contradicted",
                "cause": ["F13"],
                "detail": "",
                "before": state("alive"),
                "after": state("refuted", 0.0),
            },
        ],
    }
    if intent:  # F11 refuted E10 (a load of both, then its edge), and F13 now supersedes both
        load["intent"] = {
            "add_nodes": [
                {"id": "i10", "key": "E10"},
                {"id": "i11", "key": "F11"},
                {"id": "i12", "key": "F12"},
            ],
            "add_edges": [["i11", "i10", "supersedes", {}]],
        }
        kept["intent"] = {
            "add_nodes": [
                {
                    "id": "i13",
                    "key": "F13",
                    "edges": [["i13", "i11", "supersedes", {}], ["i13", "i10", "supersedes", {}]],
                }
            ]
        }
    return [load, kept]


def kept_text(log: list[dict]) -> str:
    events = why.history(log, "E10")["events"]
    return next(e["text"] for e in events if e["rule"] == "not_reinstated")


def test_a_record_written_before_the_holder_was_named_is_read_for_the_holder():
    old = f"not reinstated: F13 contradicts it (structured, confidence 0.90: {SLOT})"
    text = kept_text(entries(old, intent=False))
    assert (
        text == f"stays dead: it would have been reinstated, but {SLOT} (judge: structured, confidence 0.90)"
    )
    text = kept_text(entries(old, intent=True))
    assert text == f"stays dead: its refuter F11 died, but {SLOT} (judge: structured, confidence 0.90)"


def test_the_detail_written_now_names_the_holder_and_reads_the_same():
    view = BeliefView()
    view.add_node(Node("E10", "evidence", state="refuted", weight=0.0, question="Q"))
    view.add_node(Node("F11", "evidence", question="Q"))
    plan = begin(view, [("F11", "contradicts", 1.0)], 4, "F13", Node("F13", "evidence", question="Q"))
    reinstatement.keep_dead(
        view, plan, reinstatement.Rejudged("E10", "F13", "contradicts", 0.9, "structured", SLOT)
    )
    detail = [c.detail for c in plan.changes if c.rule == reinstatement.NOT_REINSTATED][0]
    assert detail == f"not reinstated: {SLOT} (structured, confidence 0.90)", detail
    assert kept_text(entries(detail, intent=True)) == (
        f"stays dead: its refuter F11 died, but {SLOT} (judge: structured, confidence 0.90)"
    )


def test_a_fact_that_contradicts_it_is_named_as_before():
    detail = (
        "not reinstated: F13 contradicts it (structured, confidence 0.90: F13: same subject and predicate)"
    )
    assert reinstatement.slot_held(detail) is None
    assert (
        kept_text(entries(detail, intent=True))
        == f"stays dead: its refuter F11 died, but F13 contradicts it too ({detail})"
    )
    # an LLM's rationale is never read as a slot verdict
    llm = f"not reinstated: F13 contradicts it (llm, confidence 0.90: {SLOT})"
    assert reinstatement.slot_held(llm) is None
