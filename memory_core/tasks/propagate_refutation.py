"""Task 3: fact by fact, record the new fact, refute what it contradicts, invalidate
what rested on it (``core.revision``).

An async generator: cognee runs each yielded fact through the tasks after this
one (promotion, forget, write) before the next fact starts here, so every fact
sees the effects of the ones before it on the shared view, exactly as if they
were revised one at a time.
"""

from __future__ import annotations

import copy
import time
from collections import ChainMap
from collections.abc import Mapping, MutableMapping
from typing import Any, cast
from dataclasses import replace

from memory_core.core import revision, validity
from memory_core.core.beliefs import Edge, Node
from memory_core.core.vocabulary import REFUTES, SUPPORTS
from memory_core.core.errors import InputError
from memory_core.core.identity import node_id
from memory_core.core.keys import claim_text
from memory_core.core.plan import Plan
from memory_core.core.policy import NewFact, PolicyInputs, decisions_for
from memory_core.store.intents import evidence_props
from memory_core.store.tms_io import extend_view, merged
from memory_core.tasks.batch import FactJob, named_inquiry
from memory_core.tasks.detect_contradictions import (
    compare_with_returned,
    line_of,
    narrow,
    note_returned,
    record_holds,
    refuse_repeat_decisions,
)
from memory_core.tasks.rejudge import judge_batch_facts_by_cardinality, recorded_props, rejudge_returning
from memory_core.tasks.settle_in_time import read_reopening, read_settling


def _on_its_line(job: FactJob, error: InputError) -> InputError:
    """``error`` with the batch line it is about in front, as detection's refusals have it."""
    where = line_of(job.batch, job)
    if not where or str(error).startswith(where):
        return error
    said = InputError(f"{where}{error}", field=error.field)
    said.__cause__ = error.__cause__
    return said


def today() -> str:
    """The UTC date an undated fact is dated with (``core.policy``)."""
    return time.strftime("%Y-%m-%d", time.gmtime())


