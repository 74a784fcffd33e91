"""A batch equals its facts revised one at a time when an earlier fact brings a value back.

Gate 1 runs once for the whole batch, at its start. A value an earlier fact of the batch
reinstates did not hold then, so gate 1 never offered it; one revision at a time the later
fact's gate 1 does. At its turn the later fact is compared with what came back (the real
stores, the session root: each scenario runs twice, under two prefixes, once as a batch and
once fact by fact, and the states and valid times must agree).
"""

from __future__ import annotations

import pytest
from cranes import crane, lifts

pytestmark = pytest.mark.slow


def misprint(prefix: str, key: str, target: str) -> dict:
    return dict(
        fact=f"The {prefix} figure {target} was a misprint.", target=prefix + target, key=prefix + key
    )


# (stored values, facts revised before, the batch): each fact a builder of (prefix) -> dict
SCENARIOS = {
    # 40 t from 2010 refuted by 50 t for the same years, 60 t from 2015; the batch's first fact
    # refutes 50 t, so 40 t comes back (held until 2015); its second, 25 t from 2012, ends it then
    "timed value brought back, a later value starts inside it": (
        [("40 t", "2010-01-01")],
        [
            lambda p: lifts(p, "F60", "60 t", valid_from="2015-01-01"),
            lambda p: lifts(p, "F50", "50 t", valid_from="2010-01-01"),
        ],
        [lambda p: misprint(p, "A", "F50"), lambda p: lifts(p, "B", "25 t", valid_from="2012-01-01")],
    ),
    # untimed: 40 t refutes 10 t and 20 t; the batch's 50 t refutes 40 t (the two stay dead,
    # judged against 50 t), 40 t again disputes 50 t (preserve_both), which brings 10 t and 20 t
    # back undecided; 30 t then contradicts them, as one at a time
    "untimed values brought back, a later value contradicts them": (
        [("10 t", "2018-01-01"), ("20 t", None)],
        [lambda p: lifts(p, "P0", "40 t", policy="latest_wins")],
        [
            lambda p: lifts(p, "B0", "50 t", policy="latest_wins"),
            lambda p: lifts(p, "B1", "40 t", policy="preserve_both"),
            lambda p: lifts(p, "B2", "30 t"),
        ],
    ),
}


async def _run(app, prefix: str, scenario, as_batch: bool) -> dict:
    values, before, batch = scenario
    await app.load(crane(prefix, [(f"E{i}", obj, start, True) for i, (obj, start) in enumerate(values)]))
    for build in before:
        fact = build(prefix)
        await app.revise(fact.pop("fact"), **fact)
    facts = [build(prefix) for build in batch]
    if as_batch:
        await app.revise_many(facts)
    else:
        for fact in facts:
            await app.revise(fact.pop("fact"), **fact)
    status = await app.status()
    return {
        n["key"][len(prefix) :]: (n["state"], n.get("valid_from"), n.get("valid_to"))
        for n in status["nodes"]
        if n["key"].startswith(prefix)
    }


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_a_batch_equals_its_facts_one_at_a_time_after_a_value_comes_back(app, prefix, name):
    scenario = SCENARIOS[name]
    one = await _run(app, f"{prefix}one", scenario, as_batch=False)
    many = await _run(app, f"{prefix}bat", scenario, as_batch=True)
    assert many == one
