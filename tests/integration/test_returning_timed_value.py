"""A timed value brought back by a timed fact takes its place in time, not refuted by it.

C1 (30 t from 2012) is refuted by L (40 t, untimed); W (50 t from 2015) then kills L, by
winning outright or by winning its dispute with L through ``resolve``. C1's refuter is dead,
and C1 and W are both timed: W ends C1 at its start, as it would have ended C1 had C1 been
alive when W came, so C1 comes back held until 2015 (docs/time.md, "A value that comes back
takes its place too"; rule 1c reads a fact's triple only where one of the two is untimed).
Through the real stores, against :mod:`bench.reference` on the whole graph.
"""

from __future__ import annotations

import json

import pytest

from bench.graphs import loaded_model
from bench.reference import revise_in_time
from bench.wholegraph import differences
from cranes import crane, lifts

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("settled_by", ["revision", "resolve"])
async def test_a_timed_value_brought_back_by_a_timed_fact_ends_where_it_starts(app, prefix, settled_by):
    p = f"{prefix}rt_"
    inv = crane(p, [("C1", "30 t", "2012-01-01", True)])
    model = loaded_model(json.loads(inv))
    await app.load(inv)
    question, triple = f"{p}Q", lambda obj: (f"crane {p}", "lifts", obj)
    await app.revise(**lifts(p, "L", "40 t", policy="latest_wins"))
    revise_in_time(model, p + "L", triple("40 t"), (None, None), question)
    dispute = settled_by == "resolve"
    await app.revise(
        **lifts(p, "W", "50 t", policy="preserve_both" if dispute else "latest_wins", valid_from="2015-01-01")
    )
    revise_in_time(model, p + "W", triple("50 t"), ("2015-01-01", None), question, dispute=dispute)
    if dispute:
        await app.resolve(p + "L", winner=p + "W")
        model.resolve(p + "L", p + "W")
    status = await app.status()
    assert differences(status, model, p) == []
    c1 = next(n for n in status["nodes"] if n["key"] == p + "C1")
    assert (c1.get("valid_from"), c1.get("valid_to")) == ("2012-01-01", "2015-01-01")
    # ended by W's start when it comes back; in the dispute it was already held only until W
    # starts (a disputed value's end moves, its state stays), and out of dispute it takes its
    # place with the interval its fact stated, which W's start ends: superseded in time either way
    assert c1["state"] == "superseded"
    assert [x for x in (await app.check())["problems"] if p in json.dumps(x)] == []
