"""explain on the real stores reads the graph it explains as the cascade does:

* a node brought back with one of its justifications' members still forgotten is held by
  the justification that holds, not by what is left of the other one once the forgotten
  member's edge is gone (the forgotten node takes part as the dead ghost it is);
* antecedents in another inquiry are read where they live: a conclusion resting on them
  is neither shown resting on less nor called a premise;
* a dead node says what keeps it dead now: the refuter that holds, not only the one the
  log first named, which has died since;
* a dispute a later revision settled is over: its ``disputes`` edge is gone (undo puts it back)
  and the former rival is named neither as a refuter nor as still in dispute.
"""

from __future__ import annotations

import json

import pytest

from conftest import investigation

pytestmark = pytest.mark.slow


async def test_a_forgotten_member_breaks_its_justification(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            hypotheses=[{"key": "HV", "statement": f"The {prefix} trial is valid."}],
            evidence=[
                {"key": "P", "claim": f"The {prefix} randomisation log is intact."},
                {"key": "Qe", "claim": f"The {prefix} sample size was 3000 patients."},
                {"key": "R", "claim": f"An external auditor certified the {prefix} trial."},
            ],
            conclusions=[
                {"key": "KP", "statement": f"Randomisation of {prefix} was proper."},
                {"key": "X", "statement": f"The {prefix} trial results can be trusted."},
            ],
            edges=[
                {"type": "depends_on", "from": "KP", "to": "P"},
                {"type": "depends_on", "from": "X", "to": "KP", "group": "a"},
                {"type": "depends_on", "from": "X", "to": "Qe", "group": "a"},
                {"type": "depends_on", "from": "X", "to": "R", "group": "b"},
                {"type": "supports", "from": "Qe", "to": "HV", "weight": 0.5},
            ],
        )
    )
    await app.revise(f"The {prefix} randomisation log was tampered with.", target=p("P"), key=p("FP"))
    gone = await app.revise(f"The {prefix} auditor never certified the trial.", target=p("R"), key=p("FR"))
    assert {p("X"), p("KP")} <= set(gone["forgotten"]), gone
    back = await app.revise(f"The {prefix} auditor's denial was a fake.", target=p("FR"), key=p("FR2"))
    assert p("X") in back["reinstated"], back
    why = (await app.explain(p("X")))["why_alive"]
    assert why["justification"] == "b", why
    assert [a["key"] for a in why["antecedents"]] == [p("R")], why
    kp = await app.explain(p("KP"))
    assert kp["state"] == "forgotten" and "why_alive" not in kp
    # recall's answer rests on the same justification
    answer = (await app.recall(f"Can the {prefix} trial results be trusted?"))["falsify"]
    assert answer["nodes"] == [p("X"), p("R")], answer
    assert answer["rests_on"]["justification"] == "b", answer["rests_on"]


async def test_antecedents_in_another_inquiry_are_read(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            evidence=[{"key": "EA1", "claim": f"Lead was measured in the {prefix} river."}],
            question="QA",
        )
    )
    await app.load(
        investigation(
            prefix,
            evidence=[{"key": "EB1", "claim": f"The {prefix} town draws its water from the river."}],
            conclusions=[{"key": "XB", "statement": f"The {prefix} town water contains lead."}],
            edges=[
                {"type": "depends_on", "from": "XB", "to": "EA1"},
                {"type": "depends_on", "from": "XB", "to": "EB1"},
            ],
            question="QB",
        )
    )
    fragment = {
        "question": {"key": p("QB")},
        "conclusions": [{"key": p("XC"), "statement": f"The {prefix} river carries lead downstream."}],
        "edges": [{"type": "depends_on", "from": p("XC"), "to": p("EA1")}],
    }
    await app.load(json.dumps(fragment))
    xb = (await app.explain(p("XB")))["why_alive"]
    assert sorted(a["key"] for a in xb["antecedents"]) == [p("EA1"), p("EB1")], xb
    xc = (await app.explain(p("XC")))["why_alive"]
    assert xc["premise"] is False and [a["key"] for a in xc["antecedents"]] == [p("EA1")], xc


