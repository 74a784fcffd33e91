"""States and explanations true on any graph, through the Python API on the real stores.

* a timed fact takes its place in its subject+predicate's whole timeline: a value arriving
  late ends where the earliest later known value starts (that one already superseded in
  time), a value between two known ones moves the earlier one's end back; ``check`` reports
  two values of a single-valued predicate whose validity overlaps, and ``--repair`` names the
  pair without guessing;
* one side timed, the other not: decided as untimed, and the result says so;
* an empty interval is refused everywhere;
* a loaded node resting on a forgotten node enters invalidated (the edge kept in the log),
  and comes back when that node is reinstated;
* a forgotten node's key is reserved on every write path;
* a side of a dispute forgotten with its support comes back from its tombstone disputed, with its
  rival (alive while it was gone) disputed again: its disputes edge comes back with it; a
  winner forgotten with its support comes back superseding what it had superseded, which dies again;
* explain: reasons from the labelling (a plain chain is no cycle), hypotheses' support,
  "removed by undo of epoch N", an unknown key is an InputError; every event has state and cause.
"""

from __future__ import annotations


import pytest

from conftest import investigation
from memory_core.core.errors import InputError

pytestmark = pytest.mark.slow


def limits(prefix: str, *extra) -> str:
    return investigation(
        prefix,
        hypotheses=[{"key": "H", "statement": "Trucks of 38 t may cross."}],
        evidence=[
            {
                "key": "E40",
                "claim": f"The {prefix} bridge limit is 40 t.",
                "subject": f"bridge {prefix}",
                "predicate": "limit",
                "object": "40 t",
                "valid_from": "2010-01-01",
            },
            *extra,
        ],
        conclusions=[{"key": "K", "statement": "The truck route is allowed."}],
        edges=[
            {"type": "depends_on", "from": "K", "to": "E40"},
            {"type": "supports", "from": "E40", "to": "H", "weight": 0.8},
        ],
    )


async def value(app, prefix, tons: str, start=None, end=None, key=None, **kw):
    return await app.revise(
        f"The {prefix} bridge limit is {tons}.",
        triple=f"bridge {prefix}|limit|{tons}",
        key=f"{prefix}{key or 'E' + tons.split()[0]}",
        valid_from=start,
        valid_to=end,
        **kw,
    )


def nodes(status: dict, prefix: str) -> dict:
    return {n["key"][len(prefix) :]: n for n in status["nodes"] if n["key"].startswith(prefix)}


def spans(status: dict, prefix: str, *keys) -> dict:
    got = nodes(status, prefix)
    return {k: (got[k].get("valid_from"), got[k].get("valid_to")) for k in keys}


def mine(report: dict, prefix: str) -> list:
    return [p for p in report["problems"] if prefix in p]


async def test_a_late_value_ends_where_the_earliest_later_value_starts(app, prefix):
    await app.load(limits(prefix))
    first = await value(app, prefix, "30 t", "2018-03-01")
    assert first["validity"] == {f"{prefix}E40": "ends_stored"}
    late = await value(app, prefix, "45 t", "2005-01-01")
    # compared with 40 t too, though it is superseded in time: 45 t holds until 40 t starts
    assert late["validity"] == {f"{prefix}E30": "new_precedes", f"{prefix}E40": "new_precedes"}
    assert late["intervals"] == {f"{prefix}E45": {"valid_from": "2005-01-01", "valid_to": "2010-01-01"}}
    now = await app.status()
    assert spans(now, prefix, "E45", "E40", "E30") == {
        "E45": ("2005-01-01", "2010-01-01"),
        "E40": ("2010-01-01", "2018-03-01"),
        "E30": ("2018-03-01", None),
    }
    assert mine(await app.check(), prefix) == []
    between = await value(app, prefix, "35 t", "2014-01-01")
    assert between["validity"][f"{prefix}E40"] == "ends_stored" and between["superseded"] == [f"{prefix}E35"]
    assert between["intervals"][f"{prefix}E40"] == {
        "valid_from": "2010-01-01",
        "valid_to": "2014-01-01",
        "was": "2018-03-01",
    }
    assert spans(await app.status(), prefix, "E40", "E35") == {
        "E40": ("2010-01-01", "2014-01-01"),
        "E35": ("2014-01-01", "2018-03-01"),
    }
    assert nodes(await app.status(), prefix)["E40"]["state"] == "superseded"
    assert "held until 2014-01-01" in str(await app.explain(f"{prefix}E40"))
    assert mine(await app.check(), prefix) == []
    await app.undo()  # the earlier end comes back exactly
    assert spans(await app.status(), prefix, "E40")["E40"] == ("2010-01-01", "2018-03-01")
    same = await value(app, prefix, "50 t", "2010-01-01")  # the same period as 40 t, superseded in time
    assert f"{prefix}E40" in same["refuted"], same
    assert nodes(await app.status(), prefix).get("E40", {}).get("state", "forgotten") in (
        "refuted",
        "forgotten",
    )
    assert mine(await app.check(), prefix) == []


