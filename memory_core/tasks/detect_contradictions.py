"""Task 1: detection for the whole batch (gate 1, then the judges).

Every fact is searched against the stored evidence (``judging.detect``) and,
unless it is a dry run, against the facts before it in the same batch (their
embeddings compared here, their triples matched, the same judges applied), as
if each earlier fact had already been stored. Which candidates still count is
decided when each fact's turn comes (:func:`narrow`): only evidence alive at
that point acts, exactly as a one-at-a-time revision would see it. A judge that
fails on fact *k* stops the batch there: facts before it are still applied.
"""

from __future__ import annotations

import asyncio
import os
import time

import numpy as np
from typing import Optional

from memory_core.core.errors import InputError
from memory_core.core.keys import normalise_key, sp_key
from memory_core.judging.chain import Case, judge_cases
from memory_core.judging.detect import Candidate, Detection, candidates_from, finish_detection, pinned, undecided_note
from memory_core.judging.retrieval import Query, gate1_many
from memory_core.store.llm import Usage
from memory_core.core.identity import collection, node_id
from memory_core.tasks.batch import FactJob, RevisionBatch, as_requests, revision_lock, take_revision_lock
from memory_core.tasks.timing import timed


def concurrency() -> int:
    try:
        return max(1, int(os.environ.get("FALSIFY_LLM_CONCURRENCY", "4")))
    except ValueError:
        return 4


def make_detect_task(stores, *, dry_run: bool = False, use_llm: bool = False, threshold: float = 0.55,
                     limit: int = 8, pin_reason: str = "--target", what: str = "facts"):
    """The first task: turns the pipeline's data item (a fact, a dict, a list of them, or a
    prepared :class:`RevisionBatch`) into a batch, takes the revision lock, and detects."""

    async def detect_contradictions(items, ctx=None):
        batches = []
        for item in items:
            if isinstance(item, RevisionBatch):
                batch = item
            else:
                batch = RevisionBatch(stores, [], what, dry_run, pin_reason, use_llm, threshold, limit)
                try:
                    batch.requests = as_requests(item)
                    batch.jobs = [FactJob(batch, i, r) for i, r in enumerate(batch.requests)]
                except InputError as error:
                    batch.error = error
            batches.append(batch)
        for batch in batches:
            if batch.error is None:
                await batch.acquire()
        await _timed_detect([b for b in batches if b.error is None and not await early_detection_holds(b)])
        for batch in batches:
            if batch.dry_run or batch.error is not None and not batch.jobs:
                batch.release()  # no later task of this batch will run to release it
        return batches

    return detect_contradictions


@timed("detect_contradictions")
async def _timed_detect(batch: RevisionBatch) -> None:
    await detect_batch(batch)


async def start_detection(batch: RevisionBatch) -> None:
    """Detect a batch before cognee's runner reaches the first task, if the revision lock is free.

    FALSIFY's own pipeline run (``tasks.run_revision``) calls this just before handing the
    batch to the runner, whose start-up (user, dataset permissions, pipeline-run rows in
    cognee's relational database: ~100 ms) then overlaps detection (gate 1 and the LLM
    judge's call). Detection takes the revision lock for itself and lets it go when done, so
    no lock is held while the runner waits for cognee's dataset lock. The
    ``detect_contradictions`` task takes this result only if nobody held the lock in between
    and the journal's epoch is unchanged, i.e. the stores are exactly as detection read them;
    otherwise it detects again (:func:`early_detection_holds`). A host's own pipeline
    detects inside the task."""
    stores = batch.stores
    if batch.error is not None or not batch.jobs or batch.detecting is not None or revision_lock(stores).locked():
        return
    turn = await take_revision_lock(stores)
    try:
        epoch = stores.journal.epoch()
    except BaseException:
        revision_lock(stores).release()
        raise

    async def early():
        start = time.perf_counter()
        error = None
        try:
            await detect_batch(batch)
        except Exception as caught:  # the task re-raises it if the result holds
            error = caught
        finally:
            revision_lock(stores).release()
        return turn, epoch, error, (time.perf_counter() - start) * 1000

    batch.detecting = asyncio.ensure_future(early())


EARLY = {"used": 0, "redone": 0}  # how often an early detection was taken / thrown away (this process)


