"""A timed fact joins the question of the value it contradicts in time, not of one it is disjoint from.

A fact joins the question of what it contradicts (docs/revision.md). For a timed fact the
structured judge says "contradicts" of every value of its subject and predicate with another
object, but valid time reads a value whose interval does not overlap the fact's as no
contradiction ("disjoint: both stay as they are", docs/time.md). So a fact that ends a value of
question B and is disjoint from a value of question A joins B (the real stores, the session root).
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def question(prefix: str, key: str, text: str, city: str, start: str, end: str | None) -> str:
    ev = {
        "key": f"{prefix}{key}_{city}",
        "claim": f"Ilse {prefix} lives in {city}.",
        "subject": f"ilse {prefix}",
        "predicate": "lives in",
        "object": city,
        "valid_from": start,
    }
    if end:
        ev["valid_to"] = end
    return json.dumps({"question": {"key": f"{prefix}{key}", "text": text}, "evidence": [ev]})


@pytest.mark.parametrize("as_batch", [False, True], ids=["revise", "revise_many"])
async def test_a_timed_fact_joins_the_question_of_the_value_it_ends(app, prefix, as_batch):
    await app.load(
        question(prefix, "QA", f"Where has Ilse {prefix} lived?", "Lisbon", "2010-01-01", "2015-01-01")
    )
    await app.load(question(prefix, "QB", f"What does Ilse {prefix} do?", "Porto", "2015-01-01", None))
    fact = dict(
        fact=f"Ilse {prefix} lives in Berlin.",
        triple=f"ilse {prefix}|lives in|Berlin",
        key=f"{prefix}B",
        valid_from="2018-06-01",
    )
    if as_batch:
        (result,) = await app.revise_many([fact])
    else:
        result = await app.revise(fact.pop("fact"), **fact)
    assert result["validity"] == {f"{prefix}QA_Lisbon": "disjoint", f"{prefix}QB_Porto": "ends_stored"}
    assert result["question"] == f"{prefix}QB"
    nodes = {n["key"]: n for n in (await app.status())["nodes"]}
    assert nodes[f"{prefix}B"]["question"] == f"{prefix}QB"
    assert nodes[f"{prefix}QB_Porto"]["valid_to"] == "2018-06-01"
    assert nodes[f"{prefix}QA_Lisbon"]["state"] == "alive"
