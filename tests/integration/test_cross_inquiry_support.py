"""A hypothesis's support counts every ``supports`` and ``refutes`` edge it has, whatever
inquiry the evidence at the other end belongs to (rule 5: the revision engine promotes on
it), and explain and recall read it so:

* explain's ``support`` of a hypothesis held only by another inquiry's evidence names that
  evidence (score, remaining), and once it is refuted, as lost;
* recall of the inquiry leads with that hypothesis, resting on the other inquiry's evidence,
  and does not call it unsupported;
* recall ranks hypotheses by their whole support: a stronger supporter of another inquiry
  outranks a weaker one of its own, a refuter of another inquiry lowers it, and at a past
  epoch the support of then counts.
"""

from __future__ import annotations

import json

import pytest

from conftest import investigation

pytestmark = pytest.mark.slow


def evidence_only(prefix: str, question: str, evidence: list[dict]) -> str:
    """An inquiry of evidence alone (keys prefixed), with its own question text."""
    return json.dumps(
        {
            "question": {
                "key": f"{prefix}{question}",
                "text": f"Question {prefix} {question}: what is on file?",
            },
            "evidence": [dict(e, key=f"{prefix}{e['key']}") for e in evidence],
        }
    )


async def test_explain_counts_a_supporter_of_another_inquiry(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        evidence_only(prefix, "QV", [{"key": "EV", "claim": f"The {prefix} valve invoice names Quorlak."}])
    )
    await app.load(
        investigation(
            prefix,
            hypotheses=[
                {"key": "HQ", "statement": f"Quorlak is liable for the {prefix} valve.", "prior": 0.3},
                {"key": "HM", "statement": f"The {prefix} assembler is liable.", "prior": 0.6},
            ],
            evidence=[{"key": "EM", "claim": f"The {prefix} assembly log shows a torque error."}],
            edges=[
                {"type": "supports", "from": "EV", "to": "HQ", "weight": 0.7},
                {"type": "supports", "from": "EM", "to": "HM", "weight": 0.9},
            ],
            question="QL",
        )
    )
    support = (await app.explain(p("HQ")))["support"]
    assert support["score"] == pytest.approx(0.7), support
    assert support["remaining"] == [{"key": p("EV"), "state": "alive", "weight": 0.7}], support
    assert support["lost"] == [], support
    revised = await app.revise(f"The {prefix} valve invoice is a forgery.", target=p("EV"), key=p("FV"))
    assert p("EV") in revised["refuted"], revised
    assert p("EV") not in revised["forgotten"], revised
    support = (await app.explain(p("HQ")))["support"]
    assert support["score"] == 0.0, support
    assert support["remaining"] == [], support
    assert support["lost"] == [{"key": p("EV"), "state": "refuted", "weight": 0.7}], support


async def test_recall_leads_with_a_hypothesis_supported_from_another_inquiry(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        evidence_only(
            prefix, "QW", [{"key": "EW", "claim": f"The {prefix} Brindlecourt ledger lists the shipment."}]
        )
    )
    await app.load(
        investigation(
            prefix,
            hypotheses=[
                {"key": "HW", "statement": f"The {prefix} shipment went through Brindlecourt.", "prior": 0.3},
                {"key": "HX", "statement": f"The {prefix} shipment went by sea.", "prior": 0.6},
            ],
            evidence=[{"key": "EX", "claim": f"A {prefix} harbour manifest lists the shipment."}],
            edges=[
                {"type": "supports", "from": "EW", "to": "HW", "weight": 0.7},
                {"type": "supports", "from": "EX", "to": "HX", "weight": 0.9},
            ],
            question="QS",
        )
    )
    revised = await app.revise(f"The {prefix} harbour manifest was misread.", target=p("EX"), key=p("FX"))
    assert revised["promoted"] == [p("HW")], revised
    answer = (await app.recall(inquiry=p("QS")))["falsify"]
    assert answer["nodes"][:2] == [p("HW"), p("EW")], answer
    assert answer["rests_on"] == {"key": p("HW"), "supported_by": [p("EW")]}, answer
    assert p("HW") not in [u["key"] for u in answer.get("unsupported", [])], answer