async def test_check_reports_overlapping_values_and_repair_names_them(app, prefix):
    other = {
        "key": "E45",
        "claim": f"The {prefix} bridge limit is 45 t.",
        "subject": f"bridge {prefix}",
        "predicate": "limit",
        "object": "45 t",
        "valid_from": "2005-01-01",
        "valid_to": "2012-01-01",
    }
    await app.load(limits(prefix, other))
    try:
        found = mine(await app.check(), prefix)
        assert found == [
            f"{prefix}E40 and {prefix}E45 are two values of single-valued 'bridge {prefix}|limit' that "
            "both held from 2010-01-01 until 2012-01-01 (overlapping validity)"
        ], found
        repaired = await app.check(repair=True)
        assert not repaired["clean_after_repair"]
        assert any(
            f"{prefix}E40 and {prefix}E45" in c and "not for check to guess" in c
            for c in repaired["cannot_restore"]
        ), repaired
        assert spans(await app.status(), prefix, "E40", "E45") == {
            "E40": ("2010-01-01", None),
            "E45": ("2005-01-01", "2012-01-01"),
        }
    finally:
        await app.undo()  # the shared root stays consistent for the tests after this one


async def test_one_side_timed_is_decided_as_untimed_and_says_so(app, prefix):
    await app.load(limits(prefix))
    result = await value(app, prefix, "20 t")
    assert result["validity"] == {f"{prefix}E40": "one_side_untimed"}
    assert result["refuted"] == [f"{prefix}E40"]
    assert (
        f"{prefix}E40 is valid from 2010-01-01 but {prefix}E20 has no valid_from: time cannot order them"
        in result["note"]
    ), result["note"]


async def test_an_empty_interval_is_refused_everywhere(app, prefix):
    await app.load(limits(prefix))
    epoch = app.journal.epoch()
    with pytest.raises(InputError, match="empty"):
        await value(app, prefix, "30 t", "2018-03-01", "2018-03-01")
    with pytest.raises(InputError, match="empty"):
        await app.revise_many([{"fact": "x", "valid_from": "2018-03-01", "valid_to": "2018-03-01"}])
    bad = {"key": "E1", "claim": "one", "valid_from": "2018-03-01", "valid_to": "2018-03-01"}
    with pytest.raises(InputError, match="empty"):
        await app.load(investigation(prefix + "x", evidence=[bad]))
    assert app.journal.epoch() == epoch


CHAIN = dict(
    hypotheses=[
        {"key": "HA", "statement": "The supplier is reliable."},
        {"key": "HB", "statement": "The supplier is unreliable."},
    ],
    evidence=[
        {"key": "EQ", "claim": "The March QA report says all parts passed."},
        {"key": "EB", "claim": "The supplier delivered late twice."},
    ],
    conclusions=[
        {"key": "K", "statement": "The parts are fit."},
        {"key": "K2", "statement": "They can ship."},
        {"key": "K3", "statement": "The order can close."},
    ],
    edges=[
        {"type": "depends_on", "from": "K", "to": "EQ"},
        {"type": "depends_on", "from": "K2", "to": "K"},
        {"type": "depends_on", "from": "K3", "to": "K2"},
        {"type": "supports", "from": "EQ", "to": "HA", "weight": 0.8},
        {"type": "supports", "from": "EB", "to": "HB", "weight": 0.6},
    ],
)


