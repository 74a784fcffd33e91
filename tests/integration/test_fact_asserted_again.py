"""A fact asserted again after its record was refuted is believed again.

A value that comes back (Porto, then Berlin, then Porto again) is news: after revising by a
fact, the fact is believed, unless the policy prefers what contradicts it (AGM's success
postulate). A record is "already recorded; nothing changed" only while it holds. Checked one
revision at a time and as a batch (the same final states), with the value the last fact names
as the only one alive after every step, and ``check`` clean.
"""

from __future__ import annotations

import json
import random

import pytest

pytestmark = pytest.mark.slow

CITIES = ("Vexmoor", "Tallowick", "Brindlecote")


def town(prefix: str) -> str:
    """A single-valued slot (where Zia keeps her bees), Vexmoor loaded. The towns' names are no
    other test's: on the session root another test's untripled claim about a real city ("...
    lives in Lisbon now") lay near enough to leave a revision to the caller."""
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"Where does Zia {prefix} keep her bees?"},
            "evidence": [
                {
                    "key": f"{prefix}E",
                    "claim": f"Zia {prefix} keeps her bees in Vexmoor.",
                    "subject": f"Zia {prefix}",
                    "predicate": "keeps bees in",
                    "object": "Vexmoor",
                }
            ],
        }
    )


def moves(prefix: str, city: str) -> dict:
    return dict(fact=f"Zia {prefix} keeps her bees in {city}.", triple=f"Zia {prefix}|keeps bees in|{city}")


async def cities(app, prefix: str) -> dict[str, list[str]]:
    """City -> the states of its records, sorted."""
    found: dict[str, list[str]] = {}
    for n in (await app.status())["nodes"]:
        if n["type"] == "evidence" and n["text"].startswith(f"Zia {prefix} keeps her bees in "):
            city = n["text"].rsplit(" ", 1)[1].rstrip(".")
            found.setdefault(city, []).append(n["state"])
    return {c: sorted(s) for c, s in found.items()}


def alive(found: dict[str, list[str]]) -> set[str]:
    return {c for c, states in found.items() if "alive" in states}


async def problems(app, prefix: str) -> list:
    return [p for p in (await app.check())["problems"] if f"Zia {prefix}" in json.dumps(p)]


async def test_a_value_that_comes_back_is_believed_again(app, prefix):
    await app.load(town(prefix))
    for city in ("Tallowick", "Brindlecote", "Tallowick", "Vexmoor", "Tallowick"):
        result = await app.revise(**moves(prefix, city))
        assert not result.get("already_applied"), result["note"]
        assert alive(await cities(app, prefix)) == {city}
    again = await app.revise(**moves(prefix, "Tallowick"))  # its record holds: a repeat changes nothing
    assert again["already_applied"] and again["note"].startswith("already recorded as ")
    states = {n["key"]: (n["state"], n["text"]) for n in (await app.status())["nodes"]}
    assert states[again["new_evidence"]] == ("alive", f"Zia {prefix} keeps her bees in Tallowick.")
    assert await problems(app, prefix) == []


@pytest.mark.parametrize("seed", [3, 8])
async def test_a_batch_of_values_that_come_back_equals_them_one_at_a_time(app, prefix, seed):
    draw = random.Random(seed)
    history = [draw.choice(CITIES) for _ in range(9)]
    one, many = f"{prefix}one", f"{prefix}bat"
    await app.load(town(one))
    for city in history:
        assert not (await app.revise(**moves(one, city))).get("to_decide")
    await app.load(town(many))
    results = await app.revise_many([moves(many, city) for city in history])
    assert len(results) == len(history) and not any(r.get("to_decide") for r in results)
    assert await cities(app, many) == await cities(app, one)
    assert alive(await cities(app, many)) == {history[-1]}
    assert await problems(app, one) == [] and await problems(app, many) == []


async def test_a_later_line_repeating_a_stored_value_an_earlier_line_ended(app, prefix):
    """Tallowick is stored and holds; a batch moves Zia to Brindlecote and back to Tallowick: the second
    line is news at its turn, not "already recorded" as the batch found it at its start."""
    await app.load(town(prefix))
    porto = await app.revise(**moves(prefix, "Tallowick"))
    first, second = await app.revise_many([moves(prefix, "Brindlecote"), moves(prefix, "Tallowick")])
    assert not second.get("already_applied") and second["refuted"] == [first["new_evidence"]]
    assert second["new_evidence"] == porto["new_evidence"] + "_2"
    assert alive(await cities(app, prefix)) == {"Tallowick"}
    # nothing before it in the batch ends Tallowick: the repeat is "already recorded" as its record
    other = dict(fact=f"Zia {prefix} owns a red bicycle.")
    _, repeat = await app.revise_many([other, moves(prefix, "Tallowick")])
    assert repeat["already_applied"] and repeat["new_evidence"] in (
        porto["new_evidence"],
        second["new_evidence"],
    )
    assert await problems(app, prefix) == []


async def test_a_key_given_for_a_record_that_holds_no_more_changes_nothing_and_says_why(app, prefix):
    await app.load(town(prefix))
    await app.revise(**moves(prefix, "Tallowick"))
    before = await app.status()
    result = await app.revise(**moves(prefix, "Vexmoor"), key=f"{prefix}E")
    assert result["already_applied"] and "holds no more (refuted)" in result["note"]
    assert "revise it without a key" in result["note"]
    assert await app.status() == before


