"""Two-gate contradiction detection.

Gate 1 (vector prefilter): the new fact is searched in ``Evidence_claim``
(``limit`` ≥ 5); candidates are alive evidence at cosine distance below the
threshold. With a triple, evidence stored under the same normalised
subject+predicate is added even if gate 1 missed it.

Gate 2 (judge): the structured judge where both sides carry triples, else the
LLM judge when a key is configured -- all of a fact's remaining candidates in
ONE LLM call (:meth:`LLMJudge.judge`). A pin (``--target``) skips both gates.
``Detection.llm`` holds what the fact's judging cost (calls, tokens, USD).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from memory_core.core.cardinality import merged
from memory_core.core.identity import collection
from memory_core.store.belief_store import state_of, to_node
from memory_core.judging.judges import (ACT_THRESHOLD, JudgeError, LLMJudge, judge_many,  # noqa: F401
                                        pinned_verdict, structured_verdict)
from memory_core.store.settings import llm_key_configured
from memory_core.core.keys import sp_key

# Measured per embedder (see README "Gate 1 threshold"); FALSIFY_GATE1_THRESHOLD overrides.
DEFAULT_THRESHOLDS = {"fastembed-local": 0.55}
FALLBACK_THRESHOLD = 0.35  # the contract's value, for hosted embedders until measured
DEFAULT_LIMIT = 8


def gate1_threshold(embedder: str) -> float:
    env = os.environ.get("FALSIFY_GATE1_THRESHOLD")
    if env:
        value = float(env)
        if not 0.0 < value <= 2.0:
            raise ValueError("FALSIFY_GATE1_THRESHOLD must be in (0, 2]")
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

    def as_dict(self) -> dict:
        return {"key": self.key, "distance": None if self.distance is None else round(self.distance, 4),
                "relation": self.relation, "confidence": self.confidence, "rationale": self.rationale}

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
    llm: dict = field(default_factory=lambda: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0})

    @property
    def acting(self) -> list[Candidate]:
        return [c for c in self.candidates if c.acts]


# evidence a new fact can contradict: alive, or disputed (a policy that picks a winner settles the dispute)
LIVE = ("alive", "disputed")


async def gate1(store, fact: str, threshold: float, limit: int, exclude: set[str]) -> list[Candidate]:
    hits = await store.search(collection("evidence"), fact, max(limit, 5))
    found = await store.raw_nodes(str(h.id) for h in hits)
    result = []
    for hit in hits:
        props = found.get(str(hit.id))
        if props is None or state_of(props) not in LIVE or props.get("key") in exclude:
            continue
        if float(hit.score) < threshold:
            node = to_node(props)
            result.append(Candidate(node.key, node.question, node.text, float(hit.score)))
    return result


async def candidates_of(store, fact: str, triple: Optional[tuple[str, str, str]], threshold: float,
                        limit: int = DEFAULT_LIMIT, exclude: set[str] = frozenset()) -> tuple[list[Candidate], dict[str, dict]]:
    """Gate 1 plus the subject+predicate lookup: the candidates and their stored props."""
    candidates = await gate1(store, fact, threshold, limit, set(exclude))
    props_by_key: dict[str, dict] = {}
    if candidates:
        props_by_key.update(await store.find_keys(c.key for c in candidates))
    if triple:
        for props in await store.nodes_by_sp(sp_key(triple[0], triple[1])):
            if state_of(props) in LIVE and props["key"] not in exclude and props["key"] not in props_by_key:
                node = to_node(props)
                candidates.append(Candidate(node.key, node.question, node.text, None))
                props_by_key[node.key] = props
    return candidates, props_by_key


def undecided_note(candidates: list[Candidate], undecided: list[str], threshold: float) -> str:
    if undecided:
        note = (f"no judge could decide on {', '.join(undecided)}: give the fact as --triple 'S|P|O' (for evidence "
                "stored with subject/predicate/object), set LLM_API_KEY for the LLM judge, or pin with --target KEY")
        if not any(c.acts for c in candidates):
            note += "; with no contradiction decided, nothing is recorded"
        return note
    if not candidates:
        return f"no alive evidence within gate-1 distance {threshold:g} of the fact"
    return ""


def structured_pass(fact_triple, candidates: list[Candidate], props_by_key: dict[str, dict],
                    declared: Optional[dict[str, dict]] = None) -> list[Candidate]:
    """Decide what the structured judge can; returns the candidates left for the LLM.
    ``declared``: question key -> its predicate cardinality declarations."""
    left = []
    declared = declared or {}
    for cand in candidates:
        props = props_by_key.get(cand.key, {})
        verdict = (structured_verdict(fact_triple, props, declared.get(props.get("question_key")))
                   if fact_triple else None)
        if verdict is None:
            left.append(cand)
        else:
            cand.relation, cand.confidence, cand.rationale, cand.judge = (verdict.relation, verdict.confidence,
                                                                          verdict.rationale, "structured")
    return left


def declared_for(candidates: list[Candidate], props_by_key: dict[str, dict], declared: dict[str, dict]) -> dict:
    """The cardinality declarations of the candidates' questions, as one (for the LLM's prompt)."""
    return merged(declared.get(props_by_key.get(c.key, {}).get("question_key")) or {} for c in candidates)


def apply_verdicts(candidates: list[Candidate], verdicts: dict, judge: str = "llm") -> None:
    for cand in candidates:
        verdict = verdicts.get(cand.key)
        if verdict is not None:
            cand.relation, cand.confidence, cand.rationale, cand.judge = (verdict.relation, verdict.confidence,
                                                                          verdict.rationale, judge)


def finish_detection(candidates: list[Candidate], threshold: float, usage=None) -> Detection:
    undecided = [c.key for c in candidates if c.relation is None]
    name = "+".join(sorted({c.judge for c in candidates if c.judge})) or "none"
    d = Detection(name, candidates, undecided, undecided_note(candidates, undecided, threshold))
    if usage is not None:
        d.llm = usage.as_dict()
    return d


async def detect(store, fact: str, triple: Optional[tuple[str, str, str]], threshold: float,
                 limit: int = DEFAULT_LIMIT, exclude: set[str] = frozenset(), use_llm: Optional[bool] = None,
                 extra: list[Candidate] = (), extra_props: Optional[dict[str, dict]] = None) -> Detection:
    """One fact: its candidates, the structured judge, then ONE LLM call for all the rest.
    ``extra``: more candidates judged in the same call (e.g. earlier facts of a batch), with
    ``extra_props[key]`` = their subject/predicate/object for the structured judge."""
    candidates, props_by_key = await candidates_of(store, fact, triple, threshold, limit, exclude)
    candidates += list(extra)
    props_by_key.update(extra_props or {})
    use_llm = llm_key_configured() if use_llm is None else use_llm
    declared = await store.declared_predicates(props_by_key.values()) if (triple or use_llm) and props_by_key else {}
    left = structured_pass(triple, candidates, props_by_key, declared)
    usage = None
    if left and use_llm:
        from memory_core.store.llm import Usage

        usage = Usage()
        if os.environ.get("FALSIFY_LLM_PER_CANDIDATE") == "1":  # the old way, one call per candidate (bench.judge)
            judge = LLMJudge(cache=False)
            apply_verdicts(left, {c.key: await judge.judge_pair(c.claim, fact, usage) for c in left})
        else:
            apply_verdicts(left, await LLMJudge().judge(fact, [(c.key, c.claim) for c in left], usage,
                                                        declared_for(left, props_by_key, declared)))
    return finish_detection(candidates, threshold, usage)


async def detect_many(store, facts: list[tuple[str, Optional[tuple[str, str, str]], set[str]]], threshold: float,
                      limit: int = DEFAULT_LIMIT, use_llm: Optional[bool] = None,
                      concurrency: Optional[int] = None) -> list[Detection]:
    """Many facts against the stored evidence: ``facts`` = ``[(fact, triple or None, exclude keys)]``.
    Gate 1 runs per fact, then the LLM judges every fact's remaining candidates through
    :func:`judge_many` (one call per fact, ``FALSIFY_LLM_CONCURRENCY`` at once). A judge
    failure raises the first failing fact's :class:`JudgeError` with ``error.judged`` (facts
    fully judged before it) and ``error.detections`` (their detections)."""
    from memory_core.store.llm import Usage

    found = [await candidates_of(store, fact, triple, threshold, limit, exclude) for fact, triple, exclude in facts]
    use_llm = llm_key_configured() if use_llm is None else use_llm
    declared = await store.declared_predicates(p for _, props in found for p in props.values())
    left = [structured_pass(triple, cands, props, declared) for (fact, triple, _), (cands, props) in zip(facts, found)]
    asks = [i for i, rest in enumerate(left) if rest and use_llm]
    usages: dict[int, object] = {}
    try:
        judged = await judge_many([(facts[i][0], [(c.key, c.claim) for c in left[i]]) for i in asks], concurrency,
                                  predicates=[declared_for(left[i], found[i][1], declared) for i in asks])
    except JudgeError as error:
        done = error.judged
        for n, (verdicts, usage) in enumerate(error.results):
            apply_verdicts(left[asks[n]], verdicts)
            usages[asks[n]] = usage
        stop = asks[done]  # the first fact whose judging failed
        error.judged = stop
        error.detections = [finish_detection(found[i][0], threshold, usages.get(i, Usage())) for i in range(stop)]
        raise
    for n, (verdicts, usage) in enumerate(judged):
        apply_verdicts(left[asks[n]], verdicts)
        usages[asks[n]] = usage
    return [finish_detection(found[i][0], threshold, usages.get(i, Usage())) for i in range(len(facts))]


async def pinned(store, fact: str, target: str, why: str) -> Detection:
    found = await store.find_keys([target])
    props = found.get(target)
    if props is None or props.get("type") != "Evidence":
        raise LookupError(f"--target {target!r}: no evidence with that key in this data root")
    node = to_node(props)
    verdict = pinned_verdict(node.key, why)
    cand = Candidate(node.key, node.question, node.text, None, verdict.relation, verdict.confidence, verdict.rationale, "pinned")
    return Detection("pinned", [cand])


__all__ = ["Detection", "Candidate", "detect", "detect_many", "judge_many", "pinned", "gate1", "gate1_threshold",
           "undecided_note", "JudgeError"]