async def audit(app, prefix):
    return await app.revise(
        f"Forensic audit {prefix}: the March QA report was back-dated.",
        target=f"{prefix}EQ",
        key=f"{prefix}F1",
    )


async def test_a_load_resting_on_a_forgotten_node_enters_invalidated_and_returns_with_it(app, prefix):
    await app.load(investigation(prefix, **CHAIN))
    first = await audit(app, prefix)
    assert f"{prefix}K" in first["forgotten"]
    fragment = {
        "question": {"key": f"{prefix}Q"},
        "conclusions": [{"key": f"{prefix}K9", "statement": "The parts can be installed."}],
        "edges": [{"type": "depends_on", "from": f"{prefix}K9", "to": f"{prefix}K"}],
    }
    loaded = await app.load(fragment)
    assert loaded["invalidated"] == [f"{prefix}K9"], loaded
    assert any(f"{prefix}K9 rests on it and is invalidated" in n for n in loaded["notes"]), loaded["notes"]
    assert nodes(await app.status(), prefix)["K9"]["state"] == "invalidated"
    assert mine(await app.check(), prefix) == []
    why = await app.explain(f"{prefix}K9")
    assert why["state"] == "invalidated" and f"its antecedent {prefix}K is dead" in str(why)
    back = await app.revise(f"The audit of {prefix} was withdrawn.", target=f"{prefix}F1", key=f"{prefix}F2")
    assert f"{prefix}K" in back["restored"] and f"{prefix}K9" in back["reinstated"], back
    now = await app.status()
    assert nodes(now, prefix)["K9"]["state"] == "alive"
    assert {"type": "depends_on", "from": f"{prefix}K9", "to": f"{prefix}K"}.items() <= next(
        e for e in now["edges"] if e["from"] == f"{prefix}K9"
    ).items()
    assert mine(await app.check(), prefix) == []
    await app.undo()
    assert nodes(await app.status(), prefix)["K9"]["state"] == "invalidated"
    assert mine(await app.check(), prefix) == []


async def test_a_forgotten_key_is_reserved_on_every_write_path(app, prefix):
    await app.load(investigation(prefix, **CHAIN))
    await audit(app, prefix)
    epoch = app.journal.epoch()
    with pytest.raises(InputError, match=f"'{prefix}K' is reserved"):
        await app.revise("Something else entirely.", key=f"{prefix}K", target=f"{prefix}EB")
    with pytest.raises(InputError, match="reserved"):
        await app.revise_many([{"fact": "Another thing.", "key": f"{prefix}k2", "target": f"{prefix}EB"}])
    other = {
        "question": {"key": f"{prefix}Q"},
        "conclusions": [{"key": f"{prefix}K", "statement": "Another one."}],
    }
    with pytest.raises(InputError, match="reserved"):
        await app.load(other)
    assert app.journal.epoch() == epoch
    same = {
        "question": {"key": f"{prefix}Q"},
        "conclusions": [{"key": f"{prefix}K", "statement": "The parts are fit."}],
    }
    again = await app.load(same)  # the same node again: a re-load, skipped with a note
    assert again["epoch"] is None and any("not re-added" in n for n in again["notes"])


async def test_a_derived_key_that_names_a_forgotten_node_moves_on(app, prefix):
    from memory_core.core.requests import fact_key

    await app.load(investigation(prefix, **CHAIN))
    fact = f"The {prefix} parts passed their second test."  # derived evidence: rests on EQ
    await app.load(
        {
            "question": {"key": f"{prefix}Q"},
            "evidence": [{"key": fact_key(fact), "claim": fact}],
            "edges": [{"type": "depends_on", "from": fact_key(fact), "to": f"{prefix}EQ"}],
        }
    )
    gone = await audit(app, prefix)
    assert fact_key(fact) in gone["forgotten"], gone
    result = await app.revise(fact, target=f"{prefix}EB")  # no key given: derived, and that one is reserved
    assert result["new_evidence"] == fact_key(fact) + "_2", result


