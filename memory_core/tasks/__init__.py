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

from typing import Any, Callable, Optional

from memory_core.core.errors import FacadeClosed

from memory_core.judging.detect import gate1_threshold
from memory_core.store.embedder import fingerprint
from memory_core.store.pipeline import noop_tasks, run_pipeline, task  # noqa: F401  (re-exported)
from memory_core.tasks.batch import FactJob, RevisionBatch  # noqa: F401  (re-exported)
from memory_core.tasks.collect_belief_subgraph import collect_belief_subgraph
from memory_core.tasks.detect_contradictions import make_detect_task, start_detection, stop_detection
from memory_core.tasks.forget_orphan_deadends import forget_orphan_deadends
from memory_core.tasks.promote_competing_hypothesis import promote_competing_hypothesis
from memory_core.tasks.propagate_refutation import propagate_refutation
from memory_core.tasks.write_revision import write_revision


def threshold(settings=None) -> float:
    """Gate 1's distance floor for the configured embedder, by ``settings`` (the stores';
    default: the process's)."""
    return gate1_threshold(fingerprint()["provider"], settings)


def revision_tasks(fx: Any, *, use_llm: Optional[bool] = None, dry_run: bool = False, pin_reason: str = "--target",
                   what: str = "facts", results: Optional[Callable[[FactJob], dict]] = None) -> list:
    """The cognee Tasks of a revision bound to an opened FALSIFY (a ``Falsify`` or its
    ``Stores``). ``use_llm`` defaults to whether ``LLM_API_KEY`` is set (in the settings the
    stores go by). With
    ``dry_run`` only detection runs (nothing is written).

    For a host's pipeline data (anything but a prepared :class:`RevisionBatch`) the Tasks
    behave like any cognee Task: an error raises out of the task, so cognee fails the run
    (``run_custom_pipeline`` raises the original exception and records the run as
    errored), and the last task returns ``results(job)`` for each fact of the batch once
    the batch is written. Tasks bound to a closed ``Falsify`` raise :class:`FacadeClosed`
    before anything is read or written."""
    stores = getattr(fx, "stores", fx)
    owner = fx if hasattr(fx, "stores") else None
    use_llm = stores.settings.llm_key if use_llm is None else use_llm
    detect = make_detect_task(stores, dry_run=dry_run, use_llm=use_llm, threshold=threshold(stores.settings),
                              limit=stores.settings.gate1_k,
                              pin_reason=pin_reason, what=what)
    tasks = [task(_first(detect, owner, results if dry_run else None), needs_llm=use_llm)]
    if dry_run:
        return tasks
    return tasks + [task(_then(collect_belief_subgraph)), task(_then_each(propagate_refutation)),
                    task(_then(promote_competing_hypothesis)), task(_then(forget_orphan_deadends)),
                    task(_last(write_revision, results))]


def _surface(items) -> None:
    """Raise the first error a host's batch recorded (after releasing its revision lock):
    cognee then fails the pipeline run with it, the way it reports any task's error."""
    for item in items:
        batch = getattr(item, "batch", item)
        if getattr(batch, "host", False) and batch.error is not None:
            batch.release()
            raise batch.error


def _first(detect, owner, results):
    async def detect_contradictions(items, ctx=None):
        if owner is not None and getattr(owner, "closed", False):
            raise FacadeClosed("these revision Tasks belong to a closed Falsify (its writer lock is released); "
                               "open or attach it again and build the Tasks from the new one; nothing was written")
        hosted = [not isinstance(item, RevisionBatch) for item in items]
        batches = await detect(items, ctx)
        for batch, host in zip(batches, hosted):
            batch.host = batch.host or host
        _surface(batches)
        if results is not None:  # a dry run ends here: its results are this task's output
            return [results(job) for batch in batches for job in batch.jobs]
        return batches

    return detect_contradictions


def _then(fn):
    async def wrapped(items, ctx=None):
        out = await fn(items, ctx)
        _surface(items)
        return out

    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    return wrapped


def _then_each(fn):
    async def wrapped(items, ctx=None):
        async for job in fn(items, ctx):
            _surface([job])
            yield job

    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    return wrapped


def _last(fn, results):
    async def wrapped(jobs, ctx=None):
        out = await fn(jobs, ctx)
        _surface(jobs)
        hosted = [job for job in jobs if getattr(job.batch, "host", False)]
        if not hosted:
            return out
        done = []
        for job in hosted:
            batch = job.batch
            if not job.last:
                continue
            if batch.stop_error is not None:  # a judge failed: the facts before it were written
                applied = f"the facts before it were applied (epoch {batch.epoch})" if batch.entry is not None \
                    else "no fact before it changed anything"
                raise type(batch.stop_error)(f"{batch.what} item {batch.stopped_at + 1}: {batch.stop_error} "
                                             f"[{applied}; this fact and the ones after it were not applied]")
            done += [results(j) if results is not None else j for j in batch.jobs]
        return done

    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    return wrapped


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
