"""Two-gate contradiction detection.

Gate 1 (vector prefilter): the new fact is searched in ``Evidence_claim``
(``limit`` ≥ 5); candidates are alive evidence at cosine distance below the
threshold. With a triple, evidence stored under the same normalised
subject+predicate is added even if gate 1 missed it.

Gate 2 (judge): the structured judge where both sides carry triples, else the
LLM judge when a key is configured. A pin (``--target``) skips both gates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from memory_core.core.identity import collection
from memory_core.store.belief_store import state_of, to_node
from memory_core.judging.judges import ACT_THRESHOLD, JudgeError, LLMJudge, pinned_verdict, structured_verdict
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

    @property
    def acting(self) -> list[Candidate]:
        return [c for c in self.candidates if c.acts]


async def gate1(store, fact: str, threshold: float, limit: int, exclude: set[str]) -> list[Candidate]:
    hits = await store.search(collection("evidence"), fact, max(limit, 5))
    found = await store.raw_nodes(str(h.id) for h in hits)
    result = []
    for hit in hits:
        props = found.get(str(hit.id))
        if props is None or state_of(props) != "alive" or props.get("key") in exclude:
            continue
        if float(hit.score) < threshold:
            node = to_node(props)
            result.append(Candidate(node.key, node.question, node.text, float(hit.score)))
    return result


async def detect(store, fact: str, triple: Optional[tuple[str, str, str]], threshold: float,
                 limit: int = DEFAULT_LIMIT, exclude: set[str] = frozenset(), use_llm: Optional[bool] = None) -> Detection:
    candidates = await gate1(store, fact, threshold, limit, set(exclude))
    props_by_key: dict[str, dict] = {}
    if candidates:
        props_by_key.update(await store.find_keys(c.key for c in candidates))
    if triple:
        for props in await store.nodes_by_sp(sp_key(triple[0], triple[1])):
            if state_of(props) == "alive" and props["key"] not in exclude and props["key"] not in props_by_key:
                node = to_node(props)
                candidates.append(Candidate(node.key, node.question, node.text, None))
                props_by_key[node.key] = props
    use_llm = llm_key_configured() if use_llm is None else use_llm
    llm = LLMJudge() if use_llm else None
    used: set[str] = set()
    undecided = []
    for cand in candidates:
        verdict, judge = None, None
        if triple:
            verdict, judge = structured_verdict(triple, props_by_key.get(cand.key, {})), "structured"
        if verdict is None and llm is not None:
            verdict, judge = await llm(cand.claim, fact), "llm"
        if verdict is None:
            undecided.append(cand.key)
            continue
        used.add(judge)
        cand.relation, cand.confidence, cand.rationale, cand.judge = verdict.relation, verdict.confidence, verdict.rationale, judge
    name = "+".join(sorted(used)) or "none"
    note = ""
    if undecided:
        note = (f"no judge could decide on {', '.join(undecided)}: give the fact as --triple 'S|P|O' (for evidence "
                "stored with subject/predicate/object), set LLM_API_KEY for the LLM judge, or pin with --target KEY")
        if not any(c.acts for c in candidates):
            note += "; with no contradiction decided, nothing is recorded"
    elif not candidates:
        note = f"no alive evidence within gate-1 distance {threshold:g} of the fact"
    return Detection(name, candidates, undecided, note)


async def pinned(store, fact: str, target: str, why: str) -> Detection:
    found = await store.find_keys([target])
    props = found.get(target)
    if props is None or props.get("type") != "Evidence":
        raise LookupError(f"--target {target!r}: no evidence with that key in this data root")
    node = to_node(props)
    verdict = pinned_verdict(node.key, why)
    cand = Candidate(node.key, node.question, node.text, None, verdict.relation, verdict.confidence, verdict.rationale, "pinned")
    return Detection("pinned", [cand])


__all__ = ["Detection", "Candidate", "detect", "pinned", "gate1", "gate1_threshold", "JudgeError"]
