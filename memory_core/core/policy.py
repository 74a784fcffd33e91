"""Who wins a contradiction: the reconciliation policies (pure, no I/O).

For stored evidence E and a new fact F that a judge found contradictory (the
judge decides *that* they contradict, never who wins), :func:`decide` applies a
policy:

* ``latest_wins`` (default): the later ``asserted_at`` wins. F without a date is
  dated *today*; evidence without a date counts as older than any dated fact; a
  tie goes to F.
* ``trust_ranked``: the more trusted source wins; equal trust falls back to
  ``latest_wins``. A source that is not listed has trust :data:`DEFAULT_TRUST`.
* ``preserve_both``: no winner; E and F become ``disputed``.

The result is a :class:`Decision` with the winner (``"fact"``, ``"evidence"`` or
None for a dispute) and a one-line reason, e.g.
``"E_qa kept: trust 0.9 > 0.2 (trust_ranked)"``.

:func:`decisions_for` decides every contradiction of one new fact from what the stores
hold (:class:`PolicyInputs`: the contradicted evidence's properties and their questions'
policy and sources) and what the caller said about the fact (:class:`NewFact`): which
policy applies, and which trust each side has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Iterable, Mapping, Optional

from memory_core.core.errors import InputError

LATEST_WINS, TRUST_RANKED, PRESERVE_BOTH = "latest_wins", "trust_ranked", "preserve_both"
POLICIES = (LATEST_WINS, TRUST_RANKED, PRESERVE_BOTH)
DEFAULT_POLICY = LATEST_WINS
DEFAULT_TRUST = 0.5

FACT, EVIDENCE = "fact", "evidence"


@dataclass(frozen=True)
class Claim:
    """One side of a contradiction."""

    key: str
    asserted_at: Optional[str] = None
    trust: float = DEFAULT_TRUST
    source: Optional[str] = None


@dataclass(frozen=True)
class Decision:
    evidence: str  # the stored evidence's key
    fact: str  # the new fact's key
    winner: Optional[str]  # FACT | EVIDENCE | None (dispute)
    policy: str
    reason: str

    @property
    def dispute(self) -> bool:
        return self.winner is None

    @property
    def winner_key(self) -> Optional[str]:
        return {FACT: self.fact, EVIDENCE: self.evidence}.get(self.winner or "")

    @property
    def loser_key(self) -> Optional[str]:
        return {FACT: self.evidence, EVIDENCE: self.fact}.get(self.winner or "")

    def as_dict(self) -> dict:
        return {
            "evidence": self.evidence,
            "fact": self.fact,
            "winner": self.winner_key,
            "loser": self.loser_key,
            "policy": self.policy,
            "reason": self.reason,
        }


def check_policy(value: Any, what: str = "policy") -> str:
    if not isinstance(value, str) or value not in POLICIES:
        raise InputError(f"{what}: must be one of {', '.join(POLICIES)}, got {value!r}")
    return value


def finite(value) -> bool:
    """A number finite as a float: an integer too large for a float (309+ digits) is not."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def check_trust(value: Any, what: str = "trust") -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not finite(value)
        or not 0.0 <= float(value) <= 1.0
    ):
        raise InputError(f"{what}: must be a number from 0 to 1, got {repr(value)[:40]}")
    return float(value)


