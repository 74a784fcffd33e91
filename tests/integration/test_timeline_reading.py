"""How valid time reads a timed fact against its slot's values, through the real stores.

* A timed fact revised into one inquiry still takes its place among the values of its slot in
  every question: time is the world's, not the inquiry's (before, the value of the other
  question stayed open-ended beside it, ``check`` reported the overlap and recall answered the
  old value for today).
* A stored value with an end and no start held at most until its end: a value starting then or
  later is after it (``disjoint``), not a contradiction time cannot order (before, the old value
  was refuted, "never true").
* A late value ends where the first value it precedes starts, and its explanation names that
  value only (before, every later value of the slot).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def states(status: dict, prefix: str) -> dict:
    return {
        n["key"][len(prefix) :]: (n["state"], n.get("valid_from"), n.get("valid_to"))
        for n in status["nodes"]
        if n["key"].startswith(prefix)
    }


def value(prefix: str, key: str, subject: str, predicate: str, obj: str, claim: str, **time) -> dict:
    return {
        "key": prefix + key,
        "claim": claim,
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        **time,
    }


def limit_of_40_t(p: str, bridge: str) -> dict:
    """Question Q1: the bridge's weight limit, 40 t from 2010 (E40)."""
    claim = f"The {bridge} has a weight limit of 40 t."
    return {
        "question": {"key": p + "Q1", "text": f"What is the weight limit of the {bridge}?"},
        "evidence": [value(p, "E40", bridge, "weight limit", "40 t", claim, valid_from="2010-01-01")],
    }


async def test_a_timed_fact_revised_into_one_inquiry_ends_another_inquirys_value(app, prefix):
    p = f"{prefix}ti"
    bridge = f"kell bridge {p}"
    await app.load(limit_of_40_t(p, bridge))
    await app.load(
        {
            "question": {"key": p + "Q2", "text": f"When was the {bridge} repaired?"},
            "evidence": [value(p, "R1", bridge, "repaired", "2017", f"The {bridge} was repaired in 2017.")],
        }
    )
    result = await app.revise(
        f"The {bridge} has a weight limit of 30 t.",
        triple=f"{bridge}|weight limit|30 t",
        key=p + "E30",
        valid_from="2018-03-01",
        inquiry=p + "Q2",
    )
    assert result["question"] == p + "Q2", result  # it joins the inquiry named
    assert result["validity"] == {p + "E40": "ends_stored"}, result
    got = states(await app.status(), p)
    assert got["E40"] == ("superseded", "2010-01-01", "2018-03-01"), got
    assert got["E30"] == ("alive", "2018-03-01", None), got
    assert [x for x in (await app.check())["problems"] if p in str(x)] == []
    now = (await app.recall(f"What is the weight limit of the {bridge}?", inquiry=p + "Q2"))["falsify"]
    assert now["nodes"] == [p + "E30"], now


async def test_a_value_with_an_end_and_no_start_is_before_a_value_starting_after_it(app, prefix):
    p = f"{prefix}tv"
    club = f"tarn club {p}"
    await app.load(
        {
            "question": {"key": p + "Q", "text": f"Who chairs the {club}?"},
            "evidence": [
                value(p, "A", club, "chair", "Ann", f"Ann chairs the {club}.", valid_to="2015-01-01")
            ],
        }
    )
    result = await app.revise(
        f"Bo chairs the {club}.", triple=f"{club}|chair|Bo", key=p + "B", valid_from="2016-01-01"
    )
    assert result["validity"] == {p + "A": "disjoint"}, result
    assert result["refuted"] == [], result
    got = states(await app.status(), p)
    assert got["A"] == ("alive", None, "2015-01-01") and got["B"] == ("alive", "2016-01-01", None), got


async def test_a_late_value_is_explained_by_the_first_value_it_precedes(app, prefix):
    p = f"{prefix}tl"
    firm = f"orbital {p}"
    await app.load(
        {
            "question": {"key": p + "Q", "text": f"Who is the CEO of {firm}?"},
            "evidence": [
                value(
                    p,
                    "C_alan",
                    firm,
                    "ceo",
                    "Alan Reed",
                    f"Alan Reed is the CEO of {firm}.",
                    valid_from="2010-01-01",
                )
            ],
        }
    )
    await app.revise(
        f"Beth Cole is the CEO of {firm}.",
        triple=f"{firm}|ceo|Beth Cole",
        key=p + "C_beth",
        valid_from="2016-05-01",
    )
    await app.revise(
        f"Dana Wu is the CEO of {firm}.",
        triple=f"{firm}|ceo|Dana Wu",
        key=p + "C_dana",
        valid_from="2008-01-01",
    )
    got = states(await app.status(), p)
    assert got["C_dana"] == ("superseded", "2008-01-01", "2010-01-01"), got
    ended = [e for e in (await app.explain(p + "C_dana"))["events"] if e["rule"] == "validity_ended"]
    assert ended and all(e["cause"] == [p + "C_alan"] for e in ended), ended
    assert all(p + "C_beth" not in e["text"] for e in ended), ended


async def test_a_timed_fact_for_the_same_period_as_another_inquirys_value_is_refused_there(app, prefix):
    """The same period in another question is a contradiction there: the fact would join that
    question, so naming another inquiry is refused, nothing written (before, the two values
    were left overlapping, which check reports and no repair settles)."""
    from memory_core.core.errors import InputError

    p = f"{prefix}ts"
    bridge = f"tess bridge {p}"
    await app.load(limit_of_40_t(p, bridge))
    await app.load({"question": {"key": p + "Q2", "text": f"Who paints the {bridge}?"}})
    before = states(await app.status(), p)
    with pytest.raises(InputError, match=f"{p}E40.*{p}Q1"):
        await app.revise(
            f"The {bridge} has a weight limit of 30 t.",
            triple=f"{bridge}|weight limit|30 t",
            key=p + "E30",
            valid_from="2010-01-01",
            inquiry=p + "Q2",
        )
    assert states(await app.status(), p) == before
    # in a batch the refusal names its line, as every other refusal of a batch line does
    with pytest.raises(InputError, match=f"^facts line 2: .*{p}E40"):
        await app.revise_many(
            [
                dict(fact=f"The {bridge} was repainted green.", inquiry=p + "Q2"),
                dict(
                    fact=f"The {bridge} has a weight limit of 30 t.",
                    triple=f"{bridge}|weight limit|30 t",
                    valid_from="2010-01-01",
                    inquiry=p + "Q2",
                ),
            ]
        )
    assert states(await app.status(), p) == before
