"""Valid time through the Python API on the real stores (the session root).

Evidence carries ``valid_from`` / ``valid_to``; a contradiction judged by the structured
judge (same subject and predicate, another object) reads in valid time:

* intervals that do not overlap: both stay alive;
* the new value starts after the stored one started and the stored one is open-ended: the
  stored one held until the new one starts (``valid_to`` written), it and what rests on it
  are ``superseded`` (never forgotten); ``explain`` says "held until D"; undo restores it;
* the new value starts before the stored one: the new fact is recorded ``superseded`` with
  ``valid_to`` = the stored one's ``valid_from``;
* the same period, or no ``valid_from`` on a side: a revision as before (``refuted``).
"""

from __future__ import annotations

import pytest

from acme import bob, company
from conftest import investigation

pytestmark = pytest.mark.slow


def states(status: dict, prefix: str) -> dict:
    return {n["key"][len(prefix) :]: n for n in status["nodes"] if n["key"].startswith(prefix)}


async def test_new_value_ends_the_stored_one_and_undo_restores_it(app, prefix):
    await app.load(company(prefix, "2010-01-01"))
    before = states(await app.status(), prefix)
    result = await bob(app, prefix, valid_from="2016-01-01")
    assert result["refuted"] == [] and f"{prefix}E_alice" in result["superseded"]
    assert result["validity"] == {f"{prefix}E_alice": "ends_stored"}
    now = states(await app.status(), prefix)
    assert now["E_alice"]["state"] == "superseded" and now["E_alice"]["valid_to"] == "2016-01-01"
    assert now["E_alice"]["valid_from"] == "2010-01-01"
    assert now["K"]["state"] == "superseded" and now["F_bob"]["state"] == "alive"
    assert now["F_bob"]["valid_from"] == "2016-01-01" and "valid_to" not in now["F_bob"]
    assert result["forgotten"] == []
    why = await app.explain(f"{prefix}E_alice")
    assert "held until 2016-01-01" in str(why)
    await app.undo()
    assert states(await app.status(), prefix) == before


async def test_intervals_that_do_not_overlap_are_no_contradiction(app, prefix):
    await app.load(company(prefix, "2000-01-01", "2005-01-01"))
    result = await bob(app, prefix, valid_from="2010-01-01")
    assert result["refuted"] == [] and result["superseded"] == []
    now = states(await app.status(), prefix)
    assert (
        now["E_alice"]["state"] == "alive"
        and now["K"]["state"] == "alive"
        and now["F_bob"]["state"] == "alive"
    )
    assert now["E_alice"]["valid_to"] == "2005-01-01"


async def test_an_earlier_new_value_is_recorded_as_superseded(app, prefix):
    await app.load(company(prefix, "2016-01-01"))
    result = await bob(app, prefix, valid_from="2005-01-01")
    assert result["refuted"] == [] and result["superseded"] == [f"{prefix}F_bob"]
    now = states(await app.status(), prefix)
    assert now["F_bob"]["state"] == "superseded" and now["F_bob"]["valid_to"] == "2016-01-01"
    assert (
        now["E_alice"]["state"] == "alive"
        and "valid_to" not in now["E_alice"]
        and now["K"]["state"] == "alive"
    )


async def test_an_earlier_new_value_in_dispute_still_ends_where_the_later_one_starts(app, prefix):
    """Bob from 2005 precedes Alice (from 2016) and disputes Carol (also from 2005,
    preserve_both): whichever side wins, Bob held at most until Alice starts. Its interval
    ends there, it stays disputed, and check finds no overlap."""
    await app.load(company(prefix, "2016-01-01"))
    carol = await app.revise(
        f"Carol was the CEO of Acme {prefix}.", triple=f"acme {prefix}|ceo|Carol", valid_from="2005-01-01"
    )
    result = await bob(app, prefix, valid_from="2005-01-01", policy="preserve_both")
    carol_key = carol["new_evidence"]
    assert result["validity"] == {f"{prefix}E_alice": "new_precedes", carol_key: "same_period"}
    assert result["intervals"][f"{prefix}F_bob"]["valid_to"] == "2016-01-01"
    now = {n["key"]: n for n in (await app.status())["nodes"]}
    assert now[f"{prefix}F_bob"]["state"] == "disputed" and now[f"{prefix}F_bob"]["valid_to"] == "2016-01-01"
    assert now[carol_key]["state"] == "disputed" and now[carol_key]["valid_to"] == "2016-01-01"
    assert not [p for p in (await app.check())["problems"] if prefix in p]


