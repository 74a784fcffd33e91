"""A revision as cognee Tasks, one small file each, composed into a pipeline::

    detect_contradictions        gate 1 + judges for the whole batch (needs_llm with the LLM judge)
    collect_belief_subgraph      the affected part of the graph, read once into a view
    propagate_refutation         fact by fact: record, refute, invalidate (an async generator)
    promote_competing_hypothesis supersede the loser, promote the best-supported rival
    forget_orphan_deadends       forget dead ends nothing alive needs
    write_revision               one journalled intent, one write per store, one log entry

A host that configured cognee itself runs them in its own pipeline::

    fx = await Falsify.attach(state_dir)
    await cognee.run_custom_pipeline(tasks=revision_tasks(fx), data=[["fact one", {"fact": "fact two", ...}]])

FALSIFY's own run (:func:`run_revision`) starts detection as soon as the revision lock is
free, before cognee's runner reaches the first task (its start-up, ~100 ms of user, dataset
and pipeline-run bookkeeping, then overlaps gate 1 and the LLM judge's call); the first
task takes that result only if nobody held the lock in between, else detects again
(``detect_contradictions.start_detection``).

Each data item is one batch (a fact, a dict with the ``revise`` fields, or a
list of them); batches are applied one at a time, in the order cognee starts them.
"""

from __future__ import annotations

from typing import Any, Optional

from memory_core.judging.detect import DEFAULT_LIMIT, gate1_threshold
from memory_core.store.embedder import fingerprint
from memory_core.store.pipeline import noop_tasks, run_pipeline, task  # noqa: F401  (re-exported)
from memory_core.store.settings import llm_key_configured
from memory_core.tasks.batch import FactJob, RevisionBatch  # noqa: F401  (re-exported)
from memory_core.tasks.collect_belief_subgraph import collect_belief_subgraph
from memory_core.tasks.detect_contradictions import make_detect_task, start_detection, stop_detection
from memory_core.tasks.forget_orphan_deadends import forget_orphan_deadends
from memory_core.tasks.promote_competing_hypothesis import promote_competing_hypothesis
from memory_core.tasks.propagate_refutation import propagate_refutation
from memory_core.tasks.write_revision import write_revision


def threshold() -> float:
    return gate1_threshold(fingerprint()["provider"])


def revision_tasks(fx: Any, *, use_llm: Optional[bool] = None, dry_run: bool = False, pin_reason: str = "--target",
                   what: str = "facts") -> list:
    """The cognee Tasks of a revision bound to an opened FALSIFY (a ``Falsify`` or its
    ``Stores``). ``use_llm`` defaults to whether ``LLM_API_KEY`` is set. With
    ``dry_run`` only detection runs (nothing is written)."""
    stores = getattr(fx, "stores", fx)
    use_llm = llm_key_configured() if use_llm is None else use_llm
    detect = make_detect_task(stores, dry_run=dry_run, use_llm=use_llm, threshold=threshold(), limit=DEFAULT_LIMIT,
                              pin_reason=pin_reason, what=what)
    tasks = [task(detect, needs_llm=use_llm)]
    if dry_run:
        return tasks
    return tasks + [task(collect_belief_subgraph), task(propagate_refutation), task(promote_competing_hypothesis),
                    task(forget_orphan_deadends), task(write_revision)]


async def run_revision(stores, batch: RevisionBatch) -> RevisionBatch:
    """Run a prepared batch through FALSIFY's own pipeline run; re-raise its error."""
    tasks = revision_tasks(stores, use_llm=batch.use_llm, dry_run=batch.dry_run, pin_reason=batch.pin_reason,
                           what=batch.what)
    try:
        await start_detection(batch)  # overlaps the runner's start-up; the first task takes its result
        await run_pipeline(tasks, [batch], "falsify_revision")
    finally:
        await stop_detection(batch)
        batch.release()
    return batch


__all__ = ["revision_tasks", "run_revision", "RevisionBatch", "FactJob"]
