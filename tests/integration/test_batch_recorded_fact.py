"""A batch that repeats a fact already recorded compares its later facts with that fact's evidence.

Re-running a facts file with one new line is the usual way a batch repeats a stored fact: the
repeated line is "already recorded" and changes nothing, but its evidence is stored and holds,
so a later line of the batch that contradicts it must be judged against it, as one revision at a
time does (docs/time.md: "in a batch, as if the facts were revised one at a time"). Each scenario
runs twice on the real stores, under two prefixes, once as a batch and once fact by fact; the
states and valid times must agree, and ``check`` must find no overlapping values.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def ship(prefix: str) -> str:
    """A ship's single-valued master, one value loaded for 2000-2005."""
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"Who commands the ship {prefix}?"},
            "evidence": [
                {
                    "key": f"{prefix}A",
                    "claim": f"Ada Quill commands the ship {prefix}.",
                    "subject": f"ship {prefix}",
                    "predicate": "master",
                    "object": "Ada Quill",
                    "valid_from": "2000-01-01",
                    "valid_to": "2005-01-01",
                }
            ],
        }
    )


def master(prefix: str, name: str, start: str | None) -> dict:
    fact = dict(fact=f"{name} commands the ship {prefix}.", triple=f"ship {prefix}|master|{name}")
    if start:
        fact["valid_from"] = start
    return fact


async def _run(app, prefix: str, timed: bool, as_batch: bool) -> tuple[dict, list]:
    await app.load(ship(prefix))
    stored = master(prefix, "Odo Brask", "2024-01-01" if timed else None)
    first = await app.revise(stored.pop("fact"), **stored)
    # the stored fact again (already recorded), then a value that contradicts it: untimed, it
    # refutes it; from 2018, it holds only until the stored value starts in 2024
    facts = [
        master(prefix, "Odo Brask", "2024-01-01" if timed else None),
        master(prefix, "Ivo Tarn", "2018-01-01" if timed else None),
    ]
    if as_batch:
        results = await app.revise_many(facts)
    else:
        results = []
        for fact in facts:
            results.append(await app.revise(fact.pop("fact"), **fact))
    assert results[0]["note"] == (
        f"already recorded as {first['new_evidence']} (epoch {first['epoch']}); nothing changed"
    )
    status = await app.status()
    states = {
        n["text"].split(" commands")[0]: (n["state"], n.get("valid_from"), n.get("valid_to"))
        for n in status["nodes"]
        if n["type"] == "evidence" and f"ship {prefix}." in n["text"]
    }
    return states, [p for p in (await app.check())["problems"] if f"ship {prefix}|" in p]


@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "timed"])
async def test_a_batch_repeating_a_recorded_fact_equals_its_facts_one_at_a_time(app, prefix, timed):
    one, one_problems = await _run(app, f"{prefix}one", timed, as_batch=False)
    many, many_problems = await _run(app, f"{prefix}bat", timed, as_batch=True)
    assert many == one
    assert many_problems == [] and one_problems == []
    if timed:
        assert many["Ivo Tarn"] == ("superseded", "2018-01-01", "2024-01-01")
        assert many["Odo Brask"] == ("alive", "2024-01-01", None)
    else:
        assert many["Odo Brask"][0] == "refuted" and many["Ivo Tarn"][0] == "alive"


async def test_a_later_fact_of_the_batch_may_pin_the_recorded_fact(app, prefix):
    """A line naming the repeated fact's evidence as its ``target`` acts on it, as one at a time."""
    await app.load(ship(prefix))
    stored = master(prefix, "Odo Brask", None)
    first = await app.revise(stored.pop("fact"), **stored)
    key = first["new_evidence"]
    results = await app.revise_many(
        [
            master(prefix, "Odo Brask", None),
            dict(fact=f"The log naming Odo Brask master of the ship {prefix} was forged.", target=key),
        ]
    )
    assert results[0]["note"].startswith(f"already recorded as {key} (epoch {first['epoch']})")
    assert results[1]["refuted"] == [key]
    states = {n["key"]: n["state"] for n in (await app.status())["nodes"]}
    assert states[key] == "refuted" and states[results[1]["new_evidence"]] == "alive"


async def test_a_recorded_fact_repeated_with_another_start_is_refused(app, prefix):
    """A fact repeated with another ``valid_from`` than its record's would be "already recorded;
    nothing changed" and its date dropped without a word: refused instead (exit 2, nothing
    written), as a repeated fact with another decision is. Its own start, or none, is no decision."""
    from memory_core.core.errors import InputError

    await app.load(ship(prefix))
    stored = master(prefix, "Odo Brask", "2024-01-01")
    first = await app.revise(stored.pop("fact"), **stored)
    before = await app.status()
    again = master(prefix, "Odo Brask", "2014-01-01")
    with pytest.raises(InputError, match="valid from 2024-01-01, not from 2014-01-01"):
        await app.revise(again.pop("fact"), **again)
    with pytest.raises(InputError, match="not from 2014-01-01"):
        await app.revise_many(
            [master(prefix, "Ivo Tarn", "2018-01-01"), master(prefix, "Odo Brask", "2014-01-01")]
        )
    assert await app.status() == before
    for start in ("2024-01-01", "2024-01-01T00:00:00Z", None):
        same = master(prefix, "Odo Brask", start)
        result = await app.revise(same.pop("fact"), **same)
        assert result["note"].startswith(f"already recorded as {first['new_evidence']}")
