"""A question asking when is answered from the timeline of the value it names (Graphiti's
valid_at / invalid_at on an edge): every period the value held, whether it ended or not.

Through the in-process API on the session's shared root (every text names the test's own
invented entities; recall is pinned to the test's inquiry):

* a fact whose valid time ended before today ("When was X a member of ...?", "How long ...?")
  is answered with its valid time, not "no alive belief answers it on TODAY", also at a past
  epoch; asked in the present, it is still read as of today;
* a value asserted again (A, then B, then A again) is answered with both of A's periods, in
  time order, and B, superseded in time, with its own period; the questions about a date, the
  present value, the value before another and the first value read as before;
* the words asking when ("how long", "which year", "since when") are held by a valid time, never
  named as words the fact does not hold; a when-question naming a date is answered for that
  date, not with what holds now; "ever" about a period that ended says so, and "superseded" only
  of a value a revision superseded;
* the value before (after) another across a gap in time is the last that ended before it (the
  first that began after it), not "nothing" on the day next to it.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def fact(key: str, claim: str, subject: str, predicate: str, object_: str, **more) -> dict:
    return {"key": key, "claim": claim, "subject": subject, "predicate": predicate, "object": object_} | more


async def test_a_when_question_about_a_period_that_ended_gives_its_valid_time(app, prefix):
    tag = prefix.strip("_")
    kendra, club = f"Kendra{tag} Vosk", f"Rotor{tag} Club"
    q, member = f"{prefix}Q", f"{prefix}ROT"
    loaded = await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Which clubs has {kendra} belonged to?"},
                "evidence": [
                    fact(
                        member,
                        f"{kendra} was a member of the {club}.",
                        kendra,
                        "member of",
                        club,
                        valid_from="2010-01-01",
                        valid_to="2014-01-01",
                    )
                ],
            }
        )
    )
    for asked in (
        f"When was {kendra} a member of the {club}?",
        f"How long was {kendra} a member of the {club}?",
    ):
        side = (await app.recall(asked, inquiry=q))["falsify"]
        assert side["nodes"] == [member], (asked, side)
        assert "[valid 2010-01-01 to 2014-01-01]" in side["answer"], (asked, side)
        # the words asking when ('long', 'year') are answered by the valid time, not missing from it
        assert side["unheld"] == [] and "does not hold" not in side["answer"], (asked, side)
    for asked in (
        f"In which year was {kendra} a member of the {club}?",
        f"Since when was {kendra} a member of the {club}?",
        f"How many years was {kendra} a member of the {club}?",
    ):
        side = (await app.recall(asked, inquiry=q))["falsify"]
        assert side["nodes"] == [member] and side["unheld"] == [], (asked, side)
        assert "[valid 2010-01-01 to 2014-01-01]" in side["answer"], (asked, side)
    # asked whether it ever held: it did, and its period ended; nothing superseded it
    asked_ever = await app.recall(f"Was {kendra} ever a member of the {club}?", inquiry=q)
    ever = asked_ever["falsify"]
    assert ever["nodes"] == [member] and ever["held_then"]["superseded"] is False, ever
    assert "(its period ended 2014-01-01)" in ever["answer"] and "superseded" not in ever["answer"], ever
    # the verdict says so too: the fact answering is not alive today, it held then
    assert f"FALSIFY answers from {member} (ended: it held then)" in asked_ever["verdict"], asked_ever
    # on a date after its end, a cited fact loaded with its end is "ended", not "superseded"
    assert asked_ever["baseline_states"][member] == "ended", asked_ever
    # at the epoch the load wrote, the same timeline answers
    past = await app.recall(f"When was {kendra} a member of the {club}?", inquiry=q, epoch=loaded["epoch"])
    assert past["falsify"]["nodes"] == [member], past
    assert "[valid 2010-01-01 to 2014-01-01]" in past["falsify"]["answer"], past
    # asked in the present, the question is still read as of today: it does not hold now
    now = await app.recall(f"Is {kendra} a member of the {club}?", inquiry=q)
    assert now["falsify"]["nodes"] == [] and "as_of_today" in now, now
    # a conclusion the stored states supersede ahead of time (its fact ended in 2099) holds today:
    # asked when, it is still answered from the beliefs valid today, not "no alive belief"
    bridge = f"Kell{tag} bridge"
    k1, e40 = f"{prefix}K1", f"{prefix}E40"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Which clubs has {kendra} belonged to?"},
                "evidence": [
                    fact(e40, f"The {bridge} has a weight limit of 40 t.", bridge, "weight limit", "40 t")
                    | {"valid_from": "2010-01-01"}
                ],
                "conclusions": [{"key": k1, "statement": f"Lorries may cross the {bridge}."}],
                "edges": [{"type": "depends_on", "from": k1, "to": e40}],
            }
        )
    )
    await app.revise(
        f"The {bridge} has a weight limit of 30 t.",
        triple=f"{bridge}|weight limit|30 t",
        valid_from="2099-01-01",
        inquiry=q,
    )
    lorries = await app.recall(f"Since when may lorries cross the {bridge}?", inquiry=q)
    assert lorries["falsify"]["nodes"][:1] == [k1] and "dead_match" not in lorries["falsify"], lorries
    # a later club after a gap (2014 to 2016): the value before it is the one that ended before
    # the gap, and the value after the first one is the later club, not "nothing" in the gap
    later = f"Stator{tag} Club"
    joined = await app.revise(
        f"{kendra} was a member of the {later}.",
        triple=f"{kendra}|member of|{later}",
        valid_from="2016-01-01",
        inquiry=q,
    )
    before = (await app.recall(f"Which club was {kendra} a member of before the {later}?", inquiry=q))[
        "falsify"
    ]
    assert before["nodes"][:1] == [member], before
    after = (await app.recall(f"Which club was {kendra} a member of after the {club}?", inquiry=q))["falsify"]
    assert after["nodes"][:1] == [joined["new_evidence"]], after


async def test_a_when_question_about_a_value_asserted_again_gives_every_period(app, prefix):
    tag = prefix.strip("_")
    ilse = f"Ilse{tag} Marrow"
    town, other = f"Quenby{tag}", f"Tarrow{tag}"
    q, first, moved, back = f"{prefix}Q", f"{prefix}A1", f"{prefix}B", f"{prefix}A2"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Where has {ilse} lived?"},
                "evidence": [
                    fact(first, f"{ilse} lives in {town}.", ilse, "lives in", town, valid_from="2015-01-01")
                ],
            }
        )
    )
    await app.revise(
        f"{ilse} lives in {other}.",
        triple=f"{ilse}|lives in|{other}",
        valid_from="2018-01-01",
        inquiry=q,
        key=moved,
    )
    await app.revise(
        f"{ilse} lives in {town}.",
        triple=f"{ilse}|lives in|{town}",
        valid_from="2020-01-01",
        inquiry=q,
        key=back,
    )
    side = (await app.recall(f"When did {ilse} live in {town}?", inquiry=q))["falsify"]
    assert set(side["nodes"]) == {first, back}, side
    earlier, later = "valid 2015-01-01 to 2018-01-01", "valid from 2020-01-01"
    assert earlier in side["answer"] and later in side["answer"], side
    assert side["answer"].index(earlier) < side["answer"].index(later), side
    # the value in between, superseded in time: its own period, not the value that followed it
    between = (await app.recall(f"When did {ilse} live in {other}?", inquiry=q))["falsify"]
    assert between["nodes"][0] == moved, between
    assert "valid 2018-01-01 to 2020-01-01" in between["answer"], between
    # nearby questions read as before
    then = (await app.recall(f"Where did {ilse} live in 2016?", inquiry=q))["falsify"]
    assert then["nodes"][0] == first, then
    now = (await app.recall(f"Where does {ilse} live?", inquiry=q))["falsify"]
    assert now["nodes"] == [back] and "valid" not in now["answer"], now
    before = (await app.recall(f"Where did {ilse} live before {other}?", inquiry=q))["falsify"]
    assert before["nodes"][0] == first, before
    # asked when with a date, the answer is for that date: in 2016 she lived in Quenby, and
    # Tarrow's own period is said, not what holds now
    in2016 = (await app.recall(f"When did {ilse} live in {other} in 2016?", inquiry=q))["falsify"]
    assert in2016["nodes"] == [first] and "held_then" not in in2016, in2016
    assert (
        "Now:" not in in2016["answer"]
        and "not valid in 2016 (valid 2018-01-01 to 2020-01-01)" in in2016["answer"]
    )
    assert "took its place" not in in2016["answer"], in2016  # the later value is no step to 2016's
    in2019 = (await app.recall(f"When did {ilse} live in {town} as of 2019-06-01?", inquiry=q))["falsify"]
    assert in2019["nodes"] == [moved] and "Now:" not in in2019["answer"], in2019
    # asked whether it ever held: superseded in time by a revision, as the JSON says too
    asked_ever = await app.recall(f"Did {ilse} ever live in {other}?", inquiry=q)
    ever = asked_ever["falsify"]
    assert ever["held_then"]["superseded"] is True and "(superseded since)" in ever["answer"], ever
    assert f"FALSIFY answers from {moved} (superseded: it held then" in asked_ever["verdict"], asked_ever
