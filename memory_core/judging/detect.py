"""Two-gate contradiction detection.

Gate 1 (:mod:`memory_core.judging.retrieval`): the new fact's candidates are the top k
of a fused ranking (vector + lexical search over ``Evidence_claim``, reciprocal rank
fusion) of live evidence; with a triple, evidence stored under the same normalised
subject+predicate is added however far it is.

Gate 2 (judge): the structured judge where both sides carry triples, else the
LLM judge when a key is configured -- all of a fact's remaining candidates in
ONE LLM call (:meth:`LLMJudge.judge`). A pin (``--target``) skips both gates.
Offline, candidates no judge could decide are returned ranked: the caller decides
(``--target KEY`` for the one the fact contradicts, ``--record`` for none of them).
``Detection.llm`` holds what the fact's judging cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AbstractSet, Optional, Sequence

from memory_core.core.results import Candidate as CandidateRow
from memory_core.store.belief_store import to_node
from memory_core.judging.retrieval import GATE1_K, LIVE, Found, Query, gate1_many  # noqa: F401
from memory_core.judging.judges import (
    ACT_THRESHOLD,
    JudgeError,
    declarations_of,
    judge_many,  # noqa: F401
    pinned_verdict,
    structured_verdict,
)
from memory_core.store import settings as config

# Gate 1 keeps a bounded top-k of its fused ranking (retrieval.GATE1_K, FALSIFY_GATE1_K), not a
# fixed distance cutoff: measured (docs/judging.md, "Gate 1"), a cutoff drops most paraphrased contradictions.
# FALSIFY_GATE1_THRESHOLD still sets a cosine-distance floor for those who want one.
DEFAULT_THRESHOLDS: dict[str, Optional[float]] = {}
FALLBACK_THRESHOLD: Optional[float] = None
DEFAULT_LIMIT = GATE1_K
# an undecided candidate this near holds an otherwise decided fact back (Detection.may_record): the
# distance below which every contradicted claim of MQuAKE-hard lay (docs/judging.md, "Gate 1")
UNDECIDED_BLOCKS_WITHIN = 0.55


def gate1_threshold(embedder: str, settings: config.Settings) -> Optional[float]:
    """Gate 1's cosine-distance floor: None (no floor) unless ``FALSIFY_GATE1_THRESHOLD`` sets one
    (in ``settings``, the stores')."""
    value = settings.gate1_threshold
    if value is not None:
        return value
    return DEFAULT_THRESHOLDS.get(embedder, FALLBACK_THRESHOLD)


@dataclass
class Candidate:
    key: str
    question: Optional[str]
    claim: str
    distance: Optional[float]  # None: found by subject+predicate lookup, not by gate 1
    relation: Optional[str] = None
    confidence: Optional[float] = None
    rationale: str = ""
    judge: Optional[str] = None
    lexical: Optional[float] = None  # gate 1's lexical score (None: not a lexical hit)
    rank: Optional[int] = None  # place in gate 1's fused ranking, from 1 (None: lookup, pin or batch)

    def as_dict(self) -> CandidateRow:
        return {
            "key": self.key,
            "distance": None if self.distance is None else round(self.distance, 4),
            "relation": self.relation,
            "confidence": self.confidence,
            "rationale": self.rationale,
            "claim": self.claim,
            "lexical": None if self.lexical is None else round(self.lexical, 4),
            "rank": self.rank,
            "question": self.question,
        }

    @property
    def acts(self) -> bool:
        return self.relation in ("contradicts", "supersedes") and (self.confidence or 0) >= ACT_THRESHOLD


@dataclass
class Detection:
    judge: str  # pinned | structured | llm | structured+llm | none
    candidates: list[Candidate] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    note: str = ""
    # what judging this fact cost: {"calls", "prompt_tokens", "completion_tokens", "cost_usd"}
    llm: dict = field(
        default_factory=lambda: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    )

    @property
    def acting(self) -> list[Candidate]:
        return [c for c in self.candidates if c.acts]

    @property
    def may_record(self) -> bool:
        """With no contradiction: whether the fact is recorded next to what it relates to. A
        judge must have decided at least one candidate, and no undecided candidate may be near
        (cosine distance below :data:`UNDECIDED_BLOCKS_WITHIN`, or no distance known): a near
        claim nobody judged could be the one the fact contradicts, so the caller decides first.
        Far undecided candidates (the rest of gate 1's top k) do not hold a decided fact back.
        With no candidate at all nothing stored could be contradicted: nothing to decide."""
        if not self.candidates:
            return True
        if not any(c.relation is not None for c in self.candidates):
            return False
        return not any(
            c.relation is None and (c.distance is None or c.distance < UNDECIDED_BLOCKS_WITHIN)
            for c in self.candidates
        )


async def gate1(
    store, fact: str, threshold: Optional[float], limit: int, exclude: set[str]
) -> list[Candidate]:
    """One fact's ranked gate-1 candidates (vector + lexical, fused; see :mod:`.retrieval`):
    the top ``limit``, within cosine distance ``threshold`` when it is not None."""
    found = (await gate1_many(store, [Query(fact, None, exclude=frozenset(exclude))], limit, threshold))[0]
    return [_candidate(found, i) for i in found.ids]


def _candidate(found: Found, node_id_: str) -> Candidate:
    node = to_node(found.props[node_id_])
    if node is None:  # gate 1 reads live evidence only (retrieval.LIVE): never another node
        raise LookupError(f"gate 1 found {node_id_!r}, which is no stored belief")
    return Candidate(
        node.key,
        node.question,
        node.text,
        found.distance.get(node_id_),
        lexical=found.lexical.get(node_id_),
        rank=found.rank.get(node_id_),
    )


def _as_triple(triple: Optional[Sequence[str]]) -> Optional[tuple[str, str, str]]:
    """A fact's triple as gate 1's query holds it (a tuple, whatever sequence the caller gave)."""
    if not triple:
        return None
    subject, predicate, obj = triple
    return subject, predicate, obj


def candidates_from(found: Found) -> tuple[list[Candidate], dict[str, dict]]:
    """A gate-1 result as candidates and their stored props by key."""
    candidates = [_candidate(found, i) for i in found.ids]
    return candidates, {c.key: found.props[i] for c, i in zip(candidates, found.ids)}


def earlier_candidates(
    earlier, index: int, k: int, floor: Optional[float]
) -> tuple[list[Candidate], dict[str, dict]]:
    """A batch's earlier facts near fact ``index`` (:class:`.retrieval.EarlierFacts`) as
    candidates, with their triples as props for the structured judge."""
    extra, props = [], {}
    for i, distance in earlier.near(index, k, floor):
        key, fact, triple, _ = earlier.facts[i]
        extra.append(Candidate(key, None, fact, distance))
        if triple:
            props[key] = {"subject": triple[0], "predicate": triple[1], "object": triple[2]}
    return extra, props


async def candidates_of(
    store,
    fact: str,
    triple: Optional[tuple[str, str, str]],
    threshold: Optional[float],
    limit: Optional[int] = None,
    exclude: AbstractSet[str] = frozenset(),
    vector: Optional[list[float]] = None,
) -> tuple[list[Candidate], dict[str, dict]]:
    """Gate 1 plus the subject+predicate lookup: the candidates and their stored props."""
    query = Query(fact, _as_triple(triple), vector, frozenset(exclude))
    return candidates_from((await gate1_many(store, [query], limit, threshold))[0])


CALLER = "caller"  # the judge of a fact the caller decided (--record): no candidate contradicted
CONSISTENT = "consistent"  # the relation the caller's --record decision gives every candidate


def decided_by_caller(candidates: list[Candidate]) -> None:
    """The caller's decision "none of these" (``--record``): every candidate still undecided is
    taken as not contradicted by the fact; no judge is asked about them."""
    for cand in candidates:
        if cand.relation is None:
            cand.relation, cand.confidence, cand.judge = CONSISTENT, 1.0, CALLER
            cand.rationale = "the caller decided the fact does not contradict it (--record)"


def undecided_note(candidates: list[Candidate], undecided: list[str], threshold: Optional[float]) -> str:
    if undecided:
        if any(c.acts for c in candidates):
            return f"not judged: {', '.join(undecided)} (no judge could decide; left as they are)"
        return (
            f"no judge could decide on {', '.join(undecided)}: give the fact as --triple 'S|P|O' (for evidence "
            "stored with subject/predicate/object), set LLM_API_KEY for the LLM judge, or decide yourself: "
            "--target KEY for the evidence it contradicts, or --record if it contradicts none of them (with "
            "--supports or --refutes H for the hypothesis it bears on); with no contradiction decided, nothing "
            "is recorded"
        )
    if not candidates:
        within = f" within gate-1 distance {threshold:g}" if threshold is not None else ""
        return f"no alive evidence{within} to compare the fact with"
    return ""


def structured_pass(
    fact_triple,
    candidates: list[Candidate],
    props_by_key: dict[str, dict],
    declared: Optional[dict[str, dict]] = None,
) -> list[Candidate]:
    """Decide what the structured judge can; returns the candidates left for the LLM.
    ``declared``: question key -> its predicate cardinality declarations."""
    left = []
    declared = declared or {}
    for cand in candidates:
        props = props_by_key.get(cand.key, {})
        verdict = (
            structured_verdict(fact_triple, props, declarations_of(declared, props)) if fact_triple else None
        )
        if verdict is None:
            left.append(cand)
        else:
            cand.relation, cand.confidence, cand.rationale, cand.judge = (
                verdict.relation,
                verdict.confidence,
                verdict.rationale,
                "structured",
            )
    return left


def finish_detection(candidates: list[Candidate], threshold: Optional[float], usage=None) -> Detection:
    undecided = [c.key for c in candidates if c.relation is None]
    name = "+".join(sorted({c.judge for c in candidates if c.judge})) or "none"
    d = Detection(name, candidates, undecided, undecided_note(candidates, undecided, threshold))
    if usage is not None:
        d.llm = usage.as_dict()
    return d


async def detect(
    store,
    fact: str,
    triple: Optional[tuple[str, str, str]],
    threshold: Optional[float],
    limit: Optional[int] = None,
    exclude: AbstractSet[str] = frozenset(),
    use_llm: Optional[bool] = None,
    extra: Sequence[Candidate] = (),
    extra_props: Optional[dict[str, dict]] = None,
) -> Detection:
    """One fact: its candidates, then the judges (structured, then ONE LLM call for all the
    rest). ``extra``: more candidates judged in the same call (e.g. earlier facts of a batch),
    with ``extra_props[key]`` = their subject/predicate/object for the structured judge."""
    [d] = await detect_many(
        store,
        [(fact, triple, set(exclude))],
        threshold,
        limit,
        use_llm,
        extra=[(list(extra), dict(extra_props or {}))],
    )
    return d


async def detect_many(
    store,
    facts: list[tuple[str, Optional[tuple[str, str, str]], set[str]]],
    threshold: Optional[float],
    limit: Optional[int] = None,
    use_llm: Optional[bool] = None,
    concurrency: Optional[int] = None,
    extra: Optional[list[tuple[list, dict]]] = None,
) -> list[Detection]:
    """Many facts against the stored evidence: ``facts`` = ``[(fact, triple or None, exclude keys)]``.
    Gate 1 for all of them in one call, then the judges (:mod:`.chain`: one LLM call per fact,
    ``FALSIFY_LLM_CONCURRENCY`` at once). A judge failure raises the first failing fact's
    :class:`JudgeError` with ``error.judged`` (facts fully judged before it) and
    ``error.detections`` (their detections)."""
    from memory_core.judging.chain import Case, LLMStep, StructuredJudge, judge_cases
    from memory_core.judging.llm import Usage

    queries = [Query(fact, _as_triple(triple), None, frozenset(exclude)) for fact, triple, exclude in facts]
    found = [candidates_from(f) for f in await gate1_many(store, queries, limit, threshold)]
    for (cands, props), (more, more_props) in zip(found, extra or []):
        cands += more
        props.update(more_props)
    use_llm = store.settings.llm_key if use_llm is None else use_llm
    declared = await store.declared_predicates(p for _, props in found for p in props.values())
    cases = [
        Case(fact, triple, cands, props, declared, settings=store.settings)
        for (fact, triple, _), (cands, props) in zip(facts, found)
    ]
    stop = await judge_cases(cases, use_llm, [StructuredJudge(), LLMStep(concurrency)])
    done = [
        finish_detection(
            c.candidates, threshold, c.usage if c.usage is not None else (Usage() if use_llm else None)
        )
        for c in cases
    ]
    if stop is not None:
        index, error = stop
        error.judged = index
        error.detections = done[:index]
        raise error
    return done


async def pinned(store, fact: str, target: str, why: str) -> Detection:
    found = await store.find_keys([target])
    props = found.get(target)
    if props is None:
        raise LookupError(f"--target {target!r}: no evidence with that key in this data root")
    node = to_node(props)
    if node is None or props.get("type") != "Evidence":
        kind = node.kind if node is not None else f"node of type {props.get('type')!r}"
        raise LookupError(
            f"--target {target!r} is a {kind}, not evidence: only evidence is contradicted (what rests "
            "on it follows by the revision rules)"
        )
    verdict = pinned_verdict(node.key, why)
    cand = Candidate(
        node.key,
        node.question,
        node.text,
        None,
        verdict.relation,
        verdict.confidence,
        verdict.rationale,
        "pinned",
    )
    return Detection("pinned", [cand])


__all__ = [
    "Detection",
    "Candidate",
    "detect",
    "detect_many",
    "judge_many",
    "pinned",
    "gate1",
    "gate1_threshold",
    "undecided_note",
    "decided_by_caller",
    "JudgeError",
    "CALLER",
    "CONSISTENT",
]
