"""Valid time through the real product, against the reference, on sequences of revisions.

Random investigations hold one or two subjects whose single-valued predicate (``led by``)
has a timed value (``valid_from``, sometimes ``valid_to``); conclusions rest on the values
(alternatives too) and hypotheses are supported by them. Histories of timed updates
(another leader from a date drawn from a few, so every case of valid time comes up:
disjoint, ends the stored value, precedes it, the same period), arriving forward in time,
backward (every value late) or shuffled (:func:`bench.graphs.timed_case`), go through
``Falsify.revise(triple=..., valid_from=..., valid_to=...)``, with ``undo`` between some.
After the load, every revision and every undo, ``status()`` must equal
:func:`bench.reference.revise_in_time` applied to the whole graph: states, weights,
confidences, edges, and every stored evidence's interval; the revision's ``validity``
must name the same cases. ``FALSIFY_PROPERTY_SEQUENCES`` (default 4) sets how many run.
"""

from __future__ import annotations

import os

import pytest

from bench.graphs import ORDERS, loaded_model, timed_case
from bench.reference import revise_in_time
from bench.wholegraph import differences

SEQUENCES = int(os.environ.get("FALSIFY_PROPERTY_SEQUENCES", "4"))
SEED_BASE = int(os.environ.get("FALSIFY_PROPERTY_SEED", "5000"))

pytestmark = pytest.mark.slow


def case(seed: int, prefix: str):
    """The sequence of ``seed``: its arrival order cycles through forward, backward (every
    value arrives late) and shuffled, so a few sequences already meet each."""
    return timed_case(seed, prefix, ORDERS[seed % len(ORDERS)])


def intervals(status: dict, prefix: str) -> dict:
    return {
        n["key"]: (n.get("valid_from"), n.get("valid_to"))
        for n in status["nodes"]
        if n["key"].startswith(prefix) and n["type"] == "evidence"
    }


def model_intervals(model) -> dict:
    return {k: (n.valid_from, n.valid_to) for k, n in model.stored().items() if n.kind == "evidence"}


@pytest.mark.parametrize("seed", range(SEED_BASE, SEED_BASE + SEQUENCES))
async def test_timed_updates_match_the_reference(app, seed):
    prefix = f"vt{seed}_"
    inv, steps = case(seed, prefix)
    model = loaded_model(inv)
    await app.load(inv)
    status = await app.status()
    assert differences(status, model, prefix) == [], "after load"
    assert intervals(status, prefix) == model_intervals(model), "after load"
    question = inv["question"]["key"]
    stack, n = [], 0
    for step in steps:
        if step == "undo":
            if not stack:
                continue
            await app.undo()
            model = stack.pop()
            where = "after undo"
        else:
            n += 1
            subject, leader, start, end = step
            key, triple = f"{prefix}F{n}", (subject, "led by", leader)
            stack.append(model.copy())
            want = revise_in_time(model, key, triple, (start, end), question)
            result = await app.revise(
                f"{subject.capitalize()} was led by {leader}.",
                triple="|".join(triple),
                key=key,
                valid_from=start,
                valid_to=end,
            )
            assert result["new_evidence"] == key, result
            timed = {k: c for k, c in want["cases"].items() if c != "untimed"}
            assert (result.get("validity") or {}) == timed, (step, result)
            where = f"after {step}"
        status = await app.status()
        diffs = differences(status, model, prefix)
        assert diffs == [], f"{where}: {diffs}\nsteps: {steps}\ninvestigation: {inv}"
        assert intervals(status, prefix) == model_intervals(model), f"{where}\nsteps: {steps}"
    for _ in stack:
        await app.undo()
    status = await app.status()
    assert differences(status, loaded_model(inv), prefix) == [], "after undoing the sequence"
    assert intervals(status, prefix) == model_intervals(loaded_model(inv)), "after undoing the sequence"


@pytest.mark.skipif(SEQUENCES < 4, reason="fewer sequences than the cases of valid time")
def test_the_sequences_reach_every_case_of_valid_time():
    """The sequences the test above runs are not all one case: on them the reference meets
    every reading of a timed contradiction, a late value that ends a value already superseded
    in time earlier than recorded, and the three arrival orders (checked on the model alone,
    no stores)."""
    seen, shortened = set(), 0
    for seed in range(SEED_BASE, SEED_BASE + SEQUENCES):
        inv, steps = case(seed, f"vt{seed}_")
        model = loaded_model(inv)
        for n, step in enumerate(s for s in steps if s != "undo"):
            subject, leader, start, end = step
            got = revise_in_time(
                model, f"F{n}", (subject, "led by", leader), (start, end), inv["question"]["key"]
            )
            seen |= set(got["cases"].values())
            shortened += len(got["shortened"])
    assert {"disjoint", "ends_stored", "new_precedes", "same_period"} <= seen, seen
    assert shortened, "no sequence moved back the end of a value already superseded in time"
