"""Task 3: fact by fact, record the new fact, refute what it contradicts, invalidate
what rested on it (``core.revision``).

An async generator: cognee runs each yielded fact through the tasks after this
one (promotion, forget, write) before the next fact starts here, so every fact
sees the effects of the ones before it on the shared view, exactly as if they
were revised one at a time.
"""

from __future__ import annotations

import time

from memory_core.core import revision, validity
from memory_core.core.beliefs import Node
from memory_core.core.errors import InputError
from memory_core.store.tms_io import decide
from memory_core.tasks.batch import FactJob, RevisionBatch
from memory_core.tasks.detect_contradictions import narrow
from memory_core.tasks.rejudge import judge_batch_facts_by_cardinality, rejudge_returning


async def begin_fact(job: FactJob) -> None:
    batch = job.batch
    view = batch.view
    if job.new_key in view.nodes:  # the same fact earlier in this batch
        job.already = f"already recorded as {job.new_key} (epoch {batch.epoch}); nothing changed"
        return
    candidates = job.detection.candidates if job.detection else []
    # only the candidates' states matter here: alive or disputed (still contestable) at this point
    alive = {c.key for c in candidates if c.key in view.nodes
             and (view.nodes[c.key].alive or view.nodes[c.key].state == "disputed")}
    new_keys = batch.new_keys()
    alive |= {c.key for c in candidates if c.key not in view.nodes
              and c.key not in batch.forgotten_nodes and c.key not in new_keys}
    if job.request.valid_from is not None and job.request.triple is not None:
        # a timed value takes its place in its subject+predicate's whole timeline: the values
        # already superseded in time count too (core.validity)
        alive |= {c.key for c in candidates if c.key in view.nodes and validity.past_value(view.nodes[c.key])}
    questions = {c.key: view.nodes[c.key].question for c in candidates if c.key in view.nodes}
    job.narrowed = narrow(job, alive, questions)
    await judge_batch_facts_by_cardinality(job)
    if not job.records:
        return
    for key, _, _ in job.verdicts:
        if key not in view.nodes:  # pinned to an earlier line's key that recorded nothing
            raise InputError(f"--target {key!r}: no evidence with that key in this data root")
    r = job.request
    new_node = Node(job.new_key, "evidence", question=job.question, text=job.fact, weight=0.5,
                    valid_from=r.valid_from, valid_to=r.valid_to)
    decisions, job.registered_trust = decide(batch, job)  # who wins each contradiction
    # valid time first: a contradiction between facts true at different times is no revision
    stored = {k: (view.nodes[k].valid_from, view.nodes[k].valid_to) for k, _, _ in job.verdicts if k in view.nodes}
    timed = validity.sort_verdicts(job.verdicts, (r.valid_from, r.valid_to), stored)
    kept = timed["kept"]
    decisions = {k: d for k, d in decisions.items() if k in {v[0] for v in kept}}
    job.plan = revision.begin(view, kept, batch.epoch, job.fact, new_node, decisions)
    # a value already superseded in time that the fact contradicts for the same period
    validity.reopen(view, job.plan, kept, decisions, job.new_key)
    await rejudge_returning(batch, job.plan, [(job.new_key, job.fact, job.request.triple)])
    # nodes forgotten by earlier facts of this batch are ghosts too (they may come back)
    revision.propagate_refutation(view, job.plan, batch.memory, set(batch.ghosts) | set(batch.forgotten_nodes))
    if timed["cases"]:
        job.plan.meta["validity"] = dict(timed["cases"])
        note = validity.untimed_note(job.new_key, (r.valid_from, r.valid_to), stored, timed["cases"])
        if note:
            job.plan.meta["validity_note"] = note
    validity.place(view, job.plan, timed, job.new_key)  # the fact holds: its place in its timeline
    batch.restored.update(job.plan.restored)


async def propagate_refutation(batches, ctx=None):
    for batch in batches:
        for job in batch.jobs:
            stopped = batch.stopped_at is not None and job.index >= batch.stopped_at
            if batch.error is None and not stopped:
                start = time.perf_counter()
                try:
                    await begin_fact(job)
                except BaseException as error:  # surfaced by the caller after the run
                    batch.error = error
                job.timings["propagate_refutation"] = round((time.perf_counter() - start) * 1000, 2)
            yield job