async def test_a_dead_node_names_what_keeps_it_dead_now(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            hypotheses=[{"key": "H1", "statement": f"The {prefix} miller poisoned the well."}],
            evidence=[
                {"key": "E1", "claim": f"The {prefix} miller bought arsenic in May 1890."},
                {"key": "E2", "claim": f"The {prefix} miller was seen at the well at night."},
            ],
            conclusions=[{"key": "KA", "statement": f"The {prefix} miller had means and opportunity."}],
            edges=[
                {"type": "depends_on", "from": "KA", "to": "E1"},
                {"type": "depends_on", "from": "KA", "to": "E2"},
                {"type": "supports", "from": "E1", "to": "H1", "weight": 0.6},
                {"type": "supports", "from": "E2", "to": "H1", "weight": 0.3},
            ],
        )
    )
    await app.revise(f"The {prefix} miller never bought arsenic.", target=p("E1"), key=p("G1"))
    await app.revise(f"The {prefix} miller's purchase is a forgery.", target=p("E1"), key=p("F"))
    await app.revise(f"The claim that the {prefix} miller never bought arsenic was mistaken.", target=p("G1"))
    e1 = await app.explain(p("E1"))
    assert e1["state"] == "refuted", e1
    why = e1["why_dead"]
    assert why["attackers"] == [{"key": p("F"), "state": "alive", "by": "supersedes"}], why
    assert why["past_attackers"] == [{"key": p("G1"), "state": "refuted", "by": "supersedes"}], why
    assert why["reasons"] == [f"{p('F')} (alive) supersedes it"], why


async def test_contradicted_evidence_resting_on_evidence_is_refuted_by_its_attacker(app, prefix):
    """Rule 1 for evidence that rests on other evidence: contradicted while what it rests
    on holds, it is refuted by the fact (not "invalidated: it rested on" its attacker); it
    comes back when its refuter dies, and so does a resolve's loser or winner."""
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    for q in ("A", "B"):
        await app.load(
            investigation(
                prefix,
                evidence=[
                    {"key": f"Eb{q}", "claim": f"The {prefix} {q} gauge reading was taken."},
                    {"key": f"Ed{q}", "claim": f"The {prefix} {q} flow rate follows from the reading."},
                ],
                conclusions=[{"key": f"K{q}", "statement": f"The {prefix} {q} pipe is blocked."}],
                edges=[
                    {"type": "depends_on", "from": f"Ed{q}", "to": f"Eb{q}"},
                    {"type": "depends_on", "from": f"K{q}", "to": f"Ed{q}"},
                ],
                question=f"Q{q}",
            )
        )
    r = await app.revise(f"The {prefix} A flow rate is wrong.", target=p("EdA"), key=p("FA"))
    assert (r["refuted"], r["invalidated"]) == ([p("EdA")], [p("KA")]), r
    ed = await app.explain(p("EdA"))
    assert ed["state"] == "refuted", ed
    assert ed["events"][-1]["text"].startswith(f"refuted: contradicted by {p('FA')}"), ed["events"]
    r = await app.revise(f"The {prefix} A correction is itself wrong.", target=p("FA"), key=p("GA"))
    assert p("EdA") in r["reinstated"] and p("KA") in r["reinstated"], r
    text = (await app.explain(p("EdA")))["events"][-1]["text"]
    assert f"its refuter {p('FA')} was refuted by {p('GA')}" in text, text
    # through resolve: the loser resting on evidence is refuted, the winner's cause is the loser
    await app.revise(
        f"The {prefix} B flow rate is doubted.", target=p("EdB"), key=p("FB"), policy="preserve_both"
    )
    r = await app.resolve(p("FB"), winner=p("EdB"))
    assert r["refuted"] == [p("FB")] and p("EdB") in r["reinstated"], r
    text = (await app.explain(p("EdB")))["events"][-1]["text"]
    assert text.startswith(f"alive again: its dispute was resolved in its favour ({p('FB')} lost)"), text
    await app.revise(
        f"The {prefix} B flow rate is doubted again.", target=p("EdB"), key=p("HB"), policy="preserve_both"
    )
    r = await app.resolve(p("EdB"), winner=p("HB"))
    assert (r["refuted"], r["invalidated"]) == ([p("EdB")], [p("KB")]), r
    assert (await app.explain(p("EdB")))["state"] == "refuted"


