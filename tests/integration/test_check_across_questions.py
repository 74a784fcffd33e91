"""``check`` labels the whole graph, not each question alone (the session's root, through the
Python API; embedded, and PostgreSQL with ``FALSIFY_TEST_BACKEND=postgres``).

Edges may cross investigations: a loaded edge may name a node stored by an earlier file, and a
revision makes them itself (a fact joins one question and supersedes the values it contradicts in
others). A node's antecedents, supporters and attackers may therefore live in another question,
and the three-valued labelling ``check`` compares the stored states with, and the relabelling
``check --repair`` writes, must see them:

* a conclusion alive through an antecedent of another question is no problem, and a repair leaves
  it alive;
* a node disputed because an attacker in another question is disputed is no problem, and a repair
  leaves it disputed;
* evidence stored alive while an alive node of another question supersedes it is named, and a
  repair kills it again rather than bringing back what rests on it;
* a value whose attacker in its own question died, while an alive fact recorded in another
  question (by a revision) supersedes it, stays dead without a problem.

The root is shared with other tests: each test asserts on the problems naming its own prefix.
"""

from __future__ import annotations

import json

import pytest

from memory_core.core.identity import node_id

pytestmark = pytest.mark.slow


def mine(report: dict, prefix: str, field: str = "problems") -> list:
    return [p for p in report[field] if prefix in p]


async def states(app, prefix: str) -> dict:
    return {
        n["key"][len(prefix) :]: n["state"]
        for n in (await app.status())["nodes"]
        if n["key"].startswith(prefix)
    }


def question(prefix: str, key: str, text: str, evidence=(), conclusions=(), edges=()) -> str:
    """An investigation file of question ``prefix + key``; keys are given with their prefix."""
    return json.dumps(
        {
            "question": {"key": prefix + key, "text": f"{text} ({prefix})"},
            "evidence": list(evidence),
            "conclusions": list(conclusions),
            "edges": list(edges),
        }
    )


async def test_a_conclusion_alive_through_another_questions_antecedent_is_no_problem(app, prefix):
    p = prefix
    await app.load(
        question(
            p, "Q1", "Was the footbridge inspected?", [{"key": p + "E1", "claim": f"Inspection log {p}."}]
        )
    )
    await app.load(
        question(
            p,
            "Q2",
            "Is the footbridge safe?",
            [{"key": p + "E2", "claim": f"A report {p} rated the footbridge safe."}],
            [{"key": p + "K", "statement": f"The footbridge {p} was judged safe by an inspection."}],
            [
                {"type": "depends_on", "from": p + "K", "to": p + "E2", "group": "own"},
                {"type": "depends_on", "from": p + "K", "to": p + "E1", "group": "other"},
            ],
        )
    )
    await app.revise(f"The report {p} was fabricated.", target=p + "E2", key=p + "F")
    assert (await states(app, p))["K"] == "alive"  # one justification (E1, of Q1) still holds
    assert mine(await app.check(), p) == []
    repaired = await app.check(repair=True)
    assert mine(repaired, p, "repaired") == [] and mine(repaired, p, "problems_after_repair") == []
    assert (await states(app, p))["K"] == "alive"


async def test_a_node_disputed_by_another_questions_disputed_attacker_is_no_problem(app, prefix):
    p = prefix
    subject = f"pier {p}"

    def valued(key: str, claim: str) -> dict:
        return {
            "key": p + key,
            "claim": claim,
            "subject": subject,
            "predicate": "load limit",
            "object": "40 t",
        }

    for q, e, k in (("Q1", "E1", "K1"), ("Q2", "E2", "K2")):
        await app.load(
            question(
                p,
                q,
                f"What may cross the {subject}?",
                [valued(e, f"The {subject} load limit is 40 t ({q}).")],
                [{"key": p + k, "statement": f"40 t lorries may cross the {subject} ({q})."}],
                [{"type": "depends_on", "from": p + k, "to": p + e}],
            )
        )
    fact = await app.revise(
        f"New sign: {subject} load limit 30 t.", triple=f"{subject}|load limit|30 t", key=p + "F"
    )
    assert sorted(fact["refuted"]) == [p + "E1", p + "E2"], fact  # F joined one question, attacks both
    await app.revise(
        f"The new {subject} sign was a prank.", target=p + "F", key=p + "G", policy="preserve_both"
    )
    disputed = {"E1", "E2", "F", "G", "K1", "K2"}
    assert {k: s for k, s in (await states(app, p)).items() if k in disputed} == dict.fromkeys(
        disputed, "disputed"
    )
    assert mine(await app.check(), p) == []
    repaired = await app.check(repair=True)
    assert mine(repaired, p, "repaired") == [] and mine(repaired, p, "problems_after_repair") == []
    assert {k: s for k, s in (await states(app, p)).items() if k in disputed} == dict.fromkeys(
        disputed, "disputed"
    )