async def begin_fact(job: FactJob) -> None:
    batch = job.batch
    view = batch.belief_view
    if job.already:  # found stored at detection: its note keeps the epoch it was recorded at
        return
    if job.new_key in view.nodes:  # the same fact earlier in this batch
        job.already = f"already recorded as {job.new_key} (epoch {batch.epoch}); nothing changed"
        return
    asked = job.request.valid_from, job.request.valid_to
    for key, (held, epoch) in job.repeats.items():  # the fact again: a record of it that holds now
        node = view.nodes.get(key)
        if (node is not None and record_holds(node.state, node.valid_to, *asked)) or (node is None and held):
            # an earlier line's record is in the view; a stored one out of it is as stored
            await refuse_repeat_decisions(job, key)
            epoch = batch.epoch if held is None else epoch
            job.already = f"already recorded as {key} (epoch {epoch}); nothing changed"
            job.request = replace(job.request, key=key)
            return
    if not await compare_with_returned(job):
        return  # a judge failed on this fact: the batch stops here
    candidates = job.detection.candidates if job.detection else []
    # only the candidates' states matter here: alive or disputed (still contestable) at this point
    alive = {
        c.key
        for c in candidates
        if c.key in view.nodes and (view.nodes[c.key].alive or view.nodes[c.key].state == "disputed")
    }
    new_keys = batch.new_keys
    alive |= {
        c.key
        for c in candidates
        if c.key not in view.nodes and c.key not in batch.forgotten_nodes and c.key not in new_keys
    }
    if job.request.valid_from is not None and job.request.triple is not None:
        # a timed value takes its place in its subject+predicate's whole timeline: the values
        # already superseded in time count too (core.validity)
        alive |= {c.key for c in candidates if c.key in view.nodes and validity.past_value(view.nodes[c.key])}
    questions = {c.key: view.nodes[c.key].question for c in candidates if c.key in view.nodes}
    if (
        job.request.inquiry is not None
    ):  # the caller says where the fact belongs: only that question's evidence counts
        await batch.home()
        job.inquiry = named_inquiry(job)
        # a timed value takes its place in its slot's whole timeline: a value of another question
        # that valid time orders with it (it starts before or after) still ends or is ended there
        # (time is the world's, not the inquiry's); one of the same period is a contradiction in
        # another question, refused (contradicts_elsewhere) rather than left overlapping it
        alive = {
            c.key
            for c in candidates
            if c.key in alive
            and (
                (c.question or questions.get(c.key)) == job.inquiry
                or job.in_timeline(c.key)
                or job.time_case(c.key) == validity.SAME_PERIOD
            )
        }
    job.narrowed = narrow(job, alive, questions)
    if job.request.record or not job.narrowed.candidates:
        await batch.home()
    await judge_batch_facts_by_cardinality(job)
    if not job.records:
        return
    if job.inquiry is not None:
        contradicts_elsewhere(job)
    for key, _, _ in job.verdicts:
        if key not in view.nodes:  # pinned to an earlier line's key that recorded nothing
            raise InputError(f"--target {key!r}: no evidence with that key in this data root", field="target")
    r = job.request
    question = job.question
    if question is None:
        stored_questions = batch.questions or []
        raise InputError(
            "--record: there is no question to record the fact in "
            + (
                f"({len(stored_questions)} questions are stored, no default, and no stored claim is near the "
                "fact): name its question with --inquiry KEY (or a stored hypothesis with --supports or --refutes)"
                if stored_questions
                else "(nothing is loaded yet): load an investigation first, or name a stored hypothesis "
                "with --supports or --refutes"
            ),
            field="record",
        )
    new_node = Node(
        job.new_key,
        "evidence",
        question=question,
        text=job.fact,
        weight=0.5,
        valid_from=r.valid_from,
        valid_to=r.valid_to,
        stated_to=r.valid_to,
    )
    # who wins each contradiction, and the trust a source named for the first time is registered with
    fact = NewFact(job.new_key, question, r.source, r.asserted_at, r.trust, r.policy)
    # the batch's earlier records are stored evidence for this fact: their sources and dates
    # decide as the store's would one revision at a time (read at the batch's start, they were not)
    read = batch.reconciliation.policy
    evidence: ChainMap[str, Mapping[str, Any]] = ChainMap(
        cast(MutableMapping[str, Mapping[str, Any]], batch.recorded_evidence),
        cast(MutableMapping[str, Mapping[str, Any]], read.evidence),
    )
    inputs = PolicyInputs(evidence, read.questions)
    decisions, job.registered_trust = decisions_for(
        inputs, fact, [k for k, _, _ in job.verdicts], batch.registered, today()
    )
    if job.registered_trust is not None and r.source is not None:  # only a named source is registered
        batch.registered[r.source] = job.registered_trust  # later facts of the batch know it
    # valid time first: a contradiction between facts true at different times is no revision
    stored = {
        k: (view.nodes[k].valid_from, view.nodes[k].valid_to) for k, _, _ in job.verdicts if k in view.nodes
    }
    timed = validity.sort_verdicts(job.verdicts, (r.valid_from, r.valid_to), stored)
    kept = timed["kept"]
    decisions = {k: d for k, d in decisions.items() if k in {v[0] for v in kept}}
    job.plan = plan = revision.begin(view, kept, batch.epoch, job.fact, new_node, decisions)
    plan.meta.fact_ends = dict(timed["ends"])  # what re-judging in time reads
    if r.hypothesis is not None:
        bear_on_hypothesis(job, r.hypothesis, plan)
    # a value already superseded in time that the fact contradicts for the same period
    validity.reopen(view, plan, kept, decisions, job.new_key)
    await restate_records(job, plan)
    batch.recorded[job.new_key] = recorded_props(job.new_key, job.fact, question, r.triple)
    batch.recorded_evidence[job.new_key] = evidence_props(
        job.new_key, job.fact, question, r.source, r.asserted_at, r.triple, trust=job.registered_trust
    )
    recorded = batch.recorded
    before = set(view.nodes)
    await rejudge_returning(
        batch.stores.store,
        view,
        plan,
        [(job.new_key, job.fact, job.request.triple)],
        use_llm=batch.options.use_llm,
        recorded=recorded,
        ghosts=batch.ghosts,
    )
    for key in view.nodes.keys() - before:  # values holding a slot, read in by the re-judging
        batch.original.setdefault(key, copy.copy(view.nodes[key]))
    # a timed value whose dispute this fact ends: its slot's timeline, for its place in it
    for key in await read_settling(batch.stores.store, view, plan, recorded=recorded):
        batch.original.setdefault(key, copy.copy(view.nodes[key]))
    # a timed value this fact finds never true: the values its start had ended, for their places,
    # and what their holding again may bring back (forgotten nodes resting on them, the log's memory)
    for key in await read_reopening(batch.stores.store, view, plan, recorded=recorded):
        batch.original.setdefault(key, copy.copy(view.nodes[key]))
    if plan.meta.reopening:
        before = set(view.nodes)
        more = await extend_view(batch.stores, view, sorted(plan.meta.reopening), force=True)
        for key in view.nodes.keys() - before:
            if key in more.tombstones:
                batch.ghosts.setdefault(key, more.tombstones[key])
            else:
                batch.original.setdefault(key, copy.copy(view.nodes[key]))
        if not batch.memory_from_log:
            batch.memory = more.memory.then(batch.memory) if batch.memory is not None else more.memory
            batch.memory_from_log = True
    # nodes forgotten by earlier facts of this batch are ghosts too (they may come back)
    ghosts = set(batch.ghosts) | set(batch.forgotten_nodes)
    revision.propagate_refutation(view, plan, batch.memory, ghosts)
    if timed["cases"]:
        plan.meta.validity = dict(timed["cases"])
        note = validity.untimed_note(job.new_key, (r.valid_from, r.valid_to), stored, timed["cases"])
        if note:
            plan.meta.validity_note = note
    # each value out of dispute takes its place in its timeline, then the fact, if it holds (the
    # later of two ends of one value is no end: a value the fact ends at its start that ended
    # earlier, at the start of a value it precedes, keeps the earlier end)
    validity.place_settled(view, plan, ghosts)
    validity.place(view, plan, timed, job.new_key, ghosts)
    validity.reopen_ended(view, plan, ghosts)
    batch.restored.update(plan.restored)
    note_returned(batch, [*(c.key for c in plan.changes), *plan.restored])


