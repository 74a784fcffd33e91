"""Gate 2: the judges, behind one interface, applied in order.

A :class:`Judge` decides what it can of many facts' candidates at once and leaves the
rest to the next judge (graphiti_core's prompts/search split is the model: each judge
is one class, the chain is a list):

* :class:`StructuredJudge` (offline): a fact given as a triple against evidence stored
  with subject/predicate/object (``judges.structured_verdict``, cardinality-aware).
* :class:`LLMStep` (with ``LLM_API_KEY``): every candidate still undecided, one call
  per fact, facts judged concurrently (``judges.judge_many``, cached, budgeted).
* The caller's decisions are not in the chain: a pin (``--target KEY``) skips both gates
  (``detect.pinned``); offline, what no judge decided is returned to the caller, ranked
  (``to_decide``), and the caller revises again with ``--target``.

A new judge (say a local cross-encoder NLI model) is one class with ``name``,
``enabled(use_llm)`` and ``decide(cases)``, inserted into :data:`JUDGES`; retrieval,
the chain and the verdicts' application are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Protocol, Sequence

from memory_core.core.errors import JudgeError
from memory_core.judging.judges import (
    declarations_of,
    judge_many,
    llm_concurrency,
    llm_judge,
    structured_verdict,
)
from memory_core.judging.prompts import ContradictionJudgement
from memory_core.store import off_loop
from memory_core.store.settings import Settings

if TYPE_CHECKING:
    from memory_core.judging.llm import Usage


@dataclass
class Case:
    """One new fact and the stored candidates a judge is asked about."""

    fact: str
    triple: Optional[tuple[str, str, str]]
    candidates: list  # detect.Candidate; a judge sees only those not decided yet
    props: dict[str, dict] = field(
        default_factory=dict
    )  # candidate key -> stored props (triple, question_key)
    declared: dict[str, dict] = field(
        default_factory=dict
    )  # question key -> its predicate cardinality declarations
    usage: Optional["Usage"] = None  # what the LLM judge spent on this fact, when it was asked
    settings: Optional[Settings] = None  # the settings it is judged by (the stores': the LLM step's)

    @property
    def undecided(self) -> list:
        return [c for c in self.candidates if c.relation is None]

    def predicates(self, candidates) -> dict:
        """The declarations of these candidates' questions, as one (for a prompt)."""
        from memory_core.core.cardinality import merged

        return merged(declarations_of(self.declared, self.props.get(c.key) or {}) or {} for c in candidates)


Verdicts = dict[str, ContradictionJudgement]


class Judge(Protocol):
    name: str

    def enabled(self, use_llm: bool) -> bool: ...

    async def decide(self, cases: Sequence[Case]) -> list[Verdicts]:
        """Verdicts by candidate key for each case (only what this judge can decide). A
        :class:`JudgeError` carries ``judged`` (leading cases fully decided) and ``results``."""
        ...


class StructuredJudge:
    name = "structured"

    def enabled(self, use_llm: bool) -> bool:
        return True

    async def decide(self, cases: Sequence[Case]) -> list[Verdicts]:
        # pure over the cases: a batch's many are judged in a worker thread
        return await off_loop.run(self._decide, cases, size=sum(len(c.candidates) for c in cases))

    @staticmethod
    def _decide(cases: Sequence[Case]) -> list[Verdicts]:
        out = []
        for case in cases:
            verdicts: Verdicts = {}
            if case.triple:
                for c in case.undecided:
                    props = case.props.get(c.key) or {}
                    v = structured_verdict(case.triple, props, declarations_of(case.declared, props))
                    if v is not None:
                        verdicts[c.key] = v
            out.append(verdicts)
        return out


class LLMStep:
    """The LLM judge's step. It goes by the cases' settings (those of the stores they were
    read from), else the process's; ``concurrency`` overrides ``FALSIFY_LLM_CONCURRENCY``."""

    name = "llm"

    def __init__(self, concurrency: Optional[int] = None):
        self.concurrency = concurrency

    def enabled(self, use_llm: bool) -> bool:
        return use_llm

    async def decide(self, cases: Sequence[Case]) -> list[Verdicts]:
        asks = [(c, c.undecided) for c in cases]
        settings = next(c.settings for c in cases if c.settings is not None)
        try:
            judged = await judge_many(
                [(case.fact, [(x.key, x.claim) for x in left]) for case, left in asks],
                self.concurrency or llm_concurrency(settings),
                judge=llm_judge(settings),
                predicates=[case.predicates(left) for case, left in asks],
            )
        except JudgeError as error:
            done = error.results or []  # judge_many sets it: the leading facts' (verdicts, usage)
            for (case, _), (_, usage) in zip(asks, done):
                case.usage = usage
            error.results = [verdicts for verdicts, _ in done]
            raise
        for (case, _), (_, usage) in zip(asks, judged):
            case.usage = usage
        return [verdicts for verdicts, _ in judged]


JUDGES: list = [StructuredJudge(), LLMStep()]


def apply(case: Case, verdicts: Verdicts, judge: str) -> None:
    for cand in case.candidates:
        verdict = verdicts.get(cand.key)
        if verdict is not None and cand.relation is None:
            cand.relation, cand.confidence, cand.rationale, cand.judge = (
                verdict.relation,
                verdict.confidence,
                verdict.rationale,
                judge,
            )


async def judge_cases(
    cases: Sequence[Case], use_llm: bool, judges: Sequence[Judge] = ()
) -> Optional[tuple[int, JudgeError]]:
    """Every judge in turn on the cases' candidates still undecided (a case with none left is
    not asked). Returns None, or ``(index of the first case a judge failed on, the error)``:
    the cases before it are fully decided, it and the ones after it are not to be applied."""
    stop: Optional[tuple[int, JudgeError]] = None
    for judge in judges or JUDGES:
        if not judge.enabled(use_llm):
            continue
        ask = [i for i, case in enumerate(cases) if case.undecided and (stop is None or i < stop[0])]
        if not ask:
            continue
        try:
            answers = await judge.decide([cases[i] for i in ask])
        except JudgeError as error:
            answers = list(error.results or [])
            stop = (ask[error.judged], error)
        for i, verdicts in zip(ask, answers):
            apply(cases[i], verdicts, judge.name)
    return stop


__all__ = ["Case", "Judge", "StructuredJudge", "LLMStep", "JUDGES", "judge_cases", "apply"]
