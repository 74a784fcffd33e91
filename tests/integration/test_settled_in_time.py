"""A timed value taken out of dispute takes its place in its slot's timeline.

In dispute, a value could not end another value of its single-valued slot: whether it held
was open. Once the dispute is settled in its favour -- ``resolve`` names it the winner, or a
revision kills its rival -- it holds, and the value that started before it and still held
then ends where it starts, exactly as had it been revised alive (before, both stayed alive
open-ended and ``check`` reported the overlap). The real stores, on the session root: every
scenario under its own prefix; the value it ends is in the change's view or only found by
subject and predicate.
"""

from __future__ import annotations

import json

import pytest
from cranes import crane, lifts

pytestmark = pytest.mark.slow


async def states(app, prefix: str) -> dict:
    status = await app.status()
    return {
        n["key"][len(prefix) :]: (n["state"], n.get("valid_from"), n.get("valid_to"))
        for n in status["nodes"]
        if n["key"].startswith(prefix)
    }


async def problems(app, prefix: str) -> list[str]:
    return [str(p) for p in (await app.check()).get("problems", []) if prefix in str(p)]


async def revise(app, fact: dict) -> dict:
    fact = dict(fact)
    return await app.revise(fact.pop("fact"), **fact)


async def test_the_winner_of_a_resolve_ends_the_value_that_held_when_it_starts(app, prefix):
    """E0 (10 t, untimed) is disputed by 40 t and by 20 t from 2010; 10 t from 2012 (B1,
    latest_wins) holds open-ended; 50 t from 2015 (B2, preserve_both) is disputed with E0, so B1
    is left alive (B2 may not hold). ``resolve E0 --winner B2``: B2 holds from 2015, so B1
    held until 2015 (superseded in time, by B2), and check finds nothing; undo puts B1 back."""
    p = f"{prefix}rw"
    await app.load(crane(p, [("E0", "10 t", None, True)]))
    await revise(app, lifts(p, "A1", "40 t", policy="preserve_both"))
    await revise(app, lifts(p, "A2", "20 t", policy="preserve_both", valid_from="2010-01-01"))
    await revise(app, lifts(p, "B1", "10 t", policy="latest_wins", valid_from="2012-01-01"))
    await revise(app, lifts(p, "B2", "50 t", policy="preserve_both", valid_from="2015-01-01"))
    before = await states(app, p)
    assert before["B1"] == ("alive", "2012-01-01", None) and before["B2"][0] == "disputed", before
    result = await app.resolve(p + "E0", winner=p + "B2")
    after = await states(app, p)
    assert after["B2"] == ("alive", "2015-01-01", None), after
    assert after["B1"] == ("superseded", "2012-01-01", "2015-01-01"), after
    assert after["E0"][0] == "refuted", after
    assert await problems(app, p) == []
    why = await app.explain(p + "B1")
    assert p + "B2" in json.dumps(why), why
    # the resolve says which end it set, as a revision does
    assert result["intervals"] == {
        p + "B1": {"valid_from": "2012-01-01", "valid_to": "2015-01-01", "was": None}
    }
    await app.undo()
    assert await states(app, p) == before


async def test_a_resolve_ends_a_value_of_the_slot_found_only_by_its_subject_and_predicate(app, prefix):
    """C1 (30 t from 2012) is loaded beside E0 (10 t, untimed) and rests on nothing, supports
    nothing: no edge joins it to the dispute, so the resolve's view does not hold it. B2 (50 t
    from 2015, preserve_both) disputes E0; ``resolve E0 --winner B2`` ends C1 in 2015 all the same,
    and undo puts C1's open end back."""
    p = f"{prefix}rs"
    await app.load(crane(p, [("E0", "10 t", None, True), ("C1", "30 t", "2012-01-01", False)]))
    await revise(app, lifts(p, "B2", "50 t", policy="preserve_both", valid_from="2015-01-01"))
    before = await states(app, p)
    assert before["C1"] == ("alive", "2012-01-01", None)
    await app.resolve(p + "E0", winner=p + "B2")
    after = await states(app, p)
    assert after["B2"] == ("alive", "2015-01-01", None), after
    assert after["C1"] == ("superseded", "2012-01-01", "2015-01-01"), after
    assert await problems(app, p) == []
    await app.undo()  # the end read from outside the resolve's view is put back too
    assert await states(app, p) == before


def _ended_by_revision(p: str) -> tuple[str, list[dict], list[dict]]:
    load = crane(p, [("E0", "10 t", None, True), ("C1", "30 t", "2012-01-01", False)])
    before = [lifts(p, "B2", "50 t", policy="preserve_both", valid_from="2015-01-01")]
    batch = [
        dict(fact=f"The {p} figure E0 was a misprint.", target=p + "E0", key=p + "M"),
        lifts(p, "D", "70 t", valid_from="2020-01-01"),
    ]
    return load, before, batch


async def test_a_revision_that_ends_the_dispute_places_the_value_in_time_as_a_batch_too(app, prefix):
    """The dispute of B2 (50 t from 2015) with E0 ends when a misprint refutes E0: B2 holds and
    ends C1 (30 t from 2012) in 2015; 70 t from 2020 then ends B2. Fact by fact and as one
    batch, the same timeline, and check finds nothing."""
    finals = []
    for mode in ("one", "bat"):
        p = f"{prefix}rv{mode}"
        load, before, batch = _ended_by_revision(p)
        await app.load(load)
        for fact in before:
            await revise(app, fact)
        if mode == "bat":
            await app.revise_many(batch)
        else:
            for fact in batch:
                await revise(app, fact)
        final = await states(app, p)
        assert final["B2"] == ("superseded", "2015-01-01", "2020-01-01"), final
        assert final["C1"] == ("superseded", "2012-01-01", "2015-01-01"), final
        assert final["D"] == ("alive", "2020-01-01", None), final
        assert await problems(app, p) == []
        finals.append(final)
    assert finals[0] == finals[1]