async def early_detection_holds(batch: RevisionBatch) -> bool:
    """With the lock held by the task: take the batch's early detection if the stores are as
    it read them (the lock's next turn is the task's, the epoch is the same), else forget it."""
    task, batch.detecting = batch.detecting, None
    if task is None:
        return False
    try:
        turn, epoch, error, ms = await task
    except asyncio.CancelledError:
        turn = None
    if turn is None or batch.turn != turn + 1 or batch.stores.journal.epoch() != epoch:
        batch.reset_detection()
        EARLY["redone"] += 1
        return False
    EARLY["used"] += 1
    batch.error = error
    for job in batch.jobs:
        job.timings["detect_contradictions"] = round(ms / max(1, len(batch.jobs)), 2)
    return True


async def stop_detection(batch: RevisionBatch) -> None:
    """After the run: an early detection no task took (cognee's runner failed before its
    first task) is cancelled and waited for, so it cannot outlive the command."""
    task, batch.detecting = batch.detecting, None
    if task is not None and not task.done():
        task.cancel()
    if task is not None:
        await asyncio.gather(task, return_exceptions=True)


async def detect_batch(batch: RevisionBatch) -> None:
    store = batch.stores.store
    jobs = batch.jobs
    new_keys = {normalise_key(j.new_key) for j in jobs}
    exclude = {j.new_key for j in jobs}
    stored = await store.find_keys(sorted(exclude))
    for job in jobs:
        props = stored.get(job.new_key)
        if props is None:
            continue
        if props.get("type") == "Evidence" and " ".join(props.get("claim", "").split()) == " ".join(job.fact.split()):
            job.already = f"already recorded as {job.new_key} (epoch {props.get('truth_epoch')}); nothing changed"
        else:
            raise InputError(f"{_where(batch, job)}--key {job.new_key!r} is already used by another node")
    free = [j for j in jobs if not j.already and j.request.target is None]
    vectors = {}
    if free or (len(jobs) > 1 and not batch.dry_run):
        # embedded once: gate 1 searches with them, the batch compares its facts, the write reuses them
        embedded = await store.embed([j.fact for j in jobs])
        vectors = {j.index: v for j, v in zip(jobs, embedded)}
    pins = [j for j in jobs if not j.already and j.request.target is not None]
    for job in pins:
        job.detection = await detect_fact(batch, job, new_keys, exclude, vectors)
    if free:
        await judge_together(batch, free, exclude, vectors)
    if batch.stopped_at == 0 or (batch.stopped_at is not None and len(jobs) == 1):
        raise batch.stop_error


async def judge_together(batch: RevisionBatch, jobs: list[FactJob], exclude: set, vectors: dict) -> None:
    """Gate 1 for every free fact in one call (:func:`memory_core.judging.retrieval.gate1_many`:
    vector + lexical, fused, top k, plus the subject+predicate lookup), the batch's earlier
    facts added as candidates, then the judges (structured first, then one LLM call per fact,
    facts judged concurrently: :func:`memory_core.judging.chain.judge_cases`). A judge failure
    on fact *k* stops the batch there."""
    store = batch.stores.store
    queries = [Query(j.fact, j.request.triple, vectors.get(j.index), frozenset(exclude)) for j in jobs]
    found = await gate1_many(store, queries, batch.limit, batch.threshold)
    prepared = []
    for job, got in zip(jobs, found):
        candidates, props_by_key = candidates_from(got)
        extra, extra_props = in_batch_candidates(batch, job, vectors)
        candidates += extra
        props_by_key.update(extra_props)
        prepared.append((job, candidates, props_by_key))
    declared = await store.declared_predicates(p for _, _, props in prepared for p in props.values())
    cases = [Case(job.fact, job.request.triple, candidates, props, declared) for job, candidates, props in prepared]
    stop = await judge_cases(cases, batch.use_llm)
    if stop is not None:
        batch.stopped_at, batch.stop_error = jobs[stop[0]].index, stop[1]
    for (job, candidates, _), case in zip(prepared, cases):
        if batch.stopped_at is None or job.index < batch.stopped_at:
            job.detection = finish_detection(candidates, batch.threshold, case.usage or Usage())