async def test_explain_tells_the_truth(app, prefix):
    await app.load(investigation(prefix, **CHAIN))
    await audit(app, prefix)
    k3 = await app.explain(f"{prefix}K3")
    texts = [e["text"] for e in k3["events"]]
    assert not any("circular" in t for t in texts), texts  # a plain chain is no cycle
    assert any(f"its antecedent {prefix}K2 is dead" in t for t in texts), texts
    assert all("state" in e and "cause" in e for e in k3["events"]), k3["events"]
    loaded = next(e for e in k3["events"] if e["rule"] == "loaded")
    assert loaded["state"] == "alive" and loaded["cause"] == []
    orphaned = next(e for e in k3["events"] if e["rule"] == "orphaned")
    assert orphaned["state"] == "forgotten" and orphaned["cause"] == [f"{prefix}F1"]
    ha = await app.explain(f"{prefix}HA")
    assert ha["support"]["score"] == 0 and ha["support"]["remaining"] == []
    assert ha["support"]["lost"] == [{"key": f"{prefix}EQ", "state": "refuted", "weight": 0.8}]
    hb = await app.explain(f"{prefix}HB")
    assert hb["support"]["score"] == pytest.approx(0.6)
    assert hb["support"]["remaining"] == [{"key": f"{prefix}EB", "state": "alive", "weight": 0.6}]
    assert "why_alive" not in hb  # a hypothesis is not "a premise (rests on nothing)"
    await app.undo()
    f1 = await app.explain(f"{prefix}F1")
    assert f1["state"] == "removed" and f1["removed_by_undo"] == app.journal.epoch() - 1
    assert f1["events"][-1]["text"].startswith(f"removed by undo of epoch {app.journal.epoch() - 1}")
    assert all("state" in e and "cause" in e for e in f1["events"])
    with pytest.raises(InputError, match="no node with key"):
        await app.explain(f"{prefix}NOPE")


async def test_a_later_value_ends_disputed_values_which_stay_disputed(app, prefix):
    await app.load(limits(prefix))
    dispute = await value(app, prefix, "42 t", "2010-01-01", policy="preserve_both")
    assert set(dispute["disputed"]) >= {f"{prefix}E40", f"{prefix}E42"}, dispute
    later = await value(app, prefix, "30 t", "2020-01-01")
    assert later["validity"] == {f"{prefix}E40": "ends_stored", f"{prefix}E42": "ends_stored"}
    now = nodes(await app.status(), prefix)
    assert {k: (now[k]["state"], now[k].get("valid_to")) for k in ("E40", "E42", "E30")} == {
        "E40": ("disputed", "2020-01-01"),
        "E42": ("disputed", "2020-01-01"),
        "E30": ("alive", None),
    }
    assert mine(await app.check(), prefix) == []
    await app.undo()
    now = nodes(await app.status(), prefix)
    assert now["E40"].get("valid_to") is None and now["E42"].get("valid_to") is None


