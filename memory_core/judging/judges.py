"""Gate 2: judges that decide how a new fact relates to a stored claim.

* :func:`structured_verdict` — offline and deterministic, for a fact given as a
  triple and evidence stored with subject/predicate/object: same normalised
  subject and predicate with another object → ``contradicts`` (0.9); the same
  object → ``supports`` (0.9); another subject or predicate → ``unrelated``.
* :class:`LLMJudge` — a skeptical analyst through cognee's
  ``LLMGateway.acreate_structured_output`` (used when ``LLM_API_KEY`` is set).
  All of a fact's candidates are decided in ONE structured call
  (:class:`~memory_core.judging.prompts.BatchJudgement`: one verdict per key);
  verdicts are cached in the data root by (stored claim, new fact, model).
  :func:`judge_many` judges many facts' candidates concurrently (up to
  ``FALSIFY_LLM_CONCURRENCY``, default 4). Claims travel as delimited, escaped
  data, never as instructions. Concurrency, the cache, the per-candidate way and the
  call's timeout come from the settings the judge is given (the stores'), else the
  process's (:mod:`memory_core.store.settings`).
* :func:`pinned_verdict` — ``--target KEY`` / ``DEMO_MODE`` + ``REFUTED_ID``:
  the named evidence is contradicted and the gates are skipped.

Only ``contradicts``/``supersedes`` at confidence ≥ :data:`ACT_THRESHOLD` act.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Mapping, Optional

from memory_core.core.cardinality import declarations_text, multi_valued
from memory_core.core.errors import JudgeError  # noqa: F401  (re-exported)
from memory_core.core.keys import normalise_term
from memory_core.core.requests import parse_triple  # noqa: F401  (re-exported)
from memory_core.judging.prompts import (
    BATCH_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
    BatchJudgement,  # noqa: F401
    ContradictionJudgement,
    batch_input,
    llm_input,
)
from memory_core.store import settings as config

if TYPE_CHECKING:
    from memory_core.judging.llm import Usage

ACT_THRESHOLD = 0.6
STRUCTURED_CONFIDENCE = 0.9


def structured_verdict(
    triple: tuple[str, str, str], candidate: dict, predicates: Optional[dict] = None
) -> Optional[ContradictionJudgement]:
    """None when the candidate carries no triple (this judge cannot decide). ``predicates``:
    the candidate's question's cardinality declarations (another object of a ``many``
    predicate is another value, not a contradiction)."""
    s, p, o = (candidate.get(k) for k in ("subject", "predicate", "object"))
    if not (s and p and o):
        return None
    fs, fp, fo = (normalise_term(x) for x in triple)
    if normalise_term(s) != fs or normalise_term(p) != fp:
        return ContradictionJudgement(
            rationale=f"different subject or predicate ({s!r} {p!r} vs {triple[0]!r} {triple[1]!r})",
            relation="unrelated",
            confidence=STRUCTURED_CONFIDENCE,
        )
    if normalise_term(o) == fo:
        return ContradictionJudgement(
            rationale=f"same subject and predicate, same object {o!r}",
            relation="supports",
            confidence=STRUCTURED_CONFIDENCE,
        )
    if multi_valued(predicates, p):
        return ContradictionJudgement(
            rationale=f"predicate {p!r} is declared many: {triple[2]!r} is another value beside {o!r}, "
            "not a contradiction",
            relation="unrelated",
            confidence=STRUCTURED_CONFIDENCE,
        )
    return ContradictionJudgement(
        rationale=f"same subject and predicate ({s!r}, {p!r}) with another object: stored {o!r}, new {triple[2]!r}",
        relation="contradicts",
        confidence=STRUCTURED_CONFIDENCE,
    )


def declarations_of(declared: Mapping[str, dict], props: Mapping[str, Any]) -> Optional[dict]:
    """The predicate declarations of the question stored evidence (``props``) belongs to
    (``declared``: question key -> its declarations); None: it has no question, or it declares none."""
    question = props.get("question_key")
    return declared.get(question) if question is not None else None


def pinned_verdict(key: str, why: str) -> ContradictionJudgement:
    return ContradictionJudgement(
        rationale=f"pinned: {why} names {key}; gates skipped", relation="contradicts", confidence=1.0
    )


def llm_concurrency(settings: config.Settings) -> int:
    """How many facts' LLM calls run at once (``FALSIFY_LLM_CONCURRENCY``)."""
    return settings.llm_concurrency