def moment(value: Optional[str]) -> Optional[datetime]:
    """An ISO date or date-time as an aware UTC datetime (a bare date is its midnight UTC)."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(text[:10]), datetime.min.time())
        except ValueError:
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        return parsed.astimezone(timezone.utc)
    except OverflowError:  # outside the calendar once in UTC: no instant
        return None


def _fmt(value: float) -> str:
    return f"{value:g}"


def latest(evidence: Claim, fact: Claim, today: str, label: str = LATEST_WINS) -> tuple[str, str]:
    fact_date = fact.asserted_at or today
    f_at, e_at = moment(fact_date), moment(evidence.asserted_at)
    f_text = fact_date + ("" if fact.asserted_at else " (today)")
    if e_at is None:
        return FACT, f"{fact.key} wins: {evidence.key} is undated, {fact.key} dated {f_text} ({label})"
    if f_at is None or e_at > f_at:
        return EVIDENCE, f"{evidence.key} kept: {evidence.asserted_at} > {f_text} ({label})"
    sign = "=" if e_at == f_at else ">"
    return FACT, f"{fact.key} wins: {f_text} {sign} {evidence.asserted_at} ({label})"


def decide(policy: str, evidence: Claim, fact: Claim, today: str) -> Decision:
    """Who wins between stored ``evidence`` and the new ``fact`` (``today``: ISO date)."""
    policy = check_policy(policy)
    if policy == PRESERVE_BOTH:
        return Decision(
            evidence.key,
            fact.key,
            None,
            policy,
            f"{evidence.key} and {fact.key} disputed: both kept ({policy})",
        )
    if policy == TRUST_RANKED:
        if fact.trust > evidence.trust:
            return Decision(
                evidence.key,
                fact.key,
                FACT,
                policy,
                f"{fact.key} wins: trust {_fmt(fact.trust)} > {_fmt(evidence.trust)} ({policy})",
            )
        if evidence.trust > fact.trust:
            return Decision(
                evidence.key,
                fact.key,
                EVIDENCE,
                policy,
                f"{evidence.key} kept: trust {_fmt(evidence.trust)} > {_fmt(fact.trust)} ({policy})",
            )
        winner, reason = latest(evidence, fact, today, f"equal trust {_fmt(fact.trust)}: {LATEST_WINS}")
        return Decision(evidence.key, fact.key, winner, policy, reason)
    winner, reason = latest(evidence, fact, today)
    return Decision(evidence.key, fact.key, winner, policy, reason)


def source_trust(sources: dict[str, float], source: Optional[str]) -> float:
    """The trust of ``source`` (not listed, or None: :data:`DEFAULT_TRUST`)."""
    if source is None:
        return DEFAULT_TRUST
    return float(sources.get(source, DEFAULT_TRUST))


def sources_of(question: Optional[Mapping[str, Any]]) -> dict[str, float]:
    """The sources a question lists (its stored properties' ``sources``): id -> trust."""
    return {s["id"]: float(s["trust"]) for s in (question or {}).get("sources") or [] if isinstance(s, dict)}


@dataclass(frozen=True)
class PolicyInputs:
    """What the stores hold that decides contradictions: the stored properties of the
    contradicted evidence (key -> ``asserted_at``, ``source_id``, ``trust``,
    ``question_key``) and of their questions (key -> ``policy``, ``sources``)."""

    evidence: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    questions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def ranks_by_trust(self) -> bool:
        """Whether one of the questions read decides by trust (then the sources earlier
        revisions registered matter)."""
        return any((q or {}).get("policy") == TRUST_RANKED for q in self.questions.values())


@dataclass(frozen=True)
class NewFact:
    """The new fact's side of its contradictions, as the caller gave it."""

    key: str
    question: Optional[str] = None  # the question it joins
    source: Optional[str] = None
    asserted_at: Optional[str] = None
    trust: Optional[float] = None  # --trust: registers a source not known yet
    policy: Optional[str] = None  # overrides the questions' policies


def decisions_for(
    inputs: PolicyInputs,
    fact: NewFact,
    contradicted: Iterable[str],
    registered: Mapping[str, float],
    today: str,
) -> tuple[dict[str, Decision], Optional[float]]:
    """Who wins each contradiction between ``fact`` and the ``contradicted`` evidence keys,
    and the trust the fact's source is registered with (``fact.trust`` for a source not
    known yet; None when nothing is to be registered). A source is known when its question
    lists it or an earlier revision registered it with a trust (``registered``: source id
    -> trust). The policy is the fact's own, else the evidence's question's, else the
    fact's question's, else :data:`DEFAULT_POLICY`; ``today`` (ISO date) dates an undated fact."""
    asked = inputs.questions.get(fact.question or "") or {}
    listed = sources_of(asked)
    source = fact.source
    fact_trust = None
    f_trust: Optional[float] = None  # a fact without a source has no trust of its own
    if source is not None:
        if source not in listed and source not in registered and fact.trust is not None:
            fact_trust = fact.trust
        f_trust = listed[source] if source in listed else registered.get(source, fact_trust)
    claim = Claim(
        fact.key, fact.asserted_at, f_trust if f_trust is not None else source_trust({}, None), source
    )
    result = {}
    for key in contradicted:
        props = inputs.evidence.get(key) or {}
        question = inputs.questions.get(props.get("question_key") or "") or asked
        e_listed = sources_of(question)
        sid: Optional[str] = props.get("source_id")
        e_trust: Optional[float] = (
            e_listed[sid] if sid is not None and sid in e_listed else props.get("trust")
        )
        if e_trust is None:
            e_trust = registered[sid] if sid is not None and sid in registered else source_trust({}, None)
        chosen = fact.policy or question.get("policy") or asked.get("policy") or DEFAULT_POLICY
        evidence = Claim(key, props.get("asserted_at"), float(e_trust), sid)
        result[key] = decide(chosen, evidence, claim, today)
    return result, fact_trust