async def restate_records(job: FactJob, plan: Plan) -> None:
    """The fact asserted again takes the place of its earlier records that hold no more
    (core.revision.restate): its text's keys (``KEY``, ``KEY_2``, ...), the stored evidence
    claiming it under other keys (``job.same_claim``: an inquiry's loaded evidence, a fact given
    ``--key``) and the batch's earlier lines claiming it. Each is found by key or by its slot,
    never by what the view happens to hold, so a batch takes the places its facts take one at a
    time; those stored out of the view are read into it first, with their before-images kept as
    the rest of the view's are."""
    batch = job.batch
    claim = claim_text(job.fact)
    records = [*job.repeats, *job.same_claim, *batch.recorded_claims.get(claim, ())]
    batch.recorded_claims.setdefault(claim, []).append(job.new_key)
    if not records:
        return
    view = batch.belief_view
    missing = [k for k in dict.fromkeys(records) if k not in view.nodes]
    if missing:
        before = set(view.nodes)
        await merged(view, await batch.stores.store.affected_view([node_id("evidence", k) for k in missing]))
        for key in view.nodes:
            if key not in before:
                batch.original.setdefault(key, copy.copy(view.nodes[key]))
    revision.restate(view, plan, records)


def contradicts_elsewhere(job: FactJob) -> None:
    """A fact joins the question of what it contradicts: one naming another question is refused
    (a value of another question that valid time orders with the fact is no contradiction)."""
    found = job.inquiry
    other = [
        c
        for c in (job.narrowed.acting if job.narrowed else [])
        if c.question and c.question != found and not job.in_timeline(c.key)
    ]
    if other:
        raise InputError(
            f"--inquiry {found!r}: the fact contradicts {other[0].key}, evidence of question {other[0].question!r}, "
            f"and a fact joins the question of what it contradicts: leave --inquiry out (it joins "
            f"{other[0].question!r})",
            field="inquiry",
        )


def bear_on_hypothesis(job: FactJob, hypothesis: tuple[str, str, float], plan: Plan) -> None:
    """The caller's ``supports``/``refutes`` H (``hypothesis``: the request's (kind, key,
    weight)): an edge from the new evidence to H, with its weight, written with the fact's
    ``plan`` (H must be a hypothesis of the fact's question)."""
    kind, key, weight = hypothesis
    view = job.batch.belief_view
    node = view.nodes.get(key)
    if node is None or node.kind != "hypothesis":
        raise InputError(f"--{kind} {key!r}: no hypothesis with that key in this data root", field=kind)
    if node.question != job.question:
        against = job.narrowed.acting[0].key if job.narrowed and job.narrowed.acting else None
        raise InputError(
            f"--{kind} {key!r}: that hypothesis belongs to question {node.question!r}, the fact to "
            f"{job.question!r}"
            + (f" (it contradicts {against})" if against else "")
            + "; one fact joins one question",
            field=kind,
        )
    edge = Edge(SUPPORTS if kind == "supports" else REFUTES, job.new_key, key, weight=weight)
    if edge not in view.out_edges(edge.src, edge.kind):
        view.add_edge(edge)
        plan.new_edges.append(edge)


async def propagate_refutation(batches, ctx=None):
    for batch in batches:
        for job in batch.jobs:
            if job.applies:
                start = time.perf_counter()
                try:
                    await begin_fact(job)
                except InputError as error:  # refused at its turn: the message names its line
                    batch.fail(_on_its_line(job, error))
                except BaseException as error:  # raised by the caller after the run
                    batch.fail(error)
                job.timings["propagate_refutation"] = round((time.perf_counter() - start) * 1000, 2)
            yield job
