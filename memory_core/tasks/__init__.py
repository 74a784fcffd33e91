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

import asyncio
from collections import OrderedDict
from typing import Any, Callable, Optional

from memory_core.core.errors import FacadeClosed, speak, spoken
from memory_core.core.results import RevisionResult

from memory_core.judging.detect import gate1_threshold
from memory_core.store.embedder import fingerprint
from memory_core.store.pipeline import noop_tasks, run_pipeline, task  # noqa: F401  (re-exported)
from memory_core.store.settings import Settings
from memory_core.store.stores import Stores
from memory_core.tasks.batch import FactJob, RevisionBatch, RevisionOptions, Stop  # noqa: F401  (re-exported)
from memory_core.tasks.collect_belief_subgraph import collect_belief_subgraph
from memory_core.tasks.detect_contradictions import make_detect_task, start_detection, stop_detection
from memory_core.tasks.forget_orphan_deadends import forget_orphan_deadends
from memory_core.tasks.promote_competing_hypothesis import promote_competing_hypothesis
from memory_core.tasks.propagate_refutation import propagate_refutation
from memory_core.tasks.write_revision import write_revision


def threshold(settings: Settings) -> Optional[float]:
    """Gate 1's distance floor for the configured embedder, by ``settings`` (the stores'); None: none."""
    return gate1_threshold(fingerprint()["provider"], settings)


def _never_closed() -> bool:
    return False


def revision_tasks(
    stores: Stores,
    *,
    use_llm: Optional[bool] = None,
    dry_run: bool = False,
    pin_reason: str = "--target",
    what: str = "facts",
    results: Optional[Callable[[FactJob], RevisionResult]] = None,
    closed: Callable[[], bool] = _never_closed,
) -> list:
    """The cognee Tasks of a revision bound to opened ``stores``. ``use_llm`` defaults to
    whether ``LLM_API_KEY`` is set (in the settings the stores go by). With ``dry_run``
    only detection runs (nothing is written).

    For a host's pipeline data (anything but a prepared :class:`RevisionBatch`) the Tasks
    behave like any cognee Task: an error raises out of the task, so cognee fails the run
    (``run_custom_pipeline`` raises the original exception and records the run as
    errored). The error says which of the run's items were applied before it and which
    not, and carries the results of those applied as ``error.applied`` (a list of
    RevisionResults); it is raised once no batch of the run is still writing, by the task
    that ends the batch (the last; the first for a dry run or an item that is no batch). The
    last task is an async generator: once a batch is written it yields ``results(job)`` for
    each of its facts, in order, so every fact's result reaches the Task after it (cognee
    hands a Task with ``batch_size`` N up to N of them per call). ``closed()`` says whether
    the facade the Tasks were built from is closed: then they raise :class:`FacadeClosed`
    before anything is read or written."""
    use_llm = bool(stores.settings.llm_key) if use_llm is None else use_llm
    options = RevisionOptions(
        what=what,
        dry_run=dry_run,
        pin_reason=pin_reason,
        use_llm=use_llm,
        threshold=threshold(stores.settings),
        limit=stores.settings.gate1_k,
    )
    detect = make_detect_task(stores, options)
    runs = _Runs()
    tasks = [task(_first(detect, closed, results if dry_run else None, runs), needs_llm=use_llm)]
    if dry_run:
        return tasks
    return tasks + [
        task(collect_belief_subgraph),
        task(propagate_refutation),
        task(promote_competing_hypothesis),
        task(forget_orphan_deadends),
        task(_last(write_revision, results, runs)),
    ]


class _Runs:
    """What each of a host's pipeline runs has applied so far (by cognee's pipeline run id):
    the RevisionResults of its written batches, for an error of a later batch to carry."""

    KEEP = 64  # runs remembered (the oldest are forgotten: a run's error comes while it runs)

    def __init__(self) -> None:
        self._applied: OrderedDict = OrderedDict()

    @staticmethod
    def _key(ctx) -> Any:
        return getattr(ctx, "pipeline_run_id", None)  # cognee's pipeline context

    def add(self, ctx, results: list) -> None:
        key = self._key(ctx)
        self._applied.setdefault(key, []).extend(results)
        self._applied.move_to_end(key)
        while len(self._applied) > self.KEEP:
            self._applied.popitem(last=False)

    def of(self, ctx) -> list:
        return list(self._applied.get(self._key(ctx), []))