async def test_a_dispute_a_later_revision_settles_loses_its_edge(app, prefix):
    """D1 and DF in dispute, then DG refutes DF: the dispute is over as a resolve ends it. The
    ``disputes`` edge is gone from the stores, explain names DG (not the former rival D1) as
    what killed DF, and D1 says whose death ended its dispute; undo puts the edge back."""
    p = lambda k: f"{prefix}{k}"  # noqa: E731

    def disputes(status: dict) -> list[tuple[str, str]]:
        return [
            (e["from"], e["to"])
            for e in status["edges"]
            if e["type"] == "disputes" and {e["from"], e["to"]} & {p("DS1"), p("DSF")}
        ]

    await app.load(
        investigation(
            prefix,
            evidence=[{"key": "DS1", "claim": f"The {prefix} ferry left at noon."}],
            conclusions=[{"key": "KDS", "statement": f"The {prefix} courier missed the ferry."}],
            edges=[{"type": "depends_on", "from": "KDS", "to": "DS1"}],
            question="QDS",
        )
    )
    await app.revise(
        f"The {prefix} ferry left at dawn.", target=p("DS1"), key=p("DSF"), policy="preserve_both"
    )
    assert disputes(await app.status()) == [(p("DSF"), p("DS1"))]
    r = await app.revise(f"The {prefix} dawn sailing is a misprint.", target=p("DSF"), key=p("DSG"))
    assert r["refuted"] == [p("DSF")] and p("DS1") in r["reinstated"], r
    assert disputes(await app.status()) == []
    df = await app.explain(p("DSF"))
    assert df["state"] == "refuted", df
    assert df["why_dead"]["reasons"] == [f"{p('DSG')} (alive) supersedes it"], df["why_dead"]
    assert df["events"][-1]["text"].startswith(f"refuted: contradicted by {p('DSG')} ("), df["events"]
    d1 = await app.explain(p("DS1"))
    assert f"dispute ended: {p('DSF')} was refuted by {p('DSG')}" in d1["events"][-1]["text"], d1["events"]
    await app.undo()
    assert disputes(await app.status()) == [(p("DSF"), p("DS1"))]
    assert (await app.explain(p("DSF")))["state"] == "disputed"
    assert (await app.explain(p("DS1")))["state"] == "disputed"


async def test_a_promoted_rival_losing_its_support_is_explained_by_what_died_now(app, prefix):
    """The demo: E_qa refuted (A superseded, B promoted), then E_email, B's only support: A comes
    back and both are weakened (no hypothesis keeps alive support). Their reasons name what died
    now and claim nothing false: A never had E_email's support and did not get its own back."""
    from conftest import seed_with_prefix

    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(seed_with_prefix(prefix))
    await app.revise(f"Forensic audit: the March QA report was back-dated ({prefix}).", target=p("E_qa"))
    third = await app.revise(f"Lab test: the email header is forged ({prefix}).", target=p("E_email"))
    said = {
        key: [e["text"] for e in (await app.explain(p(key)))["events"] if e["epoch"] == third["epoch"]]
        for key in ("A", "B")
    }
    demoted = [t for t in said["B"] if t.startswith("promotion undone")]
    assert demoted == [
        f"promotion undone: {p('A')} holds again (promoted only because {p('A')} had lost its support)"
    ]
    for key in ("A", "B"):
        weakened = [t for t in said[key] if t.startswith("weakened")]
        assert weakened and all(
            t.startswith(
                f"weakened: no hypothesis of its question has alive support once {p('E_email')} died"
            )
            for t in weakened
        ), said[key]
    assert not any(
        "support back" in t or "lost its support " + p("E_email") in t for t in said["A"] + said["B"]
    )


async def test_a_side_of_a_dispute_dying_with_its_support_was_not_contradicted_by_its_rival(app, prefix):
    """E1 rests on D and is in dispute with F1 (preserve_both: neither won). D refuted: E1 dies
    for want of support, so F1 holds. E1 is invalidated by D, not 'contradicted by F1', and F1
    comes back because its rival died, the dispute kept (its edge stays): refuting G brings
    D back and the dispute with it."""
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "D", "claim": f"The {prefix} tower was surveyed."},
                {
                    "key": "E1",
                    "claim": f"The {prefix} tower is 10 m tall.",
                    "subject": f"{prefix} tower",
                    "predicate": "height",
                    "object": "10 m",
                },
            ],
            edges=[{"type": "depends_on", "from": "E1", "to": "D"}],
        )
    )
    await app.revise(
        f"The {prefix} tower is 20 m tall.",
        triple=f"{prefix} tower|height|20 m",
        key=p("F1"),
        policy="preserve_both",
    )
    result = await app.revise(f"The {prefix} tower was never surveyed.", target=p("D"), key=p("G"))
    assert result["refuted"] == [p("D")] and p("E1") in result["invalidated"], result
    e1, f1 = (await app.explain(p("E1"))), (await app.explain(p("F1")))
    died = [e for e in e1["events"] if e["rule"] != "orphaned"][-1]  # then forgotten: nothing rests on it
    assert died["rule"] == "justification_lost" and died["cause"] == [p("D")], e1["events"]
    assert f1["state"] == "alive" and "dispute ended" not in f1["events"][-1]["text"], f1["events"][-1]
    assert f"its rival {p('E1')} was invalidated by {p('D')}" in f1["events"][-1]["text"], f1["events"][-1]
    back = await app.revise(f"The {prefix} survey record was found.", target=p("G"), key=p("G2"))
    assert {p("E1"), p("F1")} <= set(back["disputed"]), back
