"""The viewer's graph (``/api/graph``: ``Falsify.snapshot``) says of each node what ``explain``
says, on the real stores:

* a conclusion that became disputed in a batch, one justification dying (its evidence refuted)
  while the other runs through a dispute: the hover's "Why" names both causes, as explain's
  last event does (the snapshot reads the node's antecedents and attackers from the graph it
  shows, as explain reads them);
* two values in dispute, both refuted by a third, come back disputed when the third is refuted:
  explain's sentence names the sides of the dispute only ("neither side won (F2)"), not the
  refuter that died, and the viewer's says the same;
* a disputed value's rivals ("Disputed with: ...") are the sides in dispute with it now, as
  explain's attackers are: a side that died since (its support failed, its ``disputes`` edge
  kept) is no rival any more (explain lists it among the past attackers).
"""

from __future__ import annotations

import pytest

from conftest import investigation

pytestmark = pytest.mark.slow


def last_said(explained: dict) -> str:
    """explain's last change of a node, as the viewer words it (``epoch N: text``)."""
    event = [e for e in explained["events"] if e["rule"] not in ("loaded", "recorded")][-1]
    return f"epoch {event['epoch']}: {event['text']}"


async def test_a_conclusion_disputed_in_a_batch_gives_both_causes_in_the_viewer(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            evidence=[
                {
                    "key": "E1",
                    "claim": f"Lead in the {prefix} brook was 40 ppb.",
                    "subject": f"{prefix} brook",
                    "predicate": "lead",
                    "object": "40 ppb",
                },
                {
                    "key": "E3",
                    "claim": f"Trout died in the {prefix} brook in 2019.",
                    "subject": f"{prefix} trout",
                    "predicate": "died",
                    "object": "2019",
                },
            ],
            conclusions=[{"key": "K", "statement": f"The {prefix} brook is unsafe."}],
            edges=[
                {"type": "depends_on", "from": "K", "to": "E1", "group": "a"},
                {"type": "depends_on", "from": "K", "to": "E3", "group": "b"},
            ],
        )
    )
    await app.revise_many(
        [
            {"fact": f"No trout died in the {prefix} brook in 2019.", "target": p("E3"), "key": p("G2")},
            {
                "fact": f"Lead in the {prefix} brook was 5 ppb.",
                "triple": f"{prefix} brook|lead|5 ppb",
                "key": p("G1"),
                "policy": "preserve_both",
            },
        ]
    )
    explained = await app.explain(p("K"))
    assert explained["state"] == "disputed", explained
    said = last_said(explained)
    assert p("E1") in said and p("E3") in said, said
    shown = {n["key"]: n for n in (await app.snapshot())["nodes"]}
    assert shown[p("K")]["state"] == "disputed"
    assert shown[p("K")]["why"] == said, (shown[p("K")]["why"], said)


async def test_a_dispute_back_after_its_refuter_died_names_only_its_sides(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    slot = f"{prefix} mast|height"
    await app.load(
        investigation(
            prefix,
            evidence=[
                {
                    "key": "E",
                    "claim": f"The {prefix} mast is 10 m tall.",
                    "subject": f"{prefix} mast",
                    "predicate": "height",
                    "object": "10 m",
                }
            ],
        )
    )
    await app.revise(f"The {prefix} mast is 20 m tall.", triple=f"{slot}|20 m", key=p("F1"))
    await app.revise(
        f"The {prefix} mast is 30 m tall.", triple=f"{slot}|30 m", key=p("F2"), policy="preserve_both"
    )
    await app.revise(f"The {prefix} mast is 40 m tall.", triple=f"{slot}|40 m", key=p("F3"))
    back = await app.revise(f"The {prefix} 40 m figure was a typo.", target=p("F3"), key=p("F4"))
    assert {p("F1"), p("F2")} <= set(back["disputed"]), back
    shown = {n["key"]: n for n in (await app.snapshot())["nodes"]}
    for side, rival in ((p("F1"), p("F2")), (p("F2"), p("F1"))):
        explained = await app.explain(side)
        event = explained["events"][-1]
        assert explained["state"] == "disputed" and event["rule"] == "disputed", explained
        assert event["cause"] == [rival], event
        assert event["text"].startswith(f"disputed: neither side won ({rival})"), event
        assert shown[side]["why"] == last_said(explained), (shown[side]["why"], explained)


async def test_a_side_dead_since_is_no_rival_in_the_viewer(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    slot = f"{prefix} pylon|height"
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "D", "claim": f"The {prefix} pylon was surveyed."},
                {
                    "key": "E1",
                    "claim": f"The {prefix} pylon is 10 m tall.",
                    "subject": f"{prefix} pylon",
                    "predicate": "height",
                    "object": "10 m",
                },
                {"key": "X", "claim": f"The {prefix} lamp weighs 5 kg."},
            ],
            # C keeps the dead E1 stored (a non-critical consumer), so its disputes edges stay
            conclusions=[{"key": "C", "statement": f"The {prefix} pylon can carry the lamp."}],
            edges=[
                {"type": "depends_on", "from": "E1", "to": "D"},
                {"type": "depends_on", "from": "C", "to": "X"},
                {"type": "depends_on", "from": "C", "to": "E1", "critical": False},
            ],
        )
    )
    for key, height in (("F1", "20 m"), ("F2", "30 m")):
        await app.revise(
            f"The {prefix} pylon is {height} tall.",
            triple=f"{slot}|{height}",
            key=p(key),
            policy="preserve_both",
        )
    await app.revise(f"The {prefix} pylon was never surveyed.", target=p("D"), key=p("G"))
    shown = {n["key"]: n for n in (await app.snapshot())["nodes"]}
    assert shown[p("E1")]["state"] == "invalidated", shown[p("E1")]
    for side, rival in ((p("F1"), p("F2")), (p("F2"), p("F1"))):
        out = (await app.explain(side))["why_dead"]
        assert [a["key"] for a in out["attackers"]] == [rival], out
        assert [a["key"] for a in out["past_attackers"]] == [p("E1")], out
        assert shown[side]["state"] == "disputed" and shown[side]["rivals"] == [rival], shown[side]