class LLMJudge:
    """The skeptical-analyst judge through cognee's LLM gateway (``judging.llm``).

    ``await judge.judge(fact, [(key, claim), ...])`` decides every candidate in one call
    (cached verdicts are not asked again) and returns ``{key: ContradictionJudgement}``.
    ``await judge(stored, fact)`` is the same for one claim. :meth:`judge_pair` is the old
    way (one call per candidate, uncached), kept for ``bench.judge``'s comparison.
    ``settings``: what it goes by (the stores'); ``cache`` overrides their
    ``FALSIFY_VERDICT_CACHE``."""

    name = "llm"

    def __init__(self, settings: config.Settings, cache: Optional[bool] = None):
        self.settings = settings
        self.cache = self.settings.verdict_cache if cache is None else cache

    async def __call__(self, stored: str, new: str, usage=None) -> ContradictionJudgement:
        verdicts = await self.judge(new, [("claim", stored)], usage)
        return verdicts["claim"]

    async def judge_pair(self, stored: str, new: str, usage=None) -> ContradictionJudgement:
        from memory_core.judging.llm import structured_output

        return await structured_output(
            llm_input(stored, new),
            SYSTEM_PROMPT,
            ContradictionJudgement,
            "the LLM judge",
            usage=usage,
            timeout=self.settings.judge_timeout,
            settings=self.settings,
        )

    async def judge(
        self, new: str, stored: list[tuple[str, str]], usage=None, predicates: Optional[dict] = None
    ) -> dict[str, ContradictionJudgement]:
        """``stored``: (key, claim) pairs. One call for those not in the cache (none if all are).
        ``predicates``: cardinality declarations the prompt carries."""
        from memory_core.judging import llm

        stored = list(dict((k, c) for k, c in stored).items())
        if not stored:
            return {}
        found: dict[str, ContradictionJudgement] = {}
        model = cache = None
        keys: dict[str, str] = {}
        if self.cache:
            from memory_core.judging.verdict_cache import cache_key, for_root

            model, cache = llm.model_name(self.settings), for_root()
            # the declarations are part of what was asked: another set of them, another verdict
            asked = new + ("\n" + declarations_text(predicates) if predicates else "")
            keys = {k: cache_key(claim, asked, model) for k, claim in stored}
            hits = cache.get_many(list(keys.values()))
            for k, _ in stored:
                if keys[k] in hits:
                    try:
                        found[k] = ContradictionJudgement.model_validate(hits[keys[k]])
                    except Exception:
                        pass
        ask = [(k, c) for k, c in stored if k not in found]
        if not ask:
            return found
        answer = await llm.structured_output(
            batch_input(new, ask, predicates),
            BATCH_SYSTEM_PROMPT,
            BatchJudgement,
            "the LLM judge",
            usage=usage,
            timeout=self.settings.judge_timeout,
            settings=self.settings,
        )
        given: dict[str, ContradictionJudgement] = {}
        folded = {k.strip().casefold(): k for k, _ in ask}
        for v in answer.verdicts:
            key = v.key if v.key in dict(ask) else folded.get(v.key.strip().casefold())
            if key is not None and key not in given:
                given[key] = ContradictionJudgement(
                    rationale=v.rationale, relation=v.relation, confidence=v.confidence
                )
        missing = [k for k, _ in ask if k not in given]
        if missing:
            raise JudgeError(
                f"the LLM judge returned a malformed verdict: no verdict for {', '.join(missing)} "
                f"(answered for {', '.join(v.key for v in answer.verdicts) or 'no key'})"
            )
        if cache is not None and model is not None:  # both set together (self.cache)
            cache.put_many({keys[k]: given[k].model_dump() for k in given}, model)
        found.update(given)
        return found


async def judge_many(
    items: list[tuple[str, list[tuple[str, str]]]],
    concurrency: Optional[int] = None,
    *,
    judge: LLMJudge,
    predicates: Optional[list[Optional[dict]]] = None,
) -> list[tuple[dict[str, ContradictionJudgement], "Usage"]]:
    """Judge many facts' candidates: ``items`` = ``[(fact, [(key, claim), ...]), ...]``, one
    LLM call per fact (none for a fact whose verdicts are all cached), up to ``concurrency``
    (default: the judge's ``FALSIFY_LLM_CONCURRENCY``, 4 unless set) at once. Returns, in order, ``(verdicts by key,
    Usage)`` per fact. On a failure (:class:`JudgeError`, incl. ``BudgetExceeded``) facts
    after the failing one are not started; the error raised is the first failing fact's, with
    ``error.judged`` = how many leading facts were fully judged and ``error.results`` = their
    results (so a caller can keep what was fully decided)."""
    from memory_core.judging.llm import Usage

    gate = asyncio.Semaphore(concurrency or llm_concurrency(judge.settings))
    results: list = [None] * len(items)
    errors: dict[int, JudgeError] = {}

    async def one(i: int, fact: str, stored: list[tuple[str, str]]) -> None:
        async with gate:
            if errors and min(errors) < i:
                return
            usage = Usage()
            try:
                results[i] = (
                    await judge.judge(fact, stored, usage, predicates[i] if predicates else None),
                    usage,
                )
            except JudgeError as error:
                errors[i] = error

    await asyncio.gather(*(one(i, fact, stored) for i, (fact, stored) in enumerate(items)))
    if errors:
        first = min(errors)
        error = errors[first]
        error.judged = first
        error.results = results[:first]
        raise error
    return results


class PerCandidateLLMJudge(LLMJudge):
    """The old way (``FALSIFY_LLM_PER_CANDIDATE=1``, kept for ``bench.judge``'s comparison):
    one uncached call per candidate, one after another."""

    async def judge(
        self, new: str, stored: list[tuple[str, str]], usage=None, predicates: Optional[dict] = None
    ) -> dict[str, ContradictionJudgement]:
        return {k: await self.judge_pair(claim, new, usage) for k, claim in dict(stored).items()}


def llm_judge(settings: config.Settings) -> LLMJudge:
    """The LLM judge a revision uses, going by ``settings`` (the stores'): the
    per-candidate one when ``FALSIFY_LLM_PER_CANDIDATE=1``."""
    if settings.llm_per_candidate:
        return PerCandidateLLMJudge(settings, cache=False)
    return LLMJudge(settings)
