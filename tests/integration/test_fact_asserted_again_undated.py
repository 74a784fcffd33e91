"""A fact asserted again with no date says it holds now.

Porto from 2015, Berlin from 2018 (Porto's record ends then), then "Porto" with no date: the
record of Porto's 2015-2018 period does not hold it (its period ended), so the fact is news,
recorded under the next free key of its text, and Porto is the value believed, not Berlin.
The same when an undated value took over from the dated one before Porto came back. Checked
one revision at a time and as a batch, with ``check`` clean; undo puts everything back. The
undated Porto refutes Berlin as an untimed contradiction (never true), so where Berlin's start
had ended Porto's 2015 record, that record holds on (docs/time.md): asserted again, Porto is a
repeat of a record that holds.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def hive(prefix: str) -> str:
    """A single-valued slot (where Ilse keeps her hives), Lisbon loaded."""
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"Where does Ilse {prefix} keep her hives?"},
            "evidence": [
                {
                    "key": f"{prefix}E",
                    "claim": f"Ilse {prefix} keeps her hives in Lisbon.",
                    "subject": f"Ilse {prefix}",
                    "predicate": "keeps hives in",
                    "object": "Lisbon",
                }
            ],
        }
    )


def hives_in(prefix: str, city: str, since: str | None = None) -> dict:
    fact = dict(
        fact=f"Ilse {prefix} keeps her hives in {city}.", triple=f"Ilse {prefix}|keeps hives in|{city}"
    )
    return fact if since is None else dict(fact, valid_from=since)


async def believed(app, prefix: str) -> set[str]:
    return {
        n["text"].rsplit(" ", 1)[1].rstrip(".")
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence"
        and n["text"].startswith(f"Ilse {prefix} keeps her hives in ")
        and n["state"] == "alive"
    }


async def problems(app, prefix: str) -> list:
    return [p for p in (await app.check())["problems"] if f"Ilse {prefix}" in json.dumps(p)]


@pytest.mark.parametrize("between", [None, "Cairo"], ids=["dated_rival", "undated_rival"])
@pytest.mark.parametrize("as_batch", [False, True], ids=["revise", "revise_many"])
async def test_a_value_asserted_again_with_no_date_after_its_period_ended_is_believed(
    app, prefix, as_batch, between
):
    await app.load(hive(prefix))
    facts = [hives_in(prefix, "Porto", "2015-01-01"), hives_in(prefix, "Berlin", "2018-01-01")]
    facts += [hives_in(prefix, between)] if between else []
    if as_batch:
        *_, last = await app.revise_many(facts + [hives_in(prefix, "Porto")])
    else:
        for fact in facts:
            await app.revise(**fact)
        before = await app.status()
        last = await app.revise(**hives_in(prefix, "Porto"))
    assert not last.get("already_applied"), last["note"]
    assert last["new_evidence"].endswith("_2")
    assert await believed(app, prefix) == {"Porto"}
    assert await problems(app, prefix) == []
    porto = {
        n["key"]: (n["state"], n.get("valid_from"), n.get("valid_to"))
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence" and n["text"] == f"Ilse {prefix} keeps her hives in Porto."
    }
    first = last["new_evidence"][: -len("_2")]
    # Berlin never held: Porto from 2015 was ended by nothing true; Cairo (undated) still ends it
    assert porto[first] == (
        ("alive", "2015-01-01", None) if between is None else ("superseded", "2015-01-01", "2018-01-01")
    )
    if not as_batch:  # undone exactly, and asserted again the same
        await app.undo()
        assert await app.status() == before
        assert (await app.revise(**hives_in(prefix, "Porto")))["new_evidence"] == last["new_evidence"]
    again = await app.revise(**hives_in(prefix, "Porto"))  # its new record holds: a repeat
    holding = {k for k, (state, _, _) in porto.items() if state == "alive"}
    assert again["already_applied"] and again["new_evidence"] in holding, again["note"]
    assert await believed(app, prefix) == {"Porto"}


async def test_a_key_given_for_a_period_that_ended_says_so(app, prefix):
    await app.load(hive(prefix))
    porto = await app.revise(**hives_in(prefix, "Porto", "2015-01-01"))
    await app.revise(**hives_in(prefix, "Berlin", "2018-01-01"))
    before = await app.status()
    result = await app.revise(**hives_in(prefix, "Porto"), key=porto["new_evidence"])
    assert result["already_applied"] and "its period ended 2018-01-01" in result["note"]
    assert await app.status() == before