def in_batch_candidates(batch: RevisionBatch, job: FactJob, vectors: dict) -> tuple[list, dict]:
    """The batch's earlier facts near this one (as if they were already stored): the
    ``limit`` nearest (within the distance floor when one is set), or under the same
    subject+predicate. Distances come from one
    matrix of the batch's facts, computed once."""
    if batch.dry_run or job.index == 0:
        return [], {}
    request = job.request
    distances = _fact_distances(batch, vectors)
    mine = sp_key(*request.triple[:2]) if request.triple else None
    row = distances[job.index] if distances is not None else None
    near_ones = set()
    if row is not None:
        earlier = [i for i in np.argsort(row[: job.index], kind="stable")[: batch.limit].tolist()
                   if batch.threshold is None or row[i] < batch.threshold]
        near_ones = set(earlier)
    same_sp = set(i for i in _sp_index(batch).get(mine, ()) if i < job.index) if mine else set()
    extra, extra_props = [], {}
    for index in sorted(near_ones | same_sp):
        other = batch.jobs[index]
        if other.already:
            continue
        distance = float(row[index]) if row is not None else None
        near = index in near_ones
        extra.append(Candidate(other.new_key, None, other.fact, distance if near else None))
        if other.request.triple:
            s, p, o = other.request.triple
            extra_props[other.new_key] = {"subject": s, "predicate": p, "object": o}
    return extra, extra_props


def _sp_index(batch: RevisionBatch) -> dict:
    """subject|predicate -> indices of the batch's facts given with that triple."""
    cached = getattr(batch, "_sp_index", None)
    if cached is None:
        cached = {}
        for j in batch.jobs:
            if j.request.triple:
                cached.setdefault(sp_key(*j.request.triple[:2]), []).append(j.index)
        batch._sp_index = cached
    return cached


def _fact_distances(batch: RevisionBatch, vectors: dict):
    """Cosine distances between every pair of the batch's facts (an n x n matrix), or None."""
    cached = getattr(batch, "_fact_distances", None)
    if cached is not None or not vectors or len(vectors) < len(batch.jobs):
        return cached
    m = np.asarray([vectors[j.index] for j in batch.jobs], dtype=np.float64)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    batch._fact_distances = 1.0 - m @ m.T
    return batch._fact_distances


async def detect_fact(batch: RevisionBatch, job: FactJob, new_keys: set, exclude: set, vectors: dict) -> Detection:
    store = batch.stores.store
    request = job.request
    earlier = [j for j in batch.jobs[: job.index] if not j.already] if not batch.dry_run else []
    if request.target is not None:
        mine = next((j for j in earlier if normalise_key(j.new_key) == normalise_key(request.target)), None)
        if mine is not None:
            verdict_text = f"pinned: {batch.pin_reason} names {mine.new_key}; gates skipped"
            cand = Candidate(mine.new_key, None, mine.fact, None, "contradicts", 1.0, verdict_text, "pinned")
            return Detection("pinned", [cand])
        try:
            detection = await pinned(store, request.fact, request.target, batch.pin_reason)
        except LookupError as error:
            raise InputError(f"{_where(batch, job)}{error}") from None
        detection.candidates[0].distance = await _distance_to(store, request.fact, detection.candidates[0].key)
        return detection
    raise AssertionError("detect_fact is for pinned facts; free facts go through judge_together")


def narrow(job: FactJob, alive: set[str], questions: dict[str, Optional[str]]) -> Detection:
    """The fact's detection as its turn comes: only candidates alive at this point count
    (what gate 1 would have returned had the facts before it been applied one by one)."""
    d = job.detection
    if d is None:
        return Detection("none", [], [], "")
    if d.judge == "pinned":
        for c in d.candidates:
            c.question = c.question or questions.get(c.key)
        return d
    kept = [c for c in d.candidates if c.key in alive]
    for c in kept:
        c.question = c.question or questions.get(c.key)
    undecided = [k for k in d.undecided if k in alive]
    used = sorted({c.judge for c in kept if c.judge})
    return Detection("+".join(used) or "none", kept, undecided,
                     undecided_note(kept, undecided, job.batch.threshold))


def _where(batch: RevisionBatch, job: FactJob) -> str:
    return f"{batch.what} line {job.request.line}: " if len(batch.jobs) > 1 and job.request.line else ""


async def _distance_to(store, fact: str, key: str) -> Optional[float]:
    """Gate 1's distance from the fact to a pinned target (shown, not used)."""
    wanted = node_id("evidence", key)
    for hit in await store.search(collection("evidence"), fact, 50):
        if str(hit.id) == wanted:
            return float(hit.score)
    return None
