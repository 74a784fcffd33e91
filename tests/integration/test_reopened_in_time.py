"""A value ended by a later value's start holds on when that later value is found never true
(rule 1g of :mod:`bench.reference`), through the real stores, against the reference.

The crane's capacity T1 (10 t) is loaded valid from 2005 to 2016; a conclusion K rests on it
and it supports the hypothesis H. T2 (20 t from 2010) ends it at 2010; T3 (30 t from 2013)
ends T2 at 2013. T2 is then found a misprint (refuted): T1 was ended by nothing true, so it
holds until 2013, where T3 starts (still superseded in time). T3 is found a misprint too: T1
holds again, alive until 2016 (the end its own fact states), and K with it. After every step
the whole graph and every interval equal the model's; ``explain`` says why; recall answers
with T1; undo gives back exactly the state before.
"""

from __future__ import annotations

import json

from bench.graphs import loaded_model
from bench.reference import REFUTED, revise_in_time, settle_history
from bench.wholegraph import differences


def investigation(p: str) -> dict:
    return {
        "question": {"key": f"{p}Q", "text": f"What does the crane {p} lift?"},
        "hypotheses": [{"key": f"{p}H", "statement": f"The crane {p} is heavy-duty."}],
        "evidence": [
            {
                "key": f"{p}T1",
                "claim": f"The crane {p} lifts 10 t.",
                "subject": f"crane {p}",
                "predicate": "lifts",
                "object": "10 t",
                "valid_from": "2005-01-01",
                "valid_to": "2016-01-01",
            }
        ],
        "conclusions": [
            {"key": f"{p}K", "statement": f"The crane {p} can lift a 9 t beam.", "confidence": 0.8}
        ],
        "edges": [
            {"type": "depends_on", "from": f"{p}K", "to": f"{p}T1"},
            {"type": "supports", "from": f"{p}T1", "to": f"{p}H", "weight": 0.6},
        ],
    }


def mine(status: dict, model) -> dict:
    return {
        "nodes": [n for n in status["nodes"] if n["key"] in model.nodes],
        "edges": [e for e in status["edges"] if e["from"] in model.nodes],
    }


def misprint(model, target: str, key: str) -> None:
    """The model of an untimed note pinned against ``target``: a target superseded in time is
    refuted first (it was never true), as :func:`revise_in_time` does, then the revision."""
    node = model.nodes[target]
    if model.historical(target):
        node.state, node.weight = REFUTED, 0.0
        settle_history(model, [target])
    model.revise(target, key)


async def same_as_model(app, model, step: str) -> dict:
    status = await app.status()
    assert differences(mine(status, model), model, "") == [], step
    spans = {
        n["key"]: (n.get("valid_from"), n.get("valid_to")) for n in status["nodes"] if n["key"] in model.nodes
    }
    want = {k: (n.valid_from, n.valid_to) for k, n in model.stored().items() if n.kind == "evidence"}
    assert {k: v for k, v in spans.items() if k in want} == want, step
    return {n["key"]: n for n in status["nodes"]}