async def test_a_value_brought_back_disputed_is_an_open_question_not_an_overlap(app, prefix):
    """Alice from 2010 is refuted by Bob from 2010; Carol from 2010 then disputes Bob
    (preserve_both), and Alice, whose refuter is undecided now, is disputed too. Three values of
    one slot over one period, all undecided: check reports no overlap (neither held for sure)."""
    await app.load(company(prefix, "2010-01-01"))
    await bob(app, prefix, valid_from="2010-01-01")
    await app.revise(
        f"Carol is the CEO of Acme {prefix}.",
        triple=f"acme {prefix}|ceo|Carol",
        valid_from="2010-01-01",
        policy="preserve_both",
    )
    now = states(await app.status(), prefix)
    assert now["E_alice"]["state"] == "disputed" and now["F_bob"]["state"] == "disputed"
    assert not [p for p in (await app.check())["problems"] if prefix in p]


@pytest.mark.parametrize(
    "stored, new", [("2010-01-01", "2010-01-01"), (None, "2016-01-01"), ("2010-01-01", None)]
)
async def test_same_period_or_untimed_is_a_revision_as_before(app, prefix, stored, new):
    await app.load(company(prefix, stored))
    result = await bob(app, prefix, valid_from=new)
    assert result["refuted"] == [f"{prefix}E_alice"]
    now = states(await app.status(), prefix)
    assert now.get("E_alice", {}).get("state", "forgotten") in ("refuted", "forgotten")
    assert "K" not in now or now["K"]["state"] == "invalidated"


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"valid_from": "2016-13-01"}, "valid_from"),
        ({"valid_to": "soon"}, "valid_to"),
        ({"valid_from": "2016-01-01", "valid_to": "2015-01-01"}, "before"),
    ],
)
async def test_bad_dates_write_nothing(app, prefix, kw, match):
    from memory_core.core.errors import InputError

    await app.load(company(prefix, "2010-01-01"))
    epoch = app.journal.epoch()
    with pytest.raises(InputError, match=match):
        await bob(app, prefix, **kw)
    with pytest.raises(InputError, match=match):
        await app.revise_many([{"fact": "Carol is the CEO.", **kw}])
    bad = company(prefix + "x", "2016-01-01", "2015-01-01")
    with pytest.raises(InputError, match="before"):
        await app.load(bad)
    assert app.journal.epoch() == epoch


async def test_recall_as_of_before_inside_and_after_a_supersession(app, prefix):
    question = f"Question {prefix}: what happened?"
    bob_h = {"key": "H_bob", "statement": "Bob runs Acme's strategy."}
    data = company(prefix, "2010-01-01")
    import json

    inv = json.loads(data)
    inv["hypotheses"].append(dict(bob_h, key=f"{prefix}H_bob"))
    inv["evidence"].append(
        {
            "key": f"{prefix}E_carol",
            "claim": f"Carol is the CEO of Acme {prefix} (audit).",
            "subject": f"carol {prefix}",
            "predicate": "ceo of",
            "object": "Acme",
        }
    )
    inv["edges"].append({"type": "supports", "from": f"{prefix}E_carol", "to": f"{prefix}H", "weight": 0.1})
    await app.load(json.dumps(inv))
    # a fact that was never true: Carol's evidence is refuted, never used at any date
    await app.revise(
        f"Carol was never CEO of Acme {prefix}.",
        triple=f"carol {prefix}|ceo of|nobody",
        key=f"{prefix}F_nocarol",
    )
    result = await bob(app, prefix, valid_from="2016-01-01")
    assert f"{prefix}E_alice" in result["superseded"]
    fx = await app.load(
        {
            "question": {"key": f"{prefix}Q"},
            "edges": [{"type": "supports", "from": f"{prefix}F_bob", "to": f"{prefix}H_bob", "weight": 0.9}],
        }
    )
    assert fx is not None
    now = await app.recall(question)
    assert now["falsify"]["nodes"][0] == f"{prefix}H_bob" and "as_of" not in now
    inside = await app.recall(question, as_of="2012-06-01")
    assert inside["as_of"] == "2012-06-01"
    assert inside["falsify"]["nodes"] == [
        f"{prefix}H",
        f"{prefix}E_alice",
    ]  # Carol's refuted support never counts
    after = await app.recall(question, as_of="2020-01-01")
    assert after["falsify"]["nodes"] == [f"{prefix}H_bob", f"{prefix}F_bob"]
    at_change = await app.recall(question, as_of="2016-01-01")  # half-open: Bob from that day
    assert at_change["falsify"]["nodes"][0] == f"{prefix}H_bob"
    before = await app.recall(question, as_of="2001-01-01")
    assert before["falsify"]["nodes"] == [] and before["falsify"]["answer"].startswith(
        "no alive belief answers it"
    )
    # composed with belief time: valid in 2012 as believed before Bob's revision
    past = await app.recall(question, epoch=app.journal.epoch() - 2, as_of="2012-06-01")
    assert past["falsify"]["nodes"] == [f"{prefix}H", f"{prefix}E_alice"] and past["as_of"] == "2012-06-01"
    from memory_core.core.errors import InputError

    with pytest.raises(InputError, match="as_of"):
        await app.recall(question, as_of="yesterday")


