"""A value its refuter's death would have brought back, kept dead by re-judging: explain (and the
viewer's 'Why') names the real reason the record gives, and what would have brought it back.

* another value holds its single-valued slot (untimed, or held when its validity starts): that
  value is named, never the revision's fact, which has a ``supersedes`` edge to it by design but
  need not contradict it;
* the revision's fact contradicts it: the fact is named, and the refuter that died;
* its refuter is put in dispute rather than killed while another value holds its slot: the
  sentence says so, and it stays dead (the value holding the slot supersedes it, not the
  revision's fact, which the dispute leaves undecided).
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def slot(prefix: str, evidence: list[dict]) -> str:
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"Question {prefix}: where do they live?"},
            "hypotheses": [],
            "evidence": [dict(e, key=prefix + e["key"]) for e in evidence],
            "conclusions": [],
            "edges": [],
        }
    )


def lives(key: str, who: str, where: str, **extra) -> dict:
    claim = f"{who} lives in {where}."
    return dict(key=key, claim=claim, subject=who, predicate="lives in", object=where, **extra)


async def kept_dead_text(app, key: str) -> str:
    events = (await app.explain(key))["events"]
    kept = [e for e in events if e["rule"] == "not_reinstated"]
    assert len(kept) == 1, events
    if events[-1] is kept[0]:  # the viewer's 'Why' (the latest change) words it the same way
        why = {n["key"]: n["why"] for n in (await app.snapshot())["nodes"]}
        assert why[key] == f"epoch {kept[0]['epoch']}: {kept[0]['text']}", why[key]
    return kept[0]["text"]


async def test_a_value_kept_dead_by_another_value_of_its_slot_names_that_value(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    ann = f"Ann{prefix}"
    await app.load(slot(prefix, [lives("E10", ann, "Lisbon")]))
    await app.revise(f"The Lisbon registry entry for {ann} was forged.", target=p("E10"), key=p("F11"))
    await app.revise(f"{ann} lives in Porto.", triple=f"{ann}|lives in|Porto", key=p("F12"), record=True)
    back = await app.revise(f"The forgery claim about {ann} was false.", target=p("F11"), key=p("F13"))
    assert back["not_reinstated"] == [p("E10")], back
    # the revision's note gives the same reason, not the revision's fact
    assert back["note"].endswith(
        f"; {p('E10')} stay(s) dead: {p('F12')} holds another value of its single-valued slot (not reinstated)"
    ), back["note"]
    text = await kept_dead_text(app, p("E10"))
    assert text.startswith(f"stays dead: its refuter {p('F11')} died, but {p('F12')} holds another value"), (
        text
    )
    assert f"{p('F13')} contradicts" not in text, text
    # the revision log's detail (the viewer's log) names the holder too
    rows = [r for r in app.revision_log() if r["key"] == p("E10") and r["rule"] == "not_reinstated"]
    assert rows and rows[0]["detail"].startswith(f"not reinstated: {p('F12')} holds another value"), rows


async def test_a_timed_value_kept_dead_names_the_value_holding_when_it_starts(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    bob = f"Bob{prefix}"
    await app.load(slot(prefix, [lives("T10", bob, "Lisbon", valid_from="2010-01-01")]))
    await app.revise(f"The Lisbon registry entry for {bob} was forged.", target=p("T10"), key=p("T11"))
    await app.revise(
        f"{bob} lives in Porto.",
        triple=f"{bob}|lives in|Porto",
        key=p("T12"),
        valid_from="2005-01-01",
        record=True,
    )
    back = await app.revise(f"The forgery claim about {bob} was false.", target=p("T11"), key=p("T13"))
    assert back["not_reinstated"] == [p("T10")], back
    text = await kept_dead_text(app, p("T10"))
    assert text.startswith(f"stays dead: its refuter {p('T11')} died, but {p('T12')} holds another value"), (
        text
    )
    assert "when its validity starts (2010-01-01)" in text and f"{p('T13')} contradicts" not in text, text


async def test_a_value_the_new_fact_contradicts_names_the_fact_and_the_refuter_that_died(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    lot = f"lot {prefix}"
    await app.load(
        slot(
            prefix,
            [
                {
                    "key": "E_acme",
                    "claim": f"{lot} was made by Acme.",
                    "subject": lot,
                    "predicate": "made by",
                    "object": "Acme",
                }
            ],
        )
    )
    await app.revise(
        f"{lot} was made by Bolt.", triple=f"{lot}|made by|Bolt", key=p("F_bolt"), asserted_at="2024-02-01"
    )
    crane = await app.revise(
        f"{lot} was made by Crane.", triple=f"{lot}|made by|Crane", key=p("F_crane"), asserted_at="2024-03-01"
    )
    assert crane["refuted"] == [p("F_bolt")] and crane["not_reinstated"] == [p("E_acme")], crane
    text = await kept_dead_text(app, p("E_acme"))
    assert text.startswith(
        f"stays dead: its refuter {p('F_bolt')} died, but {p('F_crane')} contradicts it too"
    ), text


async def test_a_value_whose_refuter_is_put_in_dispute_is_not_said_to_stay_dead(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    cy = f"Cy{prefix}"
    await app.load(slot(prefix, [lives("D10", cy, "Lisbon")]))
    await app.revise(f"The Lisbon registry entry for {cy} was forged.", target=p("D10"), key=p("D11"))
    await app.revise(f"{cy} lives in Porto.", triple=f"{cy}|lives in|Porto", key=p("D12"), record=True)
    back = await app.revise(
        f"The forgery claim about {cy} was false.", target=p("D11"), key=p("D13"), policy="preserve_both"
    )
    # D12, alive, holds the slot: D10 stays dead whatever the dispute over its refuter decides
    # (the value holding its slot supersedes it, not the revision's fact, which is disputed)
    assert back["not_reinstated"] == [p("D10")] and p("D10") not in back["disputed"], back
    assert p("D11") in back["disputed"], back
    explained = await app.explain(p("D10"))
    text = await kept_dead_text(app, p("D10"))
    assert explained["state"] == "refuted", explained
    assert text.startswith(f"stays dead: its refuter {p('D11')} is in dispute, but {p('D12')} holds"), text