def _applied_note(applied: list) -> str:
    if not applied:
        return "nothing of this pipeline run was applied"
    keys = [r.get("new_evidence") or r.get("fact", "?")[:40] for r in applied if isinstance(r, dict)]
    epochs = sorted({e for r in applied if isinstance(r, dict) and (e := r.get("epoch")) is not None})
    return (
        f"this pipeline run applied {len(applied)} fact(s) before it ({', '.join(map(str, keys))}; "
        f"epoch {', '.join(map(str, epochs)) or 'none'}), in error.applied"
    )


async def _raise_stop(batch: RevisionBatch, ctx, runs: _Runs, written: list) -> None:
    """A host's batch that stopped fails the host's pipeline run, the way cognee reports any
    task's error: its stop is raised here, once. Its revision lock is released first, and
    the error waits for its turn of the lock, so every batch of the run ahead of it has
    finished writing; it then says what the run applied (``error.applied``, with
    ``written``: the results of this batch's facts applied before a judge stopped it)."""
    stop = batch.stop
    if stop is None or not batch.options.host:
        return
    batch.release()
    error = stop.error
    if stop.at is None:  # stop.whole: nothing of the batch was applied
        async with batch.stores.revision:  # the batches ahead of it have finished
            pass
        applied = runs.of(ctx)
        # any exception a task raised carries what the run applied (documented: error.applied)
        error.applied = applied  # type: ignore[attr-defined]
        if error.args and isinstance(error.args[0], str):
            error.args = (
                f"{error.args[0]} [{_applied_note(applied)}; this item and any item still "
                "waiting were not applied]",
            ) + error.args[1:]
        raise speak(error)
    applied_here = (
        f"the facts before it were applied (epoch {batch.epoch})"
        if batch.entry is not None
        else "no fact before it changed anything"
    )
    stopped = type(error)(
        f"{batch.options.what} item {stop.at + 1}: {error} "
        f"[{applied_here}; this fact and the ones after it were not applied]"
    )
    stopped.applied = runs.of(ctx) + written  # type: ignore[attr-defined]  # as error.applied above
    raise speak(stopped)


def _first(detect, closed: Callable[[], bool], results, runs: _Runs):
    async def detect_contradictions(items, ctx=None):
        if closed():
            raise FacadeClosed(
                "these revision Tasks belong to a closed Falsify (its writer lock is released); "
                "open or attach it again and build the Tasks from the new one; nothing was written"
            )
        batches = await detect(items, ctx)
        for batch in batches:
            if batch.failed and (batch.options.dry_run or not batch.jobs):  # no later task ends this batch
                await _raise_stop(batch, ctx, runs, [])
        if results is not None:  # a dry run ends here: its results are this task's output
            return [spoken(results(job)) for batch in batches for job in batch.jobs]
        return batches

    return detect_contradictions


def _last(fn, results, runs: _Runs):
    async def wrapped(jobs, ctx=None):
        await fn(jobs, ctx)
        if any(not job.last for job in jobs):
            # a fact has gone through every task and the next one begins: the event loop runs
            # first. cognee hands each fact of the batch to the tasks after
            # propagate_refutation without suspending, so a batch's facts would otherwise keep
            # the host's loop from running for their whole planning (seconds for thousands of
            # facts). Safe here: the batch holds the revision lock until it is written, and
            # nothing is written before its last fact (a caller cancelled here leaves nothing)
            await asyncio.sleep(0)
        for job in jobs:
            batch = job.batch
            if batch.failed:
                await _raise_stop(batch, ctx, runs, [])
            if not batch.options.host or not job.last:
                continue
            written = [results(j) if results is not None else j for j in batch.jobs if j.applies]
            if results is not None:
                written = [spoken(r) for r in written]
            await _raise_stop(batch, ctx, runs, written)  # a judge failed: the facts before it were written
            runs.add(ctx, written)
            for result in written:  # each fact's result reaches the next Task
                yield result

    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    return wrapped


async def run_revision(stores: Stores, batch: RevisionBatch) -> RevisionBatch:
    """Run a prepared batch through FALSIFY's own pipeline run; raise what stopped it before
    anything was applied (a stop part-way through is the caller's to raise, after the
    results of the facts applied: ``batch.stop``)."""
    options = batch.options
    tasks = revision_tasks(
        stores,
        use_llm=options.use_llm,
        dry_run=options.dry_run,
        pin_reason=options.pin_reason,
        what=options.what,
    )
    try:
        await start_detection(batch)  # overlaps the runner's start-up; the first task takes its result
        await run_pipeline(tasks, [batch], "falsify_revision")
    finally:
        await stop_detection(batch)
        batch.release()
    if batch.stop is not None and batch.stop.whole:
        raise batch.stop.error
    return batch


__all__ = ["revision_tasks", "run_revision", "RevisionBatch", "RevisionOptions", "FactJob", "Stop"]