async def test_recall_ranks_hypotheses_by_support_from_every_inquiry(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        evidence_only(
            prefix,
            "QI",
            [
                {"key": "EI", "claim": f"The {prefix} Tarvenholm inspection of 2019 passed the bridge."},
                {"key": "ER", "claim": f"The {prefix} Tarvenholm load test of 2020 failed."},
            ],
        )
    )
    before = app.journal.epoch()
    await app.load(
        investigation(
            prefix,
            hypotheses=[
                {"key": "HS", "statement": f"The {prefix} Tarvenholm bridge is safe."},
                {"key": "HU", "statement": f"The {prefix} Tarvenholm bridge is unsafe."},
            ],
            evidence=[{"key": "EC", "claim": f"Cracks in the {prefix} Tarvenholm bridge were photographed."}],
            edges=[
                {"type": "supports", "from": "EI", "to": "HS", "weight": 0.8},
                {"type": "supports", "from": "EC", "to": "HU", "weight": 0.4},
            ],
            question="QB",
        )
    )
    loaded = app.journal.epoch()
    assert loaded == before + 1
    answer = (await app.recall(inquiry=p("QB")))["falsify"]
    assert answer["nodes"][:2] == [p("HS"), p("EI")], answer
    # a refuter of another inquiry counts against it: 0.8 - 0.5 = 0.3 < 0.4
    await app.load(
        json.dumps(
            {
                "question": {"key": p("QB")},
                "edges": [{"type": "refutes", "from": p("ER"), "to": p("HS"), "weight": 0.5}],
            }
        )
    )
    answer = (await app.recall(inquiry=p("QB")))["falsify"]
    assert answer["nodes"][:2] == [p("HU"), p("EC")], answer
    support = (await app.explain(p("HS")))["support"]
    assert support["score"] == pytest.approx(0.3), support
    assert support["refuters"] == [{"key": p("ER"), "state": "alive", "weight": 0.5}], support
    # as it stood after the load, before the refuter: the supporter of the other inquiry leads
    then = (await app.recall(inquiry=p("QB"), epoch=loaded))["falsify"]
    assert then["nodes"][:2] == [p("HS"), p("EI")], then


async def test_recall_as_of_reads_a_supporter_of_another_inquiry_on_its_slice(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        evidence_only(
            prefix,
            "QP",
            [
                {
                    "key": "EP",
                    "claim": f"The {prefix} Oskeldt permit allowed the quarry.",
                    "valid_from": "2010-01-01",
                    "valid_to": "2015-01-01",
                }
            ],
        )
    )
    await app.load(
        investigation(
            prefix,
            hypotheses=[
                {"key": "HL", "statement": f"The {prefix} Oskeldt quarry was lawful."},
                {"key": "HN", "statement": f"The {prefix} Oskeldt quarry was unlawful."},
            ],
            evidence=[{"key": "EN", "claim": f"A {prefix} Oskeldt inspector reported illegal blasting."}],
            edges=[
                {"type": "supports", "from": "EP", "to": "HL", "weight": 0.8},
                {"type": "supports", "from": "EN", "to": "HN", "weight": 0.4},
            ],
            question="QQ",
        )
    )
    # in 2012 the permit held: the hypothesis it supports leads
    then = (await app.recall(inquiry=p("QQ"), as_of="2012-06-01"))["falsify"]
    assert then["nodes"][:2] == [p("HL"), p("EP")], then
    # in 2020 it no longer did: its hypothesis held by nothing then, the other leads
    later = (await app.recall(inquiry=p("QQ"), as_of="2020-06-01"))["falsify"]
    assert later["nodes"][:2] == [p("HN"), p("EN")], later
    assert p("HL") not in [u["key"] for u in later["unsupported"]], later  # not alive then: not unsupported
