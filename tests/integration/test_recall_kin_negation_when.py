"""Recall on questions other memory systems answer by their semantics (Mem0's current memories,
Graphiti's valid_at, FactConsolidation's latest values), where the words alone misled it.

Through the in-process API on the session's shared root (every text names the test's own
entities; recall is pinned to the test's inquiry):

* a value of a predicate declared ``many`` that shares a word with its subject (a child's
  surname is the parent's) is not "named" by a question naming the subject: every child is
  listed; and the parents of a child named in full are all listed;
* a question asked in the negative is answered by the fact said in the negative, among facts
  holding as many of its words, and one asked in the affirmative by the affirmative one;
* a name written in a script with no capitals is an entity the question names: a person never
  stored is not answered with another person's fact;
* a question asking for what does not hold ("Where doesn't ... work?") with only the affirmative
  fact stored gets no answer, the fact named as what is stored (a fact said in the negative that
  holds less answers); asked whether it does not hold, the fact answers;
* a question no stored fact holds ("Who is ... married to?") near a dead fact about the same
  person is answered with no story of what replaced that fact;
* at a date before every valid time, an undated fact said in the other polarity than the
  question is no answer: the fact that would answer is named, not valid then;
* a question asking when is answered with the fact's valid time;
* a question about someone a subject has ("my sister", "Alice Brennan's brother") is answered
  by that one's fact, never by the owner's own value of the relation.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def fact(key: str, claim: str, subject: str, predicate: str, object_: str, **more) -> dict:
    return {"key": key, "claim": claim, "subject": subject, "predicate": predicate, "object": object_} | more


async def test_children_sharing_the_parents_surname_are_all_listed(app, prefix):
    tag = prefix.strip("_")
    mother, father = f"Henrietta{tag} Quill", f"Tobias{tag} Quill"
    oscar, mabel = f"Oscar{tag} Quill", f"Mabel{tag} Quill"
    q = f"{prefix}Q"
    c1, c2, c3 = f"{prefix}C1", f"{prefix}C2", f"{prefix}C3"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Who belongs to the {tag} Quill family?"},
                "predicates": {"child": "many"},
                "evidence": [
                    fact(c1, f"{mother} has a child named {oscar}.", mother, "child", oscar),
                    fact(c2, f"{mother} has a child named {mabel}.", mother, "child", mabel),
                    fact(c3, f"{father} has a child named {oscar}.", father, "child", oscar),
                ],
            }
        )
    )
    for asked in (f"Who are the children of {mother}?", f"How many children does {mother} have?"):
        side = (await app.recall(asked, inquiry=q))["falsify"]
        assert set(side["nodes"]) == {c1, c2}, (asked, side)
        assert " Also: " in side["answer"], side
    # a question naming one value gets that one
    named = (await app.recall(f"Does {mother} have a child named Mabel{tag}?", inquiry=q))["falsify"]
    assert named["nodes"] == [c2], named
    # asked for the subjects of a value named in full: both parents
    parents = (await app.recall(f"Who has a child named {oscar}?", inquiry=q))["falsify"]
    assert set(parents["nodes"]) == {c1, c3}, parents


# fixed names (used by no other test), so the distances are the same on every run: the
# embedder places each affirmative claim nearer the negative question than its negation
SPEAKERS = (
    ("Odile Marchetti", "French", "German"),
    ("Ruben Vasquez", "Portuguese", "Italian"),
    ("Tomoko Reyes", "Japanese", "Korean"),
)


async def test_a_question_in_the_negative_is_answered_by_the_fact_said_in_the_negative(app, prefix):
    for i, (person, spoken, unspoken) in enumerate(SPEAKERS):
        q, yes, no = f"{prefix}Q{i}", f"{prefix}Y{i}", f"{prefix}N{i}"
        await app.load(
            json.dumps(
                {
                    "question": {"key": q, "text": f"What does {person} speak? ({prefix})"},
                    "evidence": [
                        fact(yes, f"{person} speaks {spoken}.", person, "speaks", spoken),
                        {"key": no, "claim": f"{person} does not speak {unspoken}."},
                    ],
                }
            )
        )
        negative = (await app.recall(f"Which language does {person} not speak?", inquiry=q))["falsify"]
        assert negative["nodes"] == [no], negative
        positive = (await app.recall(f"Which language does {person} speak?", inquiry=q))["falsify"]
        assert positive["nodes"] == [yes], positive


async def test_a_name_in_a_script_without_capitals_is_an_entity_of_the_question(app, prefix):
    # fixed names (used by no other test), so the distances are the same on every run
    stored, other = "王芳", "李强"
    q, home = f"{prefix}Q", f"{prefix}H"
    city = "Chengdu"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Where do the people of {city} live? ({prefix})"},
                "evidence": [fact(home, f"{stored} lives in {city}.", stored, "lives in", city)],
            }
        )
    )
    found = (await app.recall(f"Where does {stored} live?", inquiry=q))["falsify"]
    assert found["nodes"] == [home], found
    never = (await app.recall(f"Where does {other} live?", inquiry=q))["falsify"]
    assert never["nodes"] == [], never  # not the stored person's home
    assert never["other_entity"]["key"] == home, never


async def test_a_question_asking_when_is_answered_with_the_facts_valid_time(app, prefix):
    tag = prefix.strip("_")
    kendra = f"Kendra{tag} Vos"
    q, old, new = f"{prefix}Q", f"{prefix}NIM", f"{prefix}ORC"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Where has {kendra} worked?"},
                "evidence": [
                    fact(
                        old,
                        f"{kendra} works at Nimbus{tag} Labs.",
                        kendra,
                        "works at",
                        f"Nimbus{tag} Labs",
                        valid_from="2015-03-01",
                    )
                ],
            }
        )
    )
    await app.revise(
        f"{kendra} works at Orchid{tag} Systems.",
        triple=f"{kendra}|works at|Orchid{tag} Systems",
        valid_from="2021-06-01",
        inquiry=q,
        key=new,
    )
    side = (await app.recall(f"When did {kendra} start working at Orchid{tag} Systems?", inquiry=q))[
        "falsify"
    ]
    assert side["nodes"] == [new], side
    assert "[valid from 2021-06-01]" in side["answer"], side
    ended = (await app.recall(f"When did {kendra} work at Nimbus{tag} Labs?", inquiry=q))["falsify"]
    assert "valid 2015-03-01 to 2021-06-01" in ended["answer"], ended
    # not asked when: the answer is the fact alone, as before
    plain = (await app.recall(f"Where does {kendra} work?", inquiry=q))["falsify"]
    assert plain["nodes"] == [new] and "valid from" not in plain["answer"], plain


async def test_a_question_about_someone_the_subject_has_is_answered_by_that_ones_fact(app, prefix):
    """'my sister', 'Alice Brennan's brother': the question is about the one the user (or Alice)
    has, stored as the subject "user's sister"; the user's or Alice's own fact, holding as much
    of the question, is about another entity. Fixed texts (no other test writes them), so the
    distances are the same on every run."""
    q = f"{prefix}Q"
    mine, sister, job = f"{prefix}ME", f"{prefix}SIS", f"{prefix}JOB"
    alice, brother, work = f"{prefix}AB", f"{prefix}BRO", f"{prefix}WRK"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Where do my family and the Brennans live? ({prefix})"},
                "evidence": [
                    fact(mine, "I moved to Ulaanbaatar.", "user", "lives in", "Ulaanbaatar"),
                    fact(sister, "My sister Ingrid lives in Tromsø.", "user's sister", "lives in", "Tromsø"),
                    fact(job, "I work as a glassblower.", "user", "works as", "glassblower"),
                    fact(alice, "Alice Brennan lives in Paris.", "Alice Brennan", "lives in", "Paris"),
                    fact(
                        brother,
                        "Alice Brennan's brother lives in Rome.",
                        "Alice Brennan's brother",
                        "lives in",
                        "Rome",
                    ),
                    fact(
                        work, "Alice Brennan works at Lumen Bank.", "Alice Brennan", "works at", "Lumen Bank"
                    ),
                ],
            }
        )
    )
    hers = (await app.recall("Does my sister live in Ulaanbaatar?", inquiry=q))["falsify"]
    assert hers["nodes"] == [sister], hers
    assert hers["other_entity"]["key"] == mine, hers
    his = (await app.recall("Where does Alice Brennan's brother live?", inquiry=q))["falsify"]
    assert his["nodes"] == [brother] and "brennan" not in his["unheld"], his
    also = (await app.recall("Does Alice Brennan's brother live in Paris?", inquiry=q))["falsify"]
    assert also["nodes"] == [brother], also
    # nothing stored of his work: Alice's work does not answer for him
    none = (await app.recall("Where does Alice Brennan's brother work?", inquiry=q))["falsify"]
    assert none["nodes"] == [] and none["other_entity"]["key"] == work, none
    assert "Alice Brennan's brother" in none["answer"], none
    # nor for one nothing is stored under: the owner's own value is not theirs
    for asked, owner_fact, who in (
        ("Where does Alice Brennan's sister work?", work, "Alice Brennan's sister"),
        ("Does my brother live in Ulaanbaatar?", mine, "user's brother"),
    ):
        unknown = (await app.recall(asked, inquiry=q))["falsify"]
        assert unknown["nodes"] == [] and unknown["other_entity"]["key"] == owner_fact, (asked, unknown)
        assert f"about {who!r}" in unknown["answer"], (asked, unknown)
    # the owner's own facts answer for the owner, as before
    assert (await app.recall("Where do I live?", inquiry=q))["falsify"]["nodes"] == [mine]
    assert (await app.recall("Where does Alice Brennan live?", inquiry=q))["falsify"]["nodes"] == [alice]


async def test_the_former_value_is_the_one_before_the_value_valid_today(app, prefix):
    """'the former employer' is the value before the one that holds today; a fact of the same
    person whose valid time ended years ago (alive in the stored states, as a loaded fact with
    an end stays) lies nearer the question and was taken for today's value: 'nothing stored came
    before it'. Fixed texts (no other test writes them), so the distances are the same on every
    run."""
    q, club, nimbus, orchid = f"{prefix}Q", f"{prefix}ROT", f"{prefix}NIM", f"{prefix}ORC"
    kendra = "Kendra Vos"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Where has {kendra} worked? ({prefix})"},
                "evidence": [
                    fact(
                        nimbus,
                        f"{kendra} works at Nimbus Labs.",
                        kendra,
                        "works at",
                        "Nimbus Labs",
                        valid_from="2015-03-01",
                    ),
                    fact(
                        club,
                        f"{kendra} was a member of the Rotary Club.",
                        kendra,
                        "member of",
                        "Rotary Club",
                        valid_from="2010-01-01",
                        valid_to="2014-01-01",
                    ),
                ],
            }
        )
    )
    await app.revise(
        f"{kendra} works at Orchid Systems.",
        triple=f"{kendra}|works at|Orchid Systems",
        valid_from="2021-06-01",
        inquiry=q,
        key=orchid,
    )
    former = await app.recall(f"Who is the former employer of {kendra}?", inquiry=q)
    assert former["falsify"]["nodes"] == [nimbus], former["falsify"]
    assert former["order_from_question"]["anchor"]["key"] == orchid, former["order_from_question"]


async def test_the_first_value_of_a_timeline_answers_a_question_about_the_first(app, prefix):
    tag = prefix.strip("_")
    town = f"Brisk{tag}ton"
    q = f"{prefix}Q"
    await app.load(
        json.dumps(
            {
                "question": {"key": q, "text": f"Who governs {town}?"},
                "evidence": [
                    fact(
                        f"{prefix}M1",
                        f"The mayor of {town} is Ada Crane.",
                        town,
                        "mayor",
                        "Ada Crane",
                        valid_from="2001-01-01",
                    )
                ],
            }
        )
    )
    for i, (who, since) in enumerate([("Bo Lint", "2009-01-01"), ("Cy Moreau", "2017-01-01")]):
        await app.revise(
            f"The mayor of {town} is {who}.",
            triple=f"{town}|mayor|{who}",
            valid_from=since,
            inquiry=q,
            key=f"{prefix}M{i + 2}",
        )
    first = await app.recall(f"Who was the first mayor of {town}?", inquiry=q)
    assert first["falsify"]["nodes"] == [f"{prefix}M1"], first["falsify"]
    assert first["as_of"] == "2001-01-01" and first["as_of_from_question"] == "first", first
    now = await app.recall(f"Who is the mayor of {town}?", inquiry=q)
    assert now["falsify"]["nodes"] == [f"{prefix}M3"], now["falsify"]


# fixed names (used by no other test), so the distances are the same on every run


async def test_a_question_for_what_does_not_hold_is_not_answered_by_what_holds(app, prefix):
    # asked where she does not work, only where she works stored: no belief answers, the fact is
    # named as what is stored; asked whether she does not work there, the fact answers
    qn, works = f"{prefix}QN", f"{prefix}N1"
    await app.load(
        json.dumps(
            {
                "question": {"key": qn, "text": f"Where does Noa Brandt work? ({prefix})"},
                "evidence": [
                    fact(works, "Noa Brandt works at Kelso Labs.", "Noa Brandt", "works at", "Kelso Labs")
                ],
            }
        )
    )
    nowhere = (await app.recall("Where doesn't Noa Brandt work?", inquiry=qn))["falsify"]
    assert nowhere["nodes"] == [] and nowhere["answer"].startswith("no alive belief answers it"), nowhere
    assert f"in the affirmative: {works} (Noa Brandt works at Kelso Labs)" in nowhere["answer"], nowhere
    whether = (await app.recall("Does Noa Brandt not work at Kelso Labs?", inquiry=qn))["falsify"]
    assert whether["nodes"] == [works], whether
    # a fact said in the negative answers, though it names her less fully and lies beyond the floor
    qi, never = f"{prefix}QI", f"{prefix}F2"
    await app.load(
        json.dumps(
            {
                "question": {"key": qi, "text": f"What about Ines Vale? ({prefix})"},
                "evidence": [
                    fact(
                        f"{prefix}F1",
                        "Ines Vale works at Torvik Mills.",
                        "Ines Vale",
                        "works at",
                        "Torvik Mills",
                    ),
                    {"key": never, "claim": "Ines never worked for the Harlan Group."},
                ],
            }
        )
    )
    harlan = (await app.recall("Where doesn't Ines Vale work?", inquiry=qi))["falsify"]
    assert harlan["nodes"] == [never] and harlan["unheld"] == ["vale"], harlan


async def test_a_question_nothing_stored_holds_gets_no_story_of_a_dead_fact(app, prefix):
    # asked what nothing stores about someone whose home moved: no story of the dead home
    q1, q2, lisbon, porto = f"{prefix}Q1", f"{prefix}Q2", f"{prefix}M1", f"{prefix}M2"
    await app.load(
        json.dumps(
            {
                "question": {"key": q1, "text": "Where does Maia Rowe live?"},
                "evidence": [
                    fact(
                        lisbon,
                        "Maia Rowe lives in Lisbon.",
                        "Maia Rowe",
                        "lives in",
                        "Lisbon",
                        valid_from="2015-01-01",
                    )
                ],
            }
        )
    )
    await app.load(
        json.dumps(
            {
                "question": {"key": q2, "text": "What does Maia Rowe do?"},
                "evidence": [
                    fact(f"{prefix}J1", "Maia Rowe works as a nurse.", "Maia Rowe", "occupation", "nurse")
                ],
            }
        )
    )
    await app.revise(
        "Maia Rowe moved to Porto.",
        triple="Maia Rowe|lives in|Porto",
        valid_from="2018-01-01",
        inquiry=q2,
        key=porto,
    )
    married = (await app.recall("Who is Maia Rowe married to?", inquiry=q1))["falsify"]
    assert "replaces" not in married and lisbon not in married["answer"], married
    assert married["unheld"] == ["married"] and "does not hold the question's 'married'" in married["answer"]
    home = (await app.recall("Where does Maia Rowe live?", inquiry=q1))["falsify"]
    assert home["nodes"] == [porto] and home["replaces"]["key"] == lisbon, home


async def test_before_any_valid_time_an_undated_denial_is_no_answer(app, prefix):
    # before any CEO's valid time, the undated denial answers nothing: the fact that would is named
    qc, alan, carl = f"{prefix}QC", f"{prefix}C1", f"{prefix}C3"
    await app.load(
        json.dumps(
            {
                "question": {"key": qc, "text": "Who is the CEO of Orbex?"},
                "evidence": [
                    fact(
                        alan,
                        "Alan Reed is the CEO of Orbex.",
                        "Orbex",
                        "ceo",
                        "Alan Reed",
                        valid_from="2010-01-01",
                    )
                ],
            }
        )
    )
    await app.revise(
        "Carl Diaz is the CEO of Orbex.",
        triple="Orbex|ceo|Carl Diaz",
        valid_from="2021-03-01",
        inquiry=qc,
        key=carl,
    )
    await app.revise("Carl Diaz was never CEO of Orbex.", target=carl, inquiry=qc, key=f"{prefix}C4")
    early = (await app.recall("Who was the CEO of Orbex?", inquiry=qc, as_of="1990"))["falsify"]
    assert early["nodes"] == [] and early["dead_match"]["key"] == alan, early
    assert early["answer"].startswith("no alive belief answers it in 1990"), early
    assert f"{prefix}C4 (Carl Diaz was never CEO of Orbex) has no valid time recorded" in early["answer"]
    then = (await app.recall("Who was the CEO of Orbex?", inquiry=qc, as_of="2012"))["falsify"]
    assert then["nodes"] == [alan], then
