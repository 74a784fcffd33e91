"""cognee Tasks of a revision: thin wrappers over the pure rules and the adapter.

Run in order by cognee's pipeline runner (``run_custom_pipeline``) over one
:class:`RevisionJob`::

    detect_contradictions (needs_llm only with the LLM judge)
    collect_belief_subgraph → propagate_refutation → promote_competing_hypothesis
    → forget_orphan_deadends → write_revision (journal + add_data_points + batches)

Each task takes and returns the list of jobs, so the list is memify-compatible
(``cognee.memify(extraction_tasks=[...], enrichment_tasks=[...])``).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from memory_core.core.beliefs import BeliefView, Node
from memory_core.core.identity import node_id
from memory_core.judging.detect import Detection, detect
from memory_core.core.plan import Plan
from memory_core.core import revision
from memory_core.store.pipeline import noop_tasks, run_pipeline, task  # noqa: F401  (re-exported)


@dataclass(repr=False)
class RevisionJob:
    store: Any
    journal: Any
    fact: str
    triple: Optional[tuple]
    new_key: str
    epoch: int
    threshold: float
    limit: int
    source_id: Optional[str] = None
    asserted_at: Optional[str] = None
    detection: Optional[Detection] = None
    view: Optional[BeliefView] = None
    original: dict = field(default_factory=dict)
    plan: Optional[Plan] = None
    dry_run: bool = False
    hook: Any = None
    entry: Optional[dict] = None
    error: Optional[BaseException] = None
    timings: dict = field(default_factory=dict)

    def __repr__(self) -> str:  # cognee stores repr(data) with each pipeline run: keep it short
        return f"RevisionJob(fact={self.fact[:80]!r}, new_key={self.new_key!r}, epoch={self.epoch})"

    @property
    def verdicts(self) -> list[tuple[str, str, float]]:
        return [(c.key, c.relation, c.confidence) for c in self.detection.acting]

    @property
    def records(self) -> bool:
        """Whether this job writes: not a dry run, and either a judge found a
        contradiction, or every candidate was judged (none contradicts: the fact
        is recorded next to the evidence it relates to). With undecidable
        candidates and no contradiction, nothing is recorded."""
        d = self.detection
        if self.dry_run or d is None:
            return False
        return bool(d.acting) or (not d.undecided and bool(d.candidates))

    @property
    def question(self) -> Optional[str]:
        acting = self.detection.acting
        if acting:
            return acting[0].question
        ranked = sorted(self.detection.candidates, key=lambda c: (c.distance is None, c.distance or 0.0))
        return ranked[0].question if ranked else None


def _timed(name: str):
    def wrap(fn):
        async def task(jobs, ctx=None):
            for job in jobs:
                if job.error is not None:
                    continue
                start = time.perf_counter()
                try:
                    await fn(job)
                except BaseException as error:  # surfaced by the caller after the run
                    job.error = error
                job.timings[name] = round((time.perf_counter() - start) * 1000, 2)
            return jobs
        task.__name__ = name
        task.__qualname__ = name
        return task
    return wrap


@_timed("detect_contradictions")
async def detect_contradictions(job: RevisionJob) -> None:
    if job.detection is None:
        job.detection = await detect(job.store, job.fact, job.triple, job.threshold, job.limit, {job.new_key})


@_timed("collect_belief_subgraph")
async def collect_belief_subgraph(job: RevisionJob) -> None:
    if not job.records:
        return

    seeds = [node_id("evidence", key) for key, _, _ in job.verdicts]
    job.view = await job.store.affected_view(seeds)
    job.original = {k: copy.copy(n) for k, n in job.view.nodes.items()}


@_timed("propagate_refutation")
async def propagate_refutation(job: RevisionJob) -> None:
    if not job.records:
        return
    new_node = Node(job.new_key, "evidence", question=job.question, text=job.fact, weight=0.5)
    job.plan = revision.begin(job.view, job.verdicts, job.epoch, job.fact, new_node)
    revision.propagate_refutation(job.view, job.plan)


@_timed("promote_competing_hypothesis")
async def promote_competing_hypothesis(job: RevisionJob) -> None:
    if not job.records:
        return
    revision.promote_competing_hypothesis(job.view, job.plan)


@_timed("forget_orphan_deadends")
async def forget_orphan_deadends(job: RevisionJob) -> None:
    if not job.records:
        return
    revision.forget_orphans(job.view, job.plan)


@_timed("write_revision")
async def write_revision(job: RevisionJob) -> None:
    if not job.records:
        return
    from memory_core.store.intents import revision_intent
    from memory_core.store import writer

    intent, entry = await revision_intent(job)
    await writer.run(job.store, job.journal, intent, entry, job.hook)
    job.entry = entry


def revision_tasks(use_llm: bool) -> list:
    return [
        task(detect_contradictions, needs_llm=use_llm),
        task(collect_belief_subgraph),
        task(propagate_refutation),
        task(promote_competing_hypothesis),
        task(forget_orphan_deadends),
        task(write_revision),
    ]