@pytest.mark.parametrize("as_batch", [False, True], ids=["revise", "revise_many"])
async def test_a_value_true_again_from_a_later_date_is_a_new_period_of_it(app, prefix, as_batch):
    """Tallowick from 2015, Brindlecote from 2018 (Tallowick held until then), Tallowick again from 2020: a new
    period of Tallowick, Brindlecote held until 2020. The same start again is "already recorded"."""
    await app.load(town(prefix))
    steps = [("Tallowick", "2015-01-01"), ("Brindlecote", "2018-01-01"), ("Tallowick", "2020-01-01")]
    facts = [dict(moves(prefix, city), valid_from=start) for city, start in steps]
    if as_batch:
        results = await app.revise_many(facts)
    else:
        results = [await app.revise(**fact) for fact in facts]
    assert not any(r.get("already_applied") or r.get("to_decide") for r in results)
    periods = sorted(
        (n["text"].rsplit(" ", 1)[1].rstrip("."), n["state"], n.get("valid_from"), n.get("valid_to"))
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence"
        and n.get("valid_from")
        and n["text"].startswith(f"Zia {prefix} keeps her bees in ")
    )
    assert periods == [
        ("Brindlecote", "superseded", "2018-01-01", "2020-01-01"),
        ("Tallowick", "alive", "2020-01-01", None),
        ("Tallowick", "superseded", "2015-01-01", "2018-01-01"),
    ]
    again = await app.revise(**dict(moves(prefix, "Tallowick"), valid_from="2020-01-01"))
    assert again["already_applied"] and again["new_evidence"] == results[2]["new_evidence"]
    assert await problems(app, prefix) == []


async def test_one_fact_in_two_unicode_spellings_is_one_fact(app, prefix):
    """'Zürich' with its 'ü' composed, then as 'u' and a combining diaeresis: the same text
    (Unicode canonical equivalence), so the same fact, already recorded; it neither contradicts
    nor refutes its own record."""
    import unicodedata

    await app.load(town(prefix))
    first = await app.revise(**moves(prefix, unicodedata.normalize("NFC", "Zürich")))
    again = await app.revise(**moves(prefix, unicodedata.normalize("NFD", "Zürich")))
    assert again["already_applied"] and again["new_evidence"] == first["new_evidence"], again
    assert alive(await cities(app, prefix)) == {"Zürich"}


async def records(app, prefix: str) -> dict[str, str]:
    """Key -> state of every record of Zia's bees."""
    return {
        n["key"]: n["state"]
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence" and n["text"].startswith(f"Zia {prefix} keeps her bees in ")
    }


async def test_a_value_flipped_back_and_forth_keeps_one_alive_record(app, prefix):
    """Tallowick, Brindlecote, Tallowick, Brindlecote, Tallowick: each return is a new record that
    takes the place of its text's earlier records (they stay dead, "the same fact was asserted
    again"), not one alive record more per return; an undo gives the place back."""
    await app.load(town(prefix))
    flips = ["Tallowick", "Brindlecote"] * 3
    results = [await app.revise(**moves(prefix, city)) for city in flips[:-1]]
    before = await records(app, prefix)
    results.append(await app.revise(**moves(prefix, flips[-1])))
    found = await cities(app, prefix)
    assert found["Brindlecote"] == ["alive", "refuted", "refuted"], found
    assert found["Tallowick"] == ["refuted"] * 3 and found["Vexmoor"] == ["refuted"], found
    first, last = results[1]["new_evidence"], results[-1]["new_evidence"]
    assert last == f"{first}_3" and results[-1]["restated"] == [first, f"{first}_2"]
    assert "takes the place of its earlier records" in results[-1]["note"]
    why = (await app.explain(first))["events"][-1]
    assert why["rule"] == "restated" and why["cause"] == [last], why
    assert why["text"].startswith("stays dead: the same fact was asserted again as ")
    assert (await app.undo())["undone"] == results[-1]["epoch"]
    assert await records(app, prefix) == before
    assert [k for k, s in before.items() if s == "alive"] == [results[-2]["new_evidence"]]
    assert await problems(app, prefix) == []


async def test_a_fact_is_recorded_once_whatever_key_its_record_has(app, prefix):
    """The loaded record of a claim holds: the same claim revised (with a key derived from its text,
    the API's or the viewer's readable one) is "already recorded" as it, not a second alive record
    beside it; once it holds no more, the claim asserted again takes its place."""
    from memory_core.core.requests import readable_key

    await app.load(town(prefix))
    vexmoor = moves(prefix, "Vexmoor")
    for key in (None, readable_key(vexmoor["fact"])):
        again = await app.revise(**vexmoor, **({"key": key} if key else {}))
        assert again["already_applied"] and again["new_evidence"] == f"{prefix}E", again
    await app.revise(**moves(prefix, "Tallowick"))
    back = await app.revise(**vexmoor, key=readable_key(vexmoor["fact"]))
    assert back["restated"] == [f"{prefix}E"], back
    found = await records(app, prefix)
    assert found[f"{prefix}E"] == "refuted" and [k for k, s in found.items() if s == "alive"] == [
        back["new_evidence"]
    ]
    assert await problems(app, prefix) == []


async def test_a_fact_without_a_triple_is_recorded_once_under_either_form_of_its_key(app, prefix):
    """A text's key has two forms (the API's hash, the viewer's readable key): a claim recorded
    under one is "already recorded" when revised under the other, with or without a triple."""
    from memory_core.core.requests import readable_key

    await app.load(town(prefix))
    fact = f"Zia {prefix} paints her hives ochre."
    first = await app.revise(fact, inquiry=f"{prefix}Q", record=True)
    again = await app.revise(fact, key=readable_key(fact), inquiry=f"{prefix}Q", record=True)
    assert again["already_applied"] and again["new_evidence"] == first["new_evidence"], again
    assert await problems(app, prefix) == []