async def test_evidence_alive_under_another_questions_alive_attacker_is_named_and_killed_again(app, prefix):
    p = prefix
    await app.load(
        question(
            p,
            "Q1",
            "When was the sluice gate made?",
            [{"key": p + "E1", "claim": f"The sluice gate {p} was made in 2019."}],
            [{"key": p + "K1", "statement": f"The sluice gate {p} predates the flood."}],
            [{"type": "depends_on", "from": p + "K1", "to": p + "E1"}],
        )
    )
    await app.load(
        question(
            p,
            "Q2",
            "Who made the sluice gate?",
            [{"key": p + "Enew", "claim": f"Factory records: the sluice gate {p} was made in 2022."}],
            edges=[{"type": "supersedes", "from": p + "Enew", "to": p + "E1", "confidence": 0.9}],
        )
    )
    assert {k: s for k, s in (await states(app, p)).items() if k in ("E1", "K1")} == {
        "E1": "refuted",
        "K1": "invalidated",
    }
    epoch = next(n["epoch"] for n in (await app.status())["nodes"] if n["key"] == p + "E1")
    # damage behind FALSIFY's back: E1 stored alive, though alive Enew (of Q2) supersedes it
    await app.store.set_states({node_id("evidence", p + "E1"): ("alive", epoch)})
    assert mine(await app.check(), p) == [f"{p}E1 is alive but the three-valued labelling makes it dead"]
    repaired = await app.check(repair=True)
    assert mine(repaired, p, "problems_after_repair") == [], repaired
    relabelled = [
        r.split(" as the ")[0].removeprefix("relabelled ").split(", ") for r in repaired["repaired"]
    ]
    assert any(f"{p}E1" in keys for keys in relabelled), repaired
    after = await states(app, p)
    assert after["E1"] == "refuted" and after.get("K1", "forgotten") in ("invalidated", "forgotten"), after
    assert mine(await app.check(), p) == []


async def test_a_value_superseded_by_a_fact_of_another_question_stays_dead_without_a_problem(app, prefix):
    """The differential fuzzer's case: a fact contradicting values of two questions joins one of
    them, so its ``supersedes`` edges cross questions; the value of the other question, whose
    attacker of its own question died, is dead by the alive fact of the other question."""
    p = prefix
    subject = f"ferry ramp {p}"
    values = {"QA": ("E0", "H", "11 t"), "QB": ("EB", "G", "10 t")}  # question -> (value, its refuter)
    for q, (value, refuter, tons) in values.items():
        evidence = {
            "key": p + value,
            "claim": f"Register {q}: the {subject} limit is 12 t.",
            "subject": subject,
            "predicate": "limit",
            "object": "12 t",
        }
        await app.load(question(p, q, f"What limit does the {subject} have ({q})?", [evidence]))
    for q, (value, refuter, tons) in values.items():
        # recorded in its own question (gate 1 scoped to it): it supersedes that question's value only
        done = await app.revise(
            f"The {subject} limit is {tons}.",
            triple=f"{subject}|limit|{tons}",
            key=p + refuter,
            inquiry=p + q,
        )
        assert done["refuted"] == [p + value], done
    fact = await app.revise(f"The {subject} limit is 8 t.", triple=f"{subject}|limit|8 t", key=p + "F")
    # F refutes both refuters, and the two values stay dead under F (not reinstated)
    assert fact["refuted"] == [p + "G", p + "H"] and fact["not_reinstated"] == [p + "E0", p + "EB"], fact
    status = await app.status()
    joined = next(n["question"] for n in status["nodes"] if n["key"] == p + "F")
    ((value, refuter, _),) = [v for q, v in values.items() if p + q != joined]
    attackers = {e["from"] for e in status["edges"] if e["type"] == "supersedes" and e["to"] == p + value}
    # the case itself: the value's attacker of its own question is dead, the alive one is of another
    assert attackers == {p + "F", p + refuter}, (joined, attackers)
    now = await states(app, p)
    assert (now[value], now[refuter], now["F"]) == ("refuted", "refuted", "alive"), now
    assert mine(await app.check(), p) == []
    repaired = await app.check(repair=True)
    assert mine(repaired, p, "repaired") == [] and (await states(app, p))[value] == "refuted"
