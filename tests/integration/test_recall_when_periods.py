"""A question asking when is answered from the timeline of the value it names (Graphiti's
valid_at / invalid_at on an edge): every period the value held, whether it ended or not.

Through the in-process API on the session's shared root (every text names the test's own
invented entities; recall is pinned to the test's inquiry):

* a fact whose valid time ended before today ("When was X a member of ...?", "How long ...?")
  is answered with its valid time, not "no alive belief answers it on TODAY", also at a past
  epoch; asked in the present, it is still read as of today;
* a value asserted again (A, then B, then A again) is answered with both of A's periods, in
  time order, and B, superseded in time, with its own period; the questions about a date, the
  present value, the value before another and the first value read as before.
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
