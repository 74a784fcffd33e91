"""Chains of updates to one value through the real product, against the reference.

Random investigations hold a few subjects, each with a single-valued predicate
(``made by``) and, in some, a predicate declared ``many`` (``colour``); every
evidence carries its triple; conclusions rest on values (alternatives too) and
hypotheses are supported by them. Sequences of updates (A -> B -> C -> ..., values
drawn from a small pool so old values come back) are applied:

* one at a time through ``Falsify.revise`` (triple, no pin: the structured judge),
  with ``undo`` between some of them;
* as ONE batch through ``Falsify.revise_many``.

After the load, after every revision and undo, and after the batch, ``status()``
must equal :mod:`bench.reference` (rules 1b and 1c: the structured judge, and
reinstatement that re-judges) applied to the whole graph; the dry run of the batch
must list exactly what the batch then applies. ``FALSIFY_PROPERTY_SEQUENCES``
(default 3, 4 before) sets how many sequences run.
"""

from __future__ import annotations

import os
import random

import pytest

from bench.graphs import loaded_model, resting_on
from bench.wholegraph import differences

SEQUENCES = int(os.environ.get("FALSIFY_PROPERTY_SEQUENCES", "3"))
SEED_BASE = int(os.environ.get("FALSIFY_PROPERTY_SEED", "3000"))
VALUES = ("Acme", "Bolt", "Crane", "Delta", "Ember")
COLOURS = ("red", "green", "blue")
PLAN_KEYS = ("refuted", "superseded", "invalidated", "weakened", "promoted", "forgotten", "reinstated")

pytestmark = pytest.mark.slow


def case(seed: int, prefix: str):
    rnd = random.Random(seed)
    q = f"{prefix}Q"
    subjects = [f"lot {i} of {prefix.rstrip('_')}" for i in range(rnd.randint(1, 2))]
    evidence = []
    many = rnd.random() < 0.5
    for i, subject in enumerate(subjects):
        value = rnd.choice(VALUES)
        evidence.append(
            {
                "key": f"{prefix}E{i}",
                "claim": f"{subject.capitalize()} was made by {value}.",
                "subject": subject,
                "predicate": "made by",
                "object": value,
            }
        )
        if many:
            colour = rnd.choice(COLOURS)
            evidence.append(
                {
                    "key": f"{prefix}C{i}",
                    "claim": f"{subject.capitalize()} is painted {colour}.",
                    "subject": subject,
                    "predicate": "colour",
                    "object": colour,
                }
            )
    keys = [e["key"] for e in evidence]
    conclusions, hypotheses, edges = resting_on(rnd, prefix, keys)
    inv = {
        "question": {"key": q, "text": f"Who made the lots of {prefix}?"},
        "hypotheses": hypotheses,
        "evidence": evidence,
        "conclusions": conclusions,
        "edges": edges,
    }
    if many:
        inv["predicates"] = {"colour": "many", "made by": "one"}
    steps = []
    for n in range(rnd.randint(3, 6)):
        subject = rnd.choice(subjects)
        if many and rnd.random() < 0.3:
            steps.append((subject, "colour", rnd.choice(COLOURS)))
        else:
            steps.append((subject, "made by", rnd.choice(VALUES)))
        if rnd.random() < 0.25:
            steps.append("undo")
    return inv, steps


def fact_of(prefix: str, n: int, step) -> dict:
    subject, predicate, value = step
    text = (
        f"{subject.capitalize()} was made by {value}."
        if predicate == "made by"
        else f"{subject.capitalize()} is painted {value}."
    )
    return {"fact": text, "triple": f"{subject}|{predicate}|{value}", "key": f"{prefix}F{n}"}


def plan_of(result) -> dict:
    return {k: sorted(result.get(k, [])) for k in PLAN_KEYS}


@pytest.mark.parametrize("seed", range(SEED_BASE, SEED_BASE + SEQUENCES))
async def test_value_chains_match_the_reference(app, seed):
    prefix = f"vc{seed}_"
    inv, steps = case(seed, prefix)
    model = loaded_model(inv)
    await app.load(inv)
    loaded = await app.status()
    assert differences(loaded, model, prefix) == [], "after load"
    question = inv["question"]["key"]
    stack, done, n = [], [], 0
    for step in steps:
        if step == "undo":
            if not stack:
                continue
            await app.undo()
            model = stack.pop()
            done.pop()
            where = "after undo"
        else:
            n += 1
            fact = fact_of(prefix, n, step)
            stack.append(model.copy())
            model.revise(
                "auto",
                fact["key"],
                question=question,
                triple=tuple(fact["triple"].split("|")),
                text=fact["fact"],
            )
            result = await app.revise(fact["fact"], triple=fact["triple"], key=fact["key"])
            assert result["new_evidence"] == fact["key"], result
            done.append(fact)
            where = f"after {fact['triple']}"
        diffs = differences(await app.status(), model, prefix)
        assert diffs == [], f"{where}: {diffs}\nsteps: {steps}\ninvestigation: {inv}"
    for _ in stack:
        await app.undo()
    assert differences(await app.status(), loaded_model(inv), prefix) == [], "after undoing the sequence"
    if not done:
        return
    # the same updates as one batch: the same end state; its dry run lists what it applies
    model = loaded_model(inv)
    for fact in done:
        model.revise(
            "auto", fact["key"], question=question, triple=tuple(fact["triple"].split("|")), text=fact["fact"]
        )
    before = await app.status()
    preview = await app.revise_many(done, dry_run=True)
    assert await app.status() == before, "a dry run wrote something"
    applied = await app.revise_many(done)
    assert [plan_of(r) for r in preview] == [plan_of(r) for r in applied]
    diffs = differences(await app.status(), model, prefix)
    assert diffs == [], f"after the batch: {diffs}\nfacts: {done}\ninvestigation: {inv}"
    await app.undo()
    assert differences(await app.status(), loaded_model(inv), prefix) == [], "after undoing the batch"