async def test_a_value_brought_back_takes_its_place_in_its_timeline(app, prefix):
    """40 t from 2010 is refuted by 35 t for the same period; 30 t from 2015 ends 35 t, and
    40 t again from 2020 ends 30 t. Then 40 t is claimed from 2010 once more: 35 t is refuted
    and the first 40 t comes back -- held only until 2015, where 30 t starts (not open-ended
    over 30 t's period), with what rests on it (K, back from its tombstone: it held while 40 t
    did, so it is kept, superseded in time); the hypothesis it supports is left as it was
    (it holds now only in the past). Undo puts everything back."""
    await app.load(limits(prefix))
    await value(app, prefix, "35 t", "2010-01-01")
    await value(app, prefix, "30 t", "2015-01-01")
    await value(app, prefix, "40 t", "2020-01-01", key="E40b")
    before = nodes(await app.status(), prefix)
    assert before["E40"]["state"] == "refuted" and "K" not in before  # K forgotten: nothing needed it
    back = await value(app, prefix, "40 t", "2010-01-01", key="E40c")
    assert f"{prefix}E35" in back["refuted"], back
    assert {f"{prefix}E40", f"{prefix}K", f"{prefix}E40c"} <= set(back["superseded"]), back
    now = nodes(await app.status(), prefix)
    assert (now["E40"]["state"], now["K"]["state"]) == ("superseded", "superseded")
    assert (now["H"]["state"], now["H"]["feedback_weight"]) == (
        before["H"]["state"],
        before["H"]["feedback_weight"],
    )
    assert spans(await app.status(), prefix, "E40", "E40c", "E30", "E40b") == {
        "E40": ("2010-01-01", "2015-01-01"),
        "E40c": ("2010-01-01", "2015-01-01"),
        "E30": ("2015-01-01", "2020-01-01"),
        "E40b": ("2020-01-01", None),
    }
    why = str(await app.explain(f"{prefix}E40"))
    assert f"held until 2015-01-01 ({prefix}E30 holds from then" in why, why
    assert mine(await app.check(), prefix) == []
    await app.undo()
    assert nodes(await app.status(), prefix) == before
    assert mine(await app.check(), prefix) == []


async def test_a_forgotten_side_of_a_dispute_comes_back_disputed_with_its_rival(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "D", "claim": f"The {prefix} chimney was surveyed."},
                {
                    "key": "E1",
                    "claim": f"The {prefix} chimney is 10 m tall.",
                    "subject": f"{prefix} chimney",
                    "predicate": "height",
                    "object": "10 m",
                },
            ],
            edges=[{"type": "depends_on", "from": "E1", "to": "D"}],
        )
    )
    await app.revise(
        f"The {prefix} chimney is 20 m tall.",
        triple=f"{prefix} chimney|height|20 m",
        key=p("F1"),
        policy="preserve_both",
    )
    gone = await app.revise(f"The {prefix} chimney survey is void.", target=p("D"), key=p("G1"))
    assert p("E1") in gone["forgotten"], gone  # nothing rests on it; F1 holds with its rival dead
    before = {k: v["state"] for k, v in nodes(await app.status(), prefix).items()}
    back = await app.revise(f"The {prefix} survey stands after all.", target=p("G1"), key=p("G2"))
    assert p("E1") in back["restored"] and {p("E1"), p("F1")} <= set(back["disputed"]), back
    now = nodes(await app.status(), prefix)
    assert (now["E1"]["state"], now["F1"]["state"]) == ("disputed", "disputed"), now
    assert mine(await app.check(), prefix) == []
    await app.undo()
    assert {k: v["state"] for k, v in nodes(await app.status(), prefix).items()} == before
    assert mine(await app.check(), prefix) == []


async def test_a_forgotten_winner_comes_back_superseding_again(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "D", "claim": f"The {prefix} meter was calibrated."},
                {"key": "W", "claim": f"The {prefix} meter reads 20."},
                {"key": "X", "claim": f"The {prefix} meter read 10."},
            ],
            conclusions=[{"key": "K", "statement": f"The {prefix} reading of 10 stands."}],
            edges=[
                {"type": "depends_on", "from": "W", "to": "D"},
                {"type": "supersedes", "from": "W", "to": "X"},
                {"type": "depends_on", "from": "K", "to": "X"},
            ],
        )
    )
    gone = await app.revise(f"The {prefix} calibration is void.", target=p("D"), key=p("G1"))
    assert p("W") in gone["forgotten"] and p("X") in gone["reinstated"], gone
    back = await app.revise(f"The {prefix} calibration stands.", target=p("G1"), key=p("G2"))
    assert p("W") in back["restored"] and p("X") in back["refuted"], back
    now = nodes(await app.status(), prefix)
    assert (now["W"]["state"], now["X"]["state"], "K" in now) == ("alive", "refuted", False), now
    assert mine(await app.check(), prefix) == []
