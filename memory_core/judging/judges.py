"""Gate 2: judges that decide how a new fact relates to a stored claim.

* :func:`structured_verdict` — offline and deterministic, for a fact given as a
  triple and evidence stored with subject/predicate/object: same normalised
  subject and predicate with another object → ``contradicts`` (0.9); the same
  object → ``supports`` (0.9); another subject or predicate → ``unrelated``.
* :class:`LLMJudge` — a skeptical analyst through cognee's
  ``LLMGateway.acreate_structured_output`` (used when ``LLM_API_KEY`` is set).
  Both claims travel as delimited, escaped data, never as instructions.
* :func:`pinned_verdict` — ``--target KEY`` / ``DEMO_MODE`` + ``REFUTED_ID``:
  the named evidence is contradicted and the gates are skipped.

Only ``contradicts``/``supersedes`` at confidence ≥ :data:`ACT_THRESHOLD` act.
"""

from __future__ import annotations

from typing import Optional

from memory_core.core.errors import JudgeError  # noqa: F401  (re-exported)
from memory_core.core.keys import normalise_term
from memory_core.core.requests import parse_triple  # noqa: F401  (re-exported)
from memory_core.judging.prompts import SYSTEM_PROMPT, ContradictionJudgement, llm_input

ACT_THRESHOLD = 0.6
STRUCTURED_CONFIDENCE = 0.9


def structured_verdict(triple: tuple[str, str, str], candidate: dict) -> Optional[ContradictionJudgement]:
    """None when the candidate carries no triple (this judge cannot decide)."""
    s, p, o = (candidate.get(k) for k in ("subject", "predicate", "object"))
    if not (s and p and o):
        return None
    fs, fp, fo = (normalise_term(x) for x in triple)
    if normalise_term(s) != fs or normalise_term(p) != fp:
        return ContradictionJudgement(rationale=f"different subject or predicate ({s!r} {p!r} vs {triple[0]!r} {triple[1]!r})",
                                      relation="unrelated", confidence=STRUCTURED_CONFIDENCE)
    if normalise_term(o) == fo:
        return ContradictionJudgement(rationale=f"same subject and predicate, same object {o!r}",
                                      relation="supports", confidence=STRUCTURED_CONFIDENCE)
    return ContradictionJudgement(
        rationale=f"same subject and predicate ({s!r}, {p!r}) with another object: stored {o!r}, new {triple[2]!r}",
        relation="contradicts", confidence=STRUCTURED_CONFIDENCE)


def pinned_verdict(key: str, why: str) -> ContradictionJudgement:
    return ContradictionJudgement(rationale=f"pinned: {why} names {key}; gates skipped", relation="contradicts", confidence=1.0)


class LLMJudge:
    """The skeptical-analyst judge through cognee's LLM gateway (``store.llm``)."""

    name = "llm"

    async def __call__(self, stored: str, new: str) -> ContradictionJudgement:
        from memory_core.store.llm import structured_output

        return await structured_output(llm_input(stored, new), SYSTEM_PROMPT, ContradictionJudgement, "the LLM judge")
