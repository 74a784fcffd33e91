"""The shapes every operation returns: exactly what the CLI prints with ``--json``,
what the Python API returns and what the MCP tools return as structured content.

They are ``TypedDict``s (plain dicts at run time), declared here in the pure core so the
operations that build a result (``memory_core/ops``) and the facade that returns it name the
same type; callers import them from :mod:`memory_core.results`. ``total=False`` marks keys
that appear only in some results; docs/json-shapes.md is the same contract in prose. New keys
may be added; existing ones keep their meaning.
"""

from __future__ import annotations

from typing import Any, NotRequired, Optional, TypedDict


class Candidate(TypedDict):
    key: str
    distance: Optional[
        float
    ]  # gate 1's cosine distance; None when found by subject+predicate lookup or pinned
    # contradicts | supersedes | supports | unrelated; consistent: the caller's record decision (judge "caller");
    # None when no judge could decide
    relation: Optional[str]
    confidence: Optional[float]
    rationale: str
    claim: str  # the stored claim
    lexical: Optional[float]  # gate 1's lexical (full-text) score; None when not a lexical hit
    rank: Optional[int]  # place in gate 1's fused ranking, from 1; None for a lookup, a pin or a batch's fact
    question: Optional[str]


class RevisionResult(TypedDict, total=False):
    fact: str
    new_evidence: Optional[str]  # the new fact's key (None when nothing was recorded)
    judge: str  # pinned | structured | llm | structured+llm | caller (the caller's record decision) | none
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
    # offline: candidates no judge could decide, best first (a dry run too); revise again with target=KEY for
    # the one the fact contradicts, or record=True if it contradicts none
    to_decide: list[str]
    question: Optional[str]
    dry_run: bool
    already_applied: bool
    # who wins; also the shape of resolve's result, judge "resolve"
    decisions: list[
        dict
    ]  # {"evidence", "fact", "winner", "loser", "policy", "reason"}; winner None: a dispute
    disputed: list[str]  # nodes that became disputed
    reinstated: list[str]  # nodes alive again (reinstated, or a dispute's winner)
    restored: list[str]  # forgotten nodes re-added to both stores from their tombstones
    demoted: list[str]  # hypotheses whose promotion was undone
    edges_added: list[str]  # "supports F -> H" / "refutes F -> H": the caller's supports/refutes, as written
    warnings: list[str]  # committed, but what followed the commit point failed (do not revise again)
    # valid time: how it read each judged contradiction (untimed, one_side_untimed, disjoint,
    # ends_stored, new_precedes, same_period), and the intervals this revision gives
    validity: dict[str, str]
    intervals: dict[str, dict]  # key -> {"valid_from", "valid_to"} (+ "was": the valid_to before)
    preview: dict  # a dry run: {"new_evidence", "epoch"} the real run would record
    # what the LLM judge cost for this fact: {"calls", "prompt_tokens", "completion_tokens", "cost_usd"}
    llm: dict[str, Any]
    not_reinstated: list[str]  # nodes the new fact (or a resolve's winner) contradicts too: they stay dead
    restated: list[str]  # the fact asserted again: its earlier records it takes the place of (they stay dead)


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
    valid_from: str  # evidence: when it held in the world (ISO dates), each when it is set
    valid_to: str
    predicates: dict[str, str]  # a question's declared predicates: predicate -> cardinality


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
    epoch: NotRequired[int]  # status(epoch=N): the graph as it stood after epoch N


class ExplainEvent(TypedDict, total=False):
    epoch: int
    at: Optional[str]
    rule: str  # a change's rule, or loaded | recorded | orphaned | undo | removed
    cause: list[str]  # every event carries it (empty when no node triggered it)
    state: str  # the state it left the node in (forgotten, removed, restored included)
    text: str
    fact: Optional[str]
    undone: bool
    undoes: int  # undo and removed events: the epoch undone


class ExplainResult(TypedDict, total=False):
    key: str
    known: bool
    events: list[ExplainEvent]
    state: Optional[
        str
    ]  # current state ("forgotten" for a forgotten node, "removed" when an undo removed it)
    removed_by_undo: int  # state "removed": the epoch whose undo removed it
    why_alive: Optional[dict]  # alive nodes: the justification holding it, recursively to premises
    why_dead: Optional[dict]  # dead or disputed evidence and conclusions: what keeps it out now
    # hypotheses: {"score", "weight", "remaining", "disputed", "lost", "refuters"} (each a list
    # of {"key", "state", "weight"}; lost supporters include forgotten ones)
    support: dict