async def test_check_verifies_valid_to_against_the_log_and_repair_restores_it(app, prefix):
    from memory_core.store.models import node_id

    await app.load(company(prefix, "2010-01-01"))
    await bob(app, prefix, valid_from="2016-01-01")
    mine = lambda report: [p for p in report["problems"] if p.startswith(prefix)]
    assert mine(await app.check()) == []
    alice = node_id("evidence", f"{prefix}E_alice")
    await app.store.update_nodes({alice: {"valid_to": "1999-01-01"}})  # behind FALSIFY's back
    await app.store.checkpoint()
    found = mine(await app.check())
    assert found == [
        f"{prefix}E_alice has valid_to '1999-01-01' but the revision log wrote '2016-01-01'",
        f"{prefix}E_alice has valid time [2010-01-01, 1999-01-01): an empty interval, true at no date",
    ]
    repaired = await app.check(repair=True)
    assert any("valid_to" in r and f"{prefix}E_alice" in r for r in repaired["repaired"])
    assert states(await app.status(), prefix)["E_alice"]["valid_to"] == "2016-01-01"
    assert mine(await app.check()) == []
    # a repair is a barrier (undo never brings back the state check rejected)
    assert (await app.undo())["undone"] is None
    assert states(await app.status(), prefix)["E_alice"]["valid_to"] == "2016-01-01"


async def test_a_chain_of_triples_at_a_date_follows_the_values_valid_then(app, prefix):
    """A question no single fact holds is answered through the triples valid at the date asked:
    the CEO's country before and after a timed change, each with its own capital."""
    acme, alice, bob_ = f"Acme {prefix}", f"Alice {prefix}", f"Bob {prefix}"
    ruritania, freedonia = f"Ruritania {prefix}", f"Freedonia {prefix}"
    hop = lambda key, claim, s, p, o, **kw: dict(  # noqa: E731
        {"key": key, "claim": claim, "subject": s, "predicate": p, "object": o}, **kw
    )
    await app.load(
        investigation(
            prefix,
            evidence=[
                hop("E_ceo", f"The CEO of {acme} is {alice}.", acme, "ceo", alice, valid_from="2010-01-01"),
                hop(
                    "E_bob", f"{bob_} is a citizen of {freedonia}.", bob_, "country of citizenship", freedonia
                ),
                hop(
                    "E_ali",
                    f"{alice} is a citizen of {ruritania}.",
                    alice,
                    "country of citizenship",
                    ruritania,
                ),
                hop("E_rcap", f"The capital of {ruritania} is Strelsau.", ruritania, "capital", "Strelsau"),
                hop(
                    "E_fcap",
                    f"The capital of {freedonia} is Fredonia City.",
                    freedonia,
                    "capital",
                    "Fredonia City",
                ),
            ],
        )
    )
    changed = await app.revise(
        f"The CEO of {acme} is {bob_}.",
        triple=f"{acme}|ceo|{bob_}",
        key=f"{prefix}F_ceo",
        valid_from="2016-01-01",
    )
    assert f"{prefix}E_ceo" in changed["superseded"]
    question = f"What is the capital of the country of citizenship of the CEO of {acme}?"
    through = lambda result: [h["key"][len(prefix) :] for h in result["falsify"]["through"]]  # noqa: E731
    then = await app.recall(question, as_of="2012-06-01")
    assert through(then) == ["E_ceo", "E_ali", "E_rcap"] and "Strelsau" in then["falsify"]["answer"]
    now = await app.recall(question)
    assert through(now) == ["F_ceo", "E_bob", "E_fcap"] and "Strelsau" not in now["falsify"]["answer"]
    later = await app.recall(question, as_of="2020-01-01")
    assert through(later) == through(now)


