"""A question through several facts is answered for the entity it names, through the
relations it names.

Each inquiry is pinned (``inquiry=``) and written with words no other test uses, so the
facts searched are this test's own whatever else the session's shared root holds:

* a title the question quotes ("Love You To") is held only by a fact saying it, in order: a
  chain from "Love Me Do" (which holds the word "love") does not answer for it;
* a chain from a fact about the person the question names answers, even when its hops read
  as one text lie farther from the question than the floor, and a chain from another person
  who only shares a first name ("Bertil Moss" for "Bertil Askew") never does;
* of two last hops each holding one more word of the question, the one whose relation (its
  predicate) the question names answers: "capital" under capital, not the word "located" in a
  continent's claim.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def hop(prefix: str, key: str, claim: str, triple: str) -> dict:
    """A piece of evidence with its triple ("SUBJECT|PREDICATE|OBJECT")."""
    s, p, o = triple.split("|")
    return {"key": f"{prefix}{key}", "claim": claim, "subject": s, "predicate": p, "object": o}


async def test_a_quoted_title_starts_the_chain_only_from_the_fact_saying_it(app, prefix):
    f = lambda *a: hop(prefix, *a)  # noqa: E731
    data = {
        "question": {"key": f"{prefix}Q", "text": "Songs of the Quorn and Brask catalogue"},
        "evidence": [
            f(
                "L1",
                "The performer of Love Me Do is Vessaline Quorn.",
                "Love Me Do|performer|Vessaline Quorn",
            ),
            f("L2", "Love You To was sung by Ottilie Brask.", "Love You To|performer|Ottilie Brask"),
            f("M1", "The manager of Vessaline Quorn is Dace Ferrow.", "Vessaline Quorn|manager|Dace Ferrow"),
            f("M2", "The manager of Ottilie Brask is Ivo Kestrel.", "Ottilie Brask|manager|Ivo Kestrel"),
        ],
    }
    await app.load(json.dumps(data))
    mine = (await app.recall('Who is the manager of the performer of "Love You To"?', inquiry=f"{prefix}Q"))[
        "falsify"
    ]
    assert [h["key"] for h in mine["through"]] == [f"{prefix}L2", f"{prefix}M2"], mine
    assert mine["answer"].startswith("The manager of Ottilie Brask is Ivo Kestrel.") and mine["unheld"] == []
    assert "Dace Ferrow" not in mine["answer"]
    # the other title quoted: the other chain
    other = (await app.recall('Who is the manager of the performer of "Love Me Do"?', inquiry=f"{prefix}Q"))[
        "falsify"
    ]
    assert [h["key"] for h in other["through"]] == [f"{prefix}L1", f"{prefix}M1"], other


def sport_chains(prefix: str) -> dict:
    """Bertil Askew's position, its sport, the sport's country and its continent; Bertil Moss's
    sport, its country and continent beside it (he shares a first name, nothing else)."""
    f = lambda *a: hop(prefix, *a)  # noqa: E731
    return {
        "question": {"key": f"{prefix}Q", "text": "Players of the Askew and Moss clubs"},
        "evidence": [
            f("A1", "Bertil Askew plays the position of sweeper.", "Bertil Askew|position played|sweeper"),
            f("A2", "sweeper is associated with the sport of bandy.", "sweeper|sport|bandy"),
            f("A3", "bandy was created in the country of Norrland.", "bandy|country of origin|Norrland"),
            f("A4", "Norrland is located in the continent of Hyperborea.", "Norrland|continent|Hyperborea"),
            f("B1", "Bertil Moss is associated with the sport of pelota.", "Bertil Moss|sport|pelota"),
            f("B2", "pelota was created in the country of Vasconia.", "pelota|country of origin|Vasconia"),
            f("B3", "Vasconia is located in the continent of Lemuria.", "Vasconia|continent|Lemuria"),
        ],
    }


async def test_a_chain_answers_for_the_person_the_question_names_never_for_a_namesake(app, prefix):
    await app.load(json.dumps(sport_chains(prefix)))
    asked = "Which continent is the home country of the sport that Bertil Askew is known for playing?"
    mine = (await app.recall(asked, inquiry=f"{prefix}Q"))["falsify"]
    assert [h["key"] for h in mine["through"]] == [f"{prefix}A{i}" for i in (1, 2, 3, 4)], mine
    assert mine["answer"].startswith("Norrland is located in the continent of Hyperborea.")
    assert mine["unheld"] == ["home"] and "Lemuria" not in mine["answer"]
    # a person the inquiry does not hold: no chain answers for him through his namesake
    nobody = (
        await app.recall(
            "Which continent is the home country of the sport that Bertil Lindqvist is known for playing?",
            inquiry=f"{prefix}Q",
        )
    )["falsify"]
    assert "through" not in nobody and "Lemuria" not in nobody["answer"], nobody
    assert "Hyperborea" not in nobody["answer"], nobody


async def test_of_two_last_hops_the_relation_the_question_names_answers(app, prefix):
    f = lambda *a: hop(prefix, *a)  # noqa: E731
    data = {
        "question": {"key": f"{prefix}Q", "text": "Where the sports of Odalys Venn come from"},
        "evidence": [
            f("A_sport", "Odalys Venn plays the sport of quidball.", "Odalys Venn|sport|quidball"),
            f(
                "B_origin",
                "quidball was created in the country of Brevonia.",
                "quidball|country of origin|Brevonia",
            ),
            # the continent's claim sorts first and holds "located"; the capital's predicate holds "capital"
            f(
                "C_continent",
                "Brevonia is located in the continent of Austrel.",
                "Brevonia|continent|Austrel",
            ),
            f("D_capital", "The capital of Brevonia is Tarsk.", "Brevonia|capital|Tarsk"),
        ],
    }
    await app.load(json.dumps(data))
    asked = (
        "What is the capital of the country where the origin of the sport played by Odalys Venn is located?"
    )
    mine = (await app.recall(asked, inquiry=f"{prefix}Q"))["falsify"]
    keys = [h["key"] for h in mine["through"]]
    assert keys == [f"{prefix}A_sport", f"{prefix}B_origin", f"{prefix}D_capital"], mine
    assert mine["answer"].startswith("The capital of Brevonia is Tarsk.") and mine["unheld"] == ["located"]