class RecallMatch(TypedDict):
    key: str
    type: str  # question | hypothesis | evidence | conclusion
    text: str
    investigation: Optional[str]
    distance: Optional[float]  # cosine distance to the question
    rank: int  # place in the fused (vector + lexical) ranking of the alive beliefs, from 1


class RecallSide(TypedDict, total=False):
    answer: str
    nodes: list[str]  # what the answer rests on: the leading belief first
    sources: list[str]
    disputed: list[str]  # FALSIFY's side: disputed nodes of the question (never used to answer)
    disputes: list[dict]  # {"keys": [a, b], "rests_on_it": [...]}, one per unresolved dispute
    kind: Optional[str]  # FALSIFY's side: what leads: hypothesis | evidence | conclusion | path | None
    rests_on: Optional[dict]  # a hypothesis: {"key", "supported_by"}; a fact: explain's why_alive tree
    unsupported: list[dict]  # {"key", "text"}: alive hypotheses without alive support (never the answer)
    matches: list[RecallMatch]  # the alive beliefs within the relevance floor, best first
    untimed: list[str]  # with as_of: the keys used that have no valid time (taken as holding then)
    values: list[str]  # with a path: the last hop's objects
    through: list[dict]  # a question answered through stored triples: each hop, first to last
    # ({"key", "subject", "predicate", "object", "claim", "state"}); absent otherwise
    unheld: list[str]  # a fact (or a chain) answering: the question's content words it does not hold
    # FALSIFY's side (docs/recall.md): a rival hypothesis holding what the leader does not
    # ({"key", "text", "support", "holds"}); the dead fact the question is about, and what replaced it
    # (replaces) or nothing (dead_match): {"key", "text", "state"}; a fact about another entity than
    # the question names ({"key", "text", "about"}); a fact that held then and holds no more
    # ({"key", "valid_from", "valid_to", "superseded"}); a dead hypothesis holding what the leader
    # does not ({"key", "text", "state", "holds"})
    rival: dict[str, Any]
    dead_rival: dict[str, Any]
    replaces: dict[str, Any]
    dead_match: dict[str, Any]
    other_entity: dict[str, Any]
    held_then: dict[str, Any]


class RecallRelevance(TypedDict, total=False):
    floor: float  # the cosine distance within which a belief is relevant (FALSIFY_RECALL_FLOOR)
    best_distance: Optional[float]  # the nearest alive belief's distance
    matched: bool  # False: nothing stored matches, no node used
    nearest: str  # the nearest alive belief's key


class RecallResult(TypedDict, total=False):
    question: str  # the question asked (with a path: the path)
    investigation: str  # the inquiry whose beliefs answered
    inquiry: str  # recall(inquiry=KEY): the pinned inquiry
    falsify: RecallSide
    baseline: RecallSide
    verdict: str
    mode: str
    scoreboard: dict[str, str]  # falsify_mark, baseline_mark
    baseline_states: dict[str, str]  # each cited node's state on the slice answered from
    baseline_distances: list[float]
    relevance: RecallRelevance
    stored_questions: list[dict]  # {"key", "question"}: when nothing matched
    path: dict  # recall(path=...): {"subject", "predicates", "hops", "values", "complete"}
    as_of: str  # recall(as_of=DATE): FALSIFY answered from the beliefs valid at that date (or year, month)
    as_of_from_question: str  # the question's words naming the time it answered as of ("in 2018")
    as_of_today: str  # why a question with no time was answered as of today (a fact not valid today)
    epoch: int  # recall(epoch=N): from the beliefs as stored after epoch N
    # a question about the value before or after another: {"words", "before", "anchor": {"key",
    # "text", "state"}, "as_of" | "epoch"}: the time (or epoch) it was answered at
    order_from_question: dict


class SearchHit(TypedDict):
    key: str
    type: str  # evidence | conclusion
    text: str
    state: str
    distance: float
    sources: list[str]


class UndoResult(TypedDict, total=False):
    undone: Optional[int]  # the epoch reverted; None when there was nothing to undo
    kind: Optional[str]  # the reverted change's kind, as its log entry gives it (None: the entry has none)
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
    # with repair=True, always all four (on a clean root: [], True, [], [])
    repaired: list[str]
    clean_after_repair: bool
    problems_after_repair: list[str]
    cannot_restore: list[str]  # what --repair cannot do: a lost log, or two overlapping values it names
    warnings: list[str]  # a repair committed, but what followed its commit point failed
