"""core.policy.decisions_for: who wins each contradiction of a new fact, from plain values
(what the stores hold, what the caller said), with no store and no clock."""

from __future__ import annotations

import pytest

from memory_core.core.errors import InputError
from memory_core.core.policy import (
    DEFAULT_TRUST,
    EVIDENCE,
    FACT,
    LATEST_WINS,
    PRESERVE_BOTH,
    TRUST_RANKED,
    NewFact,
    PolicyInputs,
    decisions_for,
    sources_of,
)

TODAY = "2026-12-02"


def inputs(policy=None, sources=(), **evidence) -> PolicyInputs:
    """Evidence key -> its stored properties, all in question Q (policy and sources given)."""
    question = {"key": "Q", "policy": policy, "sources": [{"id": s, "trust": t} for s, t in sources]}
    return PolicyInputs({k: dict(v, question_key="Q") for k, v in evidence.items()}, {"Q": question})


def winners(decided) -> dict:
    return {k: d.winner for k, d in decided.items()}


def test_latest_wins_by_default_newer_side_wins():
    held = inputs(E_old={"asserted_at": "2024-01-01"}, E_new={"asserted_at": "2026-06-01"})
    decided, trust = decisions_for(
        held, NewFact("F", "Q", asserted_at="2025-01-01"), ["E_old", "E_new"], {}, TODAY
    )
    assert winners(decided) == {"E_old": FACT, "E_new": EVIDENCE}
    assert {d.policy for d in decided.values()} == {LATEST_WINS} and trust is None
    assert decided["E_new"].reason == "E_new kept: 2026-06-01 > 2025-01-01 (latest_wins)"


def test_an_undated_fact_is_dated_today():
    held = inputs(E={"asserted_at": "2027-01-01"})
    decided, _ = decisions_for(held, NewFact("F", "Q"), ["E"], {}, TODAY)
    assert decided["E"].winner == EVIDENCE and "2026-12-02 (today)" in decided["E"].reason
    decided, _ = decisions_for(held, NewFact("F", "Q"), ["E"], {}, "2027-06-01")
    assert decided["E"].winner == FACT


def test_trust_ranked_reads_the_questions_listed_sources():
    held = inputs(
        TRUST_RANKED, [("wire", 0.9), ("tabloid", 0.2)], E={"source_id": "wire", "asserted_at": "2020-01-01"}
    )
    decided, trust = decisions_for(
        held, NewFact("F", "Q", source="tabloid", asserted_at="2026-01-01"), ["E"], {}, TODAY
    )
    assert decided["E"].winner == EVIDENCE and decided["E"].reason == "E kept: trust 0.9 > 0.2 (trust_ranked)"
    assert trust is None  # a listed source is not registered again


def test_the_facts_own_policy_overrides_the_questions():
    held = inputs(TRUST_RANKED, [("wire", 0.9), ("tabloid", 0.2)], E={"source_id": "wire"})
    decided, _ = decisions_for(
        held, NewFact("F", "Q", source="tabloid", policy=PRESERVE_BOTH), ["E"], {}, TODAY
    )
    assert decided["E"].dispute and decided["E"].policy == PRESERVE_BOTH


def test_the_evidences_question_decides_before_the_facts():
    held = PolicyInputs(
        {"E": {"question_key": "Q2", "asserted_at": "2020-01-01"}},
        {"Q": {"policy": LATEST_WINS}, "Q2": {"policy": PRESERVE_BOTH}},
    )
    decided, _ = decisions_for(held, NewFact("F", "Q"), ["E"], {}, TODAY)
    assert decided["E"].policy == PRESERVE_BOTH
    # evidence whose question was not read falls back to the fact's question
    held = PolicyInputs({"E": {"asserted_at": "2020-01-01"}}, {"Q": {"policy": PRESERVE_BOTH}})
    assert decisions_for(held, NewFact("F", "Q"), ["E"], {}, TODAY)[0]["E"].policy == PRESERVE_BOTH


def test_a_new_source_with_a_trust_is_registered_once():
    held = inputs(TRUST_RANKED, E={"source_id": "wire", "trust": 0.6})
    decided, trust = decisions_for(held, NewFact("F", "Q", source="blog", trust=0.8), ["E"], {}, TODAY)
    assert trust == 0.8 and decided["E"].winner == FACT  # 0.8 > the stored evidence's own 0.6
    # registered by an earlier revision: known, its registered trust counts, nothing registered again
    decided, trust = decisions_for(
        held, NewFact("F", "Q", source="blog", trust=0.1), ["E"], {"blog": 0.3}, TODAY
    )
    assert trust is None and decided["E"].winner == EVIDENCE
    assert decided["E"].reason == "E kept: trust 0.6 > 0.3 (trust_ranked)"


def test_unknown_sources_have_the_default_trust():
    held = inputs(TRUST_RANKED, E={"source_id": "somewhere", "asserted_at": "2020-01-01"})
    decided, trust = decisions_for(
        held, NewFact("F", "Q", source="elsewhere", asserted_at="2021-01-01"), ["E"], {}, TODAY
    )
    assert trust is None and decided["E"].winner == FACT
    assert (
        decided["E"].reason == f"F wins: 2021-01-01 > 2020-01-01 (equal trust {DEFAULT_TRUST:g}: latest_wins)"
    )
    # evidence from a source an earlier revision registered takes that trust
    decided, _ = decisions_for(held, NewFact("F", "Q", source="elsewhere"), ["E"], {"somewhere": 0.9}, TODAY)
    assert decided["E"].winner == EVIDENCE


def test_a_bad_policy_is_an_input_error():
    with pytest.raises(InputError):
        decisions_for(inputs(), NewFact("F", "Q", policy="loudest_wins"), ["E"], {}, TODAY)


def test_helpers():
    assert sources_of({"sources": [{"id": "a", "trust": "0.5"}, "junk"]}) == {"a": 0.5}
    assert sources_of(None) == {}
    assert inputs(TRUST_RANKED).ranks_by_trust() and not inputs(LATEST_WINS).ranks_by_trust()
    assert decisions_for(inputs(), NewFact("F", "Q"), [], {}, TODAY) == ({}, None)