async def test_each_fact_of_a_batch_reports_the_intervals_it_set(app, prefix):
    """In one batch each fact's ``intervals`` are what that fact set (its changes' after-images),
    as if revised one at a time, not the batch's final intervals: Bob from 2018 ends Alice at
    2018; Carol from 2014 then holds until 2018 and moves Alice's end back to 2014."""
    await app.load(company(prefix, "2010-01-01"))
    line = lambda who, start: {
        "fact": f"{who} is the CEO of Acme {prefix}.",
        "triple": f"acme {prefix}|ceo|{who}",
        "key": f"{prefix}F_{who.lower()}",
        "valid_from": start,
    }
    first, second = await app.revise_many([line("Bob", "2018-01-01"), line("Carol", "2014-01-01")])
    assert first["intervals"] == {
        f"{prefix}F_bob": {"valid_from": "2018-01-01", "valid_to": None},
        f"{prefix}E_alice": {"valid_from": "2010-01-01", "valid_to": "2018-01-01", "was": None},
    }
    assert second["intervals"] == {
        f"{prefix}F_carol": {"valid_from": "2014-01-01", "valid_to": "2018-01-01"},
        f"{prefix}E_alice": {"valid_from": "2010-01-01", "valid_to": "2014-01-01", "was": "2018-01-01"},
    }


async def test_resolve_leaves_forgotten_what_it_brings_back_only_to_fall_again(app, prefix):
    """K rests on E0 (team 0 led by Alice from 2000) and E1 (team 1 led by Erin from 2020).
    Erin claims team 0 for [2000, 2015) (E0 refuted, K invalidated and forgotten), Dave leads
    it from 2020; then ``resolve`` decides E1 over Erin's claim: E0 comes back, but only until
    2020 (Dave's value), so K's support never held at once and K falls again in the same
    resolution. It stays forgotten (not re-added from its tombstone as ``invalidated``), as in
    the reference, and undo leaves it forgotten too."""
    from bench.graphs import loaded_model
    from bench.reference import revise_in_time
    from bench.wholegraph import differences

    p = prefix
    inv = {
        "question": {"key": f"{p}Q", "text": f"Who led the teams of {p}?"},
        "evidence": [
            {
                "key": f"{p}E{i}",
                "claim": f"Team {i} of {p} was led by {leader}.",
                "subject": f"team {i} of {p}",
                "predicate": "led by",
                "object": leader,
                "valid_from": start,
            }
            for i, (leader, start) in enumerate([("Alice", "2000-01-01"), ("Erin", "2020-01-01")])
        ],
        "conclusions": [{"key": f"{p}K", "statement": f"Conclusion of {p}.", "confidence": 0.8}],
        "edges": [{"type": "depends_on", "from": f"{p}K", "to": f"{p}E{i}"} for i in (0, 1)],
    }
    model = loaded_model(inv)
    await app.load(inv)
    for n, (leader, start, end) in enumerate(
        [("Erin", "2000-01-01", "2015-01-01"), ("Dave", "2020-01-01", None)], 1
    ):
        triple = (f"team 0 of {p}", "led by", leader)
        revise_in_time(model, f"{p}F{n}", triple, (start, end), f"{p}Q")
        await app.revise(
            f"Team 0 of {p} was led by {leader}.",
            triple="|".join(triple),
            key=f"{p}F{n}",
            valid_from=start,
            valid_to=end,
        )
    assert f"{p}k" in app.forgotten()
    before = await app.status()
    model.resolve(f"{p}F1", f"{p}E1")
    result = await app.resolve(f"{p}F1", f"{p}E1")
    assert not result.get("restored")
    status = await app.status()
    assert differences(status, model, p) == []
    now = states(status, p)
    assert "K" not in now and f"{p}k" in app.forgotten()
    assert now["E0"]["state"] == "superseded" and now["E0"]["valid_to"] == "2020-01-01"
    assert now["F1"]["state"] == "refuted" and now["F2"]["state"] == "alive"
    await app.undo()
    assert states(await app.status(), p) == states(before, p)
