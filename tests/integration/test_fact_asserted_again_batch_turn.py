"""A batch line asserting a value again is judged with its decisions by the state at its turn.

A stored value's record holds when the batch starts; an earlier line of the batch ends it, so
the line asserting the value again is news, and its decision (a later ``valid_from``, a
``target``) is the news's, as one revision at a time takes it: the batch must not refuse it
for what the old record does not hold. And a line whose record still holds at its turn is
refused for a decision its record does not hold, as one revision at a time refuses it, even
when that record is an earlier line's of the same batch.
"""

from __future__ import annotations

import json

import pytest

from memory_core.core.errors import InputError
from memory_core.core.requests import fact_key

pytestmark = pytest.mark.slow


def meadow(prefix: str) -> str:
    """A single-valued slot (where Otto grazes his goats), Lisbon loaded."""
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"Where does Otto {prefix} graze his goats?"},
            "evidence": [
                {
                    "key": f"{prefix}E",
                    "claim": f"Otto {prefix} grazes his goats in Lisbon.",
                    "subject": f"Otto {prefix}",
                    "predicate": "grazes goats in",
                    "object": "Lisbon",
                }
            ],
        }
    )


def grazes(prefix: str, city: str, since: str | None = None, **more) -> dict:
    fact = dict(
        fact=f"Otto {prefix} grazes his goats in {city}.", triple=f"Otto {prefix}|grazes goats in|{city}"
    )
    return dict(fact, **more) if since is None else dict(fact, valid_from=since, **more)


async def records(app, prefix: str) -> list[tuple]:
    """(city, state, valid_from, valid_to) of every record of the slot, sorted."""
    return sorted(
        (n["text"].rsplit(" ", 1)[1].rstrip("."), n["state"], n.get("valid_from"), n.get("valid_to"))
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence" and n["text"].startswith(f"Otto {prefix} grazes his goats in ")
    )


async def problems(app, prefix: str) -> list:
    return [p for p in (await app.check())["problems"] if f"Otto {prefix}" in json.dumps(p)]


async def both_ways(app, prefix: str, stored: list[dict], batch) -> tuple[list, list]:
    """The slot's records after ``stored`` then ``batch(prefix)`` one revision at a time, and
    after ``stored`` then ``batch`` as one batch (each on its own slot)."""
    found = []
    for name, as_batch in (("one", False), ("bat", True)):
        slot = f"{prefix}{name}"
        await app.load(meadow(slot))
        for fact in stored:
            await app.revise(**grazes(slot, **fact))
        facts = batch(slot)
        results = await app.revise_many(facts) if as_batch else [await app.revise(**f) for f in facts]
        assert not any(r.get("already_applied") for r in results)
        assert await problems(app, slot) == []
        found.append(await records(app, slot))
    return found[0], found[1]


async def test_a_later_start_after_an_earlier_line_ended_the_stored_period(app, prefix):
    one, many = await both_ways(
        app,
        prefix,
        [dict(city="Porto", since="2015-01-01")],
        lambda p: [grazes(p, "Berlin", "2018-01-01"), grazes(p, "Porto", "2020-01-01")],
    )
    assert many == one
    assert ("Porto", "alive", "2020-01-01", None) in many


async def test_a_target_after_an_earlier_line_refuted_the_stored_record(app, prefix):
    one, many = await both_ways(
        app,
        prefix,
        [dict(city="Porto")],
        lambda p: [grazes(p, "Berlin"), grazes(p, "Porto", target=fact_key(grazes(p, "Berlin")["fact"]))],
    )
    assert many == one
    assert {city for city, state, _, _ in many if state == "alive"} == {"Porto"}


async def test_an_earlier_lines_record_that_holds_refuses_another_start_not_its_own_edge(app, prefix):
    """Porto from 2015 (line 1), Berlin from 2018 (line 2): Porto from 2016 is Porto's
    2015-2018 period again with another start, refused as one revision at a time refuses it.
    A line saying again what an earlier line recorded, with the edge that line added, is
    already recorded."""
    slot = json.loads(meadow(prefix))
    slot["hypotheses"] = [{"key": f"{prefix}H", "statement": f"Otto {prefix} farms in Portugal."}]
    await app.load(json.dumps(slot))
    before = await app.status()
    lines = [grazes(prefix, "Porto", "2015-01-01"), grazes(prefix, "Berlin", "2018-01-01")]
    with pytest.raises(
        InputError, match="facts line 3: the fact is already recorded as .* not from 2016-01-01"
    ):
        await app.revise_many(lines + [grazes(prefix, "Porto", "2016-01-01")])
    assert await app.status() == before
    line = grazes(prefix, "Porto", supports=f"{prefix}H")
    first, second = await app.revise_many([line, line])
    assert second["already_applied"] and second["new_evidence"] == first["new_evidence"]
    assert await problems(app, prefix) == []
