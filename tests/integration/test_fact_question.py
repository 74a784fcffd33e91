"""The question a new fact joins when it contradicts nothing: next to what it relates to.

With no contradiction and no ``inquiry`` named, the fact is recorded in the question of the
candidate it relates to. The nearest claim in words can be another entity's, in another
inquiry, which the structured judge found unrelated (another subject): the fact joins the
question of the stored value a judge found related to it (the same subject and predicate),
not that one (the real stores, the session root).
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def inquiry(prefix: str, question: str, key: str, claim: str, triple: tuple[str, str, str]) -> str:
    s, p, o = triple
    return json.dumps(
        {
            "question": {"key": prefix + question, "text": f"What does {s} lift ({prefix})?"},
            "evidence": [{"key": prefix + key, "claim": claim, "subject": s, "predicate": p, "object": o}],
        }
    )


async def question_of(app, key: str) -> str:
    status = await app.status()
    return next(n["question"] for n in status["nodes"] if n["key"] == key)


async def test_a_fact_joins_the_question_of_the_value_a_judge_found_related_not_the_nearest_words(
    app, prefix
):
    tag = prefix.strip("_")
    own = f"crane omega{tag}"
    # another crane's claim, worded almost as the fact, in another inquiry
    await app.load(
        inquiry(
            prefix,
            "Qother",
            "E_alike",
            f"The crane omegb{tag} lifts 20 t (b0).",
            (f"crane omegb{tag}", "lifts", "20 t"),
        )
    )
    # the fact's own crane, worded differently, in its own inquiry
    await app.load(
        inquiry(
            prefix, "Qown", "E_own", f"Omega{tag}'s rated lifting capacity: 20 t.", (own, "lifts", "20 t")
        )
    )
    result = await app.revise(
        f"The crane omega{tag} lifts 20 t (b0).", triple=f"{own}|lifts|20 t", key=f"{prefix}F"
    )
    relations = {c["key"]: c["relation"] for c in result["candidates"]}
    assert relations.get(f"{prefix}E_alike") == "unrelated" and relations.get(f"{prefix}E_own") == "supports"
    assert result["question"] == f"{prefix}Qown"
    assert await question_of(app, f"{prefix}F") == f"{prefix}Qown"