async def test_a_value_ended_by_a_misprint_holds_on_to_the_next_true_value_then_to_its_own_end(app, prefix):
    p = f"{prefix}ro_"
    inv = investigation(p)
    model = loaded_model(inv)
    await app.load(json.dumps(inv))
    for key, obj, start in (("T2", "20 t", "2010-01-01"), ("T3", "30 t", "2013-01-01")):
        text = f"The crane {p} lifts {obj}."
        result = await app.revise(text, triple=f"crane {p}|lifts|{obj}", key=p + key, valid_from=start)
        assert not result.get("to_decide"), result
        revise_in_time(model, p + key, (f"crane {p}", "lifts", obj), (start, None), f"{p}Q", text=text)
        await same_as_model(app, model, key)
    nodes = await same_as_model(app, model, "T3")
    assert (nodes[f"{p}T1"]["state"], nodes[f"{p}T1"]["valid_to"]) == ("superseded", "2010-01-01")
    assert nodes[f"{p}K"]["state"] == "superseded"

    # T2 never held: T1 held until T3 starts, not until T2 did
    await app.revise(f"The crane {p} figure 20 t was a misprint.", target=p + "T2", key=p + "M2")
    misprint(model, p + "T2", p + "M2")
    nodes = await same_as_model(app, model, "M2")
    assert (nodes[f"{p}T1"]["state"], nodes[f"{p}T1"]["valid_to"]) == ("superseded", "2013-01-01")
    assert nodes[f"{p}K"]["state"] == "superseded"

    # T3 never held either: T1 holds again, until the end its own fact states, and K with it
    before = await app.status()
    result = await app.revise(f"The crane {p} figure 30 t was a misprint.", target=p + "T3", key=p + "M3")
    misprint(model, p + "T3", p + "M3")
    nodes = await same_as_model(app, model, "M3")
    assert (nodes[f"{p}T1"]["state"], nodes[f"{p}T1"]["valid_to"]) == ("alive", "2016-01-01")
    assert nodes[f"{p}K"]["state"] == "alive" and nodes[f"{p}H"]["state"] == "alive"
    assert f"{p}T1" in result["reinstated"] and f"{p}K" in result["reinstated"], result
    said = " ".join(e["text"] for e in (await app.explain(p + "T1"))["events"])
    assert (
        "reopened in time" in said
        and f"{p}T3, whose start on 2013-01-01 had ended it, was never true" in said
    )
    answer = await app.recall(f"What does the crane {p} lift?", inquiry=f"{p}Q")
    assert "10 t" in json.dumps(answer) and "30 t" not in answer["falsify"]["answer"], answer

    # undo: exactly the state before the second misprint
    await app.undo()
    after = await app.status()
    pick = lambda s: sorted(  # noqa: E731
        (n["key"], n["state"], n.get("weight"), n.get("valid_to"))
        for n in s["nodes"]
        if n["key"] in model.nodes
    )
    assert pick(after) == pick(before)
    assert [x for x in (await app.check())["problems"] if p in json.dumps(x)] == []


async def test_the_loser_of_a_resolve_ends_nothing_and_the_dispute_edge_goes(app, prefix):
    """``resolve`` finds its loser never true: the values the loser's start had ended are read in
    with their neighbourhoods, which must not bring back the dispute edge the resolution
    removes (it did: the winner stayed disputed beside a deleted edge, and ``check`` failed).
    An alive value of the slot without a start (the untimed winner) leaves them as they are."""
    p = f"{prefix}rr_"
    inv = {
        "question": {"key": f"{p}Q", "text": f"What does crane {p} lift?"},
        "hypotheses": [{"key": f"{p}H", "statement": f"Crane {p} is heavy-duty."}],
        "evidence": [
            {
                "key": f"{p}E0",
                "claim": f"The crane {p} lifts 10 t.",
                "subject": f"crane {p}",
                "predicate": "lifts",
                "object": "10 t",
            },
            {
                "key": f"{p}E1",
                "claim": f"The crane {p} lifts 20 t.",
                "subject": f"crane {p}",
                "predicate": "lifts",
                "object": "20 t",
                "valid_from": "2015-01-01",
            },
        ],
        "edges": [
            {"type": "supports", "from": f"{p}{k}", "to": f"{p}H", "weight": 0.6} for k in ("E0", "E1")
        ],
    }
    await app.load(json.dumps(inv))
    facts = [
        ("P0", "50 t", "2010-01-01", "preserve_both"),
        ("P1", "30 t", "2012-01-01", "preserve_both"),
        ("B0", "40 t", "2012-01-01", "latest_wins"),
        ("B1", "50 t", "2012-01-01", None),
        ("B2", "10 t", None, "preserve_both"),
    ]
    for key, obj, start, policy in facts:
        await app.revise(
            f"The crane {p} lifts {obj} ({key}).",
            triple=f"crane {p}|lifts|{obj}",
            key=p + key,
            valid_from=start,
            policy=policy,
        )
    states = {n["key"]: n["state"] for n in (await app.status())["nodes"]}
    assert (states[f"{p}B2"], states[f"{p}E1"], states[f"{p}B1"]) == ("disputed", "disputed", "superseded")
    await app.resolve(p + "E1", winner=p + "B2")
    status = await app.status()
    nodes = {n["key"]: n for n in status["nodes"]}
    assert (nodes[f"{p}B2"]["state"], nodes[f"{p}E1"]["state"]) == ("alive", "refuted")
    assert not [
        e for e in status["edges"] if e["type"] == "disputes" and {e["from"], e["to"]} == {p + "B2", p + "E1"}
    ]
    # ended at 2015 by E1, found never true, but 10 t holds without a start: left as they are
    assert (nodes[f"{p}B1"]["state"], nodes[f"{p}B1"]["valid_to"]) == ("superseded", "2015-01-01")
    assert [x for x in (await app.check())["problems"] if p in json.dumps(x)] == []
