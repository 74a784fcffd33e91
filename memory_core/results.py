"""The shapes every operation returns: exactly what the CLI prints with ``--json``,
what the Python API returns and what the MCP tools return as structured content.

They are ``TypedDict``s (plain dicts at run time). ``total=False`` marks keys that
appear only in some results; docs/json-shapes.md is the same
contract in prose. New keys may be added; existing ones keep their meaning.
"""

from __future__ import annotations

from typing import Any, NotRequired, Optional, TypedDict


class Candidate(TypedDict):
    key: str
    distance: Optional[float]  # gate 1's cosine distance; None when found by subject+predicate lookup or pinned
    relation: Optional[str]  # contradicts | supersedes | supports | unrelated; None when no judge could decide
    confidence: Optional[float]
    rationale: str
    claim: str  # the stored claim
    lexical: Optional[float]  # gate 1's lexical (full-text) score; None when not a lexical hit
    rank: Optional[int]  # place in gate 1's fused ranking, from 1; None for a lookup, a pin or a batch's fact
    question: Optional[str]


class RevisionResult(TypedDict, total=False):
    fact: str
    new_evidence: Optional[str]  # the new fact's key (None when nothing was recorded)
    judge: str  # pinned | structured | llm | structured+llm | none
    candidates: list[Candidate]
    refuted: list[str]
    superseded: list[str]  # evidence and hypotheses
    invalidated: list[str]  # includes nodes then forgotten
    weakened: list[str]
    promoted: list[str]
    forgotten: list[str]
    epoch: Optional[int]  # None when nothing changed
    elapsed_ms: float
    note: str
    timings: dict[str, float]
    threshold: Optional[float]  # gate 1's cosine-distance floor; None: none (a bounded top-k only)
    to_decide: list[str]  # offline: candidates no judge could decide, best first; revise again with target=KEY
    question: Optional[str]
    dry_run: bool
    already_applied: bool
    # who wins; also the shape of resolve's result, judge "resolve"
    decisions: list[dict]  # {"evidence", "fact", "winner", "loser", "policy", "reason"}; winner None: a dispute
    disputed: list[str]  # nodes that became disputed
    reinstated: list[str]  # nodes alive again (reinstated, or a dispute's winner)
    restored: list[str]  # forgotten nodes re-added to both stores from their tombstones
    demoted: list[str]  # hypotheses whose promotion was undone
    warnings: list[str]  # committed, but what followed the commit point failed (do not revise again)


class LoadResult(TypedDict):
    question: str
    added: list[str]
    edges_added: list[str]  # "type from -> to"
    invalidated: list[str]  # new nodes whose justifications were already dead
    notes: list[str]
    epoch: Optional[int]  # None when nothing new was stored
    warnings: NotRequired[list[str]]  # committed, but what followed the commit point failed


class StatusNode(TypedDict, total=False):
    key: str
    type: str  # question | hypothesis | evidence | conclusion
    state: str
    feedback_weight: float
    epoch: int
    text: str
    question: Optional[str]
    confidence: Optional[float]
    prior: float
    source_id: str
    quote: str
    asserted_at: str
    subject: str
    predicate: str
    object: str


class StatusEdge(TypedDict, total=False):
    type: str
    # "from" and "to" (keys) are present on every edge; they are Python keywords, so
    # they cannot be declared here: read them as edge["from"], edge["to"]
    critical: bool
    group: Optional[str]
    weight: float
    confidence: Optional[float]


class StatusResult(TypedDict):
    nodes: list[StatusNode]
    edges: list[dict[str, Any]]


class ExplainEvent(TypedDict, total=False):
    epoch: int
    at: Optional[str]
    rule: str
    cause: list[str]
    state: str
    text: str
    fact: Optional[str]
    undone: bool


class ExplainResult(TypedDict, total=False):
    key: str
    known: bool
    events: list[ExplainEvent]
    state: Optional[str]  # current state ("forgotten" for a forgotten node; None if never stored)
    why_alive: Optional[dict]  # alive nodes: the justification holding it, recursively to premises


class RecallSide(TypedDict, total=False):
    answer: str
    nodes: list[str]
    sources: list[str]
    disputed: list[str]  # FALSIFY's side: disputed nodes of the question (never used to answer)
    disputes: list[dict]  # {"keys": [a, b], "rests_on_it": [...]}, one per unresolved dispute


class RecallResult(TypedDict, total=False):
    question: str
    investigation: str
    falsify: RecallSide
    baseline: RecallSide
    verdict: str
    mode: str
    scoreboard: dict[str, str]  # falsify_mark, baseline_mark
    baseline_states: dict[str, str]
    baseline_distances: list[float]
    as_of: str  # recall(as_of=DATE): FALSIFY answered from the beliefs valid at that date


class SearchHit(TypedDict):
    key: str
    type: str  # evidence | conclusion
    text: str
    state: str
    distance: float
    sources: list[str]


class UndoResult(TypedDict, total=False):
    undone: Optional[int]  # the epoch reverted; None when there was nothing to undo
    kind: str
    fact: Optional[str]
    epoch: int
    restored: list[str]
    removed: list[str]
    reverted: list[str]
    note: str
    warnings: list[str]  # committed, but what followed the commit point failed (do not undo again)


class CheckResult(TypedDict, total=False):
    clean: bool
    problems: list[str]
    recovered_at_open: str
    repaired: list[str]
    clean_after_repair: bool
    problems_after_repair: list[str]
    cannot_restore: list[str]
    warnings: list[str]  # a repair committed, but what followed its commit point failed


__all__ = ["Candidate", "RevisionResult", "LoadResult", "StatusNode", "StatusEdge", "StatusResult", "ExplainEvent",
           "ExplainResult", "RecallSide", "RecallResult", "SearchHit", "UndoResult", "CheckResult"]
