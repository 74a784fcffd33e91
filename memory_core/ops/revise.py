"""``revise``: one new fact through detection, the cascade and the write.

Input is validated first (:class:`InputError`, exit 2, nothing written). The
steps then run as cognee Tasks through ``run_custom_pipeline`` (see
:mod:`memory_core.tasks`). The result is the ``--json`` shape of the CLI.
"""

from __future__ import annotations

import time
from typing import Optional

from memory_core.core import validity
from memory_core.core.reinstatement import kept_dead_note
from memory_core.core.errors import InputError
from memory_core.core.keys import normalise_key, resolve_words
from memory_core.core.requests import RevisionRequest, kept_for_decision, readable_key
from memory_core.core.results import RevisionResult
from memory_core.ops.resolve import empty_result, plan_fields
from memory_core.store import off_loop
from memory_core.store.stores import Stores
from memory_core.judging.llm import command_meter
from memory_core.tasks import FactJob, RevisionBatch, RevisionOptions, run_revision, threshold


async def revise(
    stores: Stores, request: RevisionRequest, dry_run: bool = False, pin_reason: str = "--target"
) -> RevisionResult:
    """One revision (``request`` already validated by :mod:`memory_core.core.requests`):
    a batch of one fact."""
    batch = RevisionBatch(stores, [request], options(stores, [request], "fact", dry_run, pin_reason))
    with command_meter(stores.settings):  # FALSIFY_LLM_BUDGET_USD caps this command's LLM spend
        await run_revision(stores, batch)
    return empty_root_note(stores, result_of(batch.jobs[0]))


NOTHING_LOADED = (
    "nothing loaded yet: load an investigation (or add beliefs) before revising; nothing recorded"
)


def empty_root_note(stores: Stores, result: RevisionResult) -> RevisionResult:
    """On a root where nothing was ever loaded, say so (not "no alive evidence within ...")."""
    if (
        not result.get("candidates")
        and result.get("epoch") is None
        and not result.get("dry_run")
        and stores.journal.epoch() == 0
    ):
        result["note"] = NOTHING_LOADED
    return result


def options(
    stores: Stores, requests: list[RevisionRequest], what: str, dry_run: bool, pin_reason: str = "--target"
) -> RevisionOptions:
    """What a revision of ``requests`` asks. A dry run is the whole revision -- detection,
    cascade, promotion, forgetting, on the in-memory view -- with the write left out
    (``preview``), so it reports exactly what the real run would apply (the pipeline's own
    ``dry_run`` stops after detection)."""
    use_llm = bool(stores.settings.llm_key) and any(r.target is None for r in requests)
    return RevisionOptions(
        what=what,
        preview=dry_run,
        pin_reason=pin_reason,
        use_llm=use_llm,
        threshold=threshold(stores.settings),
        limit=stores.settings.gate1_k,
    )


def is_preview(batch: RevisionBatch) -> bool:
    return not batch.options.writes


def result_of(job: FactJob) -> RevisionResult:
    """A fact's ``revise --json`` result (on every path: the CLI, the API, MCP, a host's
    Tasks), a hypothesis named with a fact left to decide said in its note."""
    return kept_for_decision(_result_of(job), job.request)


def _result_of(job: FactJob) -> RevisionResult:
    batch = job.batch
    fact, new_key = job.fact, job.new_key
    result = empty_result(fact, new_key)
    result["dry_run"] = is_preview(batch)
    # wall time of the whole revision (for a batch: of the batch, which is revised as one)
    result["elapsed_ms"] = round((time.perf_counter() - batch.started) * 1000, 1)
    # what the LLM judge cost for this fact (calls, tokens, USD as the endpoint reported; None: unknown)
    result["llm"] = (
        dict(job.detection.llm)
        if job.detection is not None
        else {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    )
    if job.already:
        result.update({"note": job.already, "already_applied": True, "new_evidence": new_key})
        return result
    d = job.narrowed if job.narrowed is not None else job.detection
    if d is None:
        result["note"] = "not revised"
        result["new_evidence"] = None
        return result
    result.update(
        {
            "judge": d.judge,
            "candidates": [c.as_dict() for c in d.candidates],
            "threshold": batch.options.threshold,
            "timings": dict(job.timings),
        }
    )
    if d.judge == "pinned":
        result["note"] = (
            f"judge pinned by {batch.options.pin_reason}: {job.request.target} taken as contradicted, gates skipped"
        )
    plan = job.plan
    if d.undecided and not d.acting and d.judge != "pinned" and not job.request.record and plan is None:
        # offline (no judge could decide, nothing recorded): the caller judges gate 1's ranked candidates
        # and revises again with target=KEY for the one the fact contradicts, or record=True if none
        result["to_decide"] = [c.key for c in d.candidates if c.key in set(d.undecided)]
    if batch.options.dry_run or (is_preview(batch) and plan is None):
        result["note"] = (d.note + "; " if d.note else "") + "dry run: nothing changed"
        result["new_evidence"] = None
        return result
    if plan is None:
        recorded = "" if "nothing is recorded" in d.note else "nothing recorded"  # said once
        questions = batch.questions or []
        if not d.candidates and len(questions) > 1:
            recorded += (
                f": {len(questions)} questions are stored and none is this root's default; name the "
                "question the fact belongs to (--inquiry KEY; stored: " + ", ".join(questions) + "), or a "
                "stored hypothesis it bears on (--supports or --refutes H)"
            )
        result["note"] = "; ".join(filter(None, [d.note, recorded]))
        result["new_evidence"] = None
        return result
    # the recorded fact's question (a revision's plan always has its new node)
    question = plan.new_node.question if plan.new_node is not None else None
    result.update(
        {
            "refuted": plan.refuted,
            "superseded": plan.superseded,
            "invalidated": plan.invalidated,
            "weakened": plan.weakened,
            "promoted": plan.promoted,
            "forgotten": list(plan.forgotten),
            "epoch": plan.epoch,
            "question": question,
        }
    )
    result.update(plan_fields(plan))
    if job.request.record and not d.acting:
        compared = [c.key for c in d.candidates]
        result["note"] = (
            f"recorded as {new_key} by the caller's decision (--record): it contradicts none of "
            + (", ".join(compared) if compared else "the stored evidence (no candidate was near)")
        )
    elif not d.candidates:
        result["note"] = f"{d.note}; the fact is recorded as {new_key} in question {question}"
    elif not d.acting:
        relations = sorted({c.relation for c in d.candidates if c.relation})
        far = [c.key for c in d.candidates if c.relation is None]  # undecided, none near (may_record)
        result["note"] = (
            f"no contradiction (verdicts: {', '.join(relations)}); the fact is recorded as {new_key}"
            + (f"; not judged (far from the fact): {', '.join(far)}" if far else "")
        )
    elif d.undecided and d.judge != "pinned":
        result["note"] = d.note
    # the fact was recorded with candidates of its question no judge could decide: if it contradicts
    # one after all, the caller decides that between the two stored facts
    open_ = [c.key for c in d.candidates if c.key in set(d.undecided) and c.question == question]
    if open_ and d.judge != "pinned" and not job.request.record:
        hint = (
            f"if the fact contradicts {'one of them' if len(open_) > 1 else open_[0]} after all: "
            + resolve_words("KEY" if len(open_) > 1 else open_[0], new_key)
        )
        result["note"] = "; ".join(filter(None, [result.get("note"), hint]))
    bearing = [e for e in plan.new_edges if e.src == new_key and e.kind in ("supports", "refutes")]
    if bearing:
        result["edges_added"] = [f"{e.kind} {e.src} -> {e.dst}" for e in bearing]
        said = "; ".join(f"it {e.kind} {e.dst} (weight {e.weight:g})" for e in bearing)
        result["note"] = "; ".join(filter(None, [result.get("note"), said]))
    if plan.meta.validity:
        # how valid time read each judged contradiction (core.validity: disjoint, ends_stored, ...)
        result["validity"] = dict(plan.meta.validity)
        if plan.meta.validity_note:  # one side timed, the other not: which rule applied, and why
            result["note"] = "; ".join(filter(None, [result.get("note"), plan.meta.validity_note]))
    spans = intervals(job, plan)
    if spans:
        result["intervals"] = spans
    kept = plan.kept_dead()
    unjudged = sorted(plan.meta.reinstate_notes)
    if kept or unjudged:
        result["not_reinstated"] = [c.key for c in kept]
        stays = ([kept_dead_note([(c.key, c.detail) for c in kept], "the new fact")] if kept else []) + (
            [f"{', '.join(unjudged)} reinstated without being re-judged (no judge could decide)"]
            if unjudged
            else []
        )
        result["note"] = "; ".join(([result["note"]] if result.get("note") else []) + stays)
    if plan.meta.restated:
        # the same fact asserted again: its earlier records that hold no more stay dead
        result["restated"] = list(plan.meta.restated)
        many = len(plan.meta.restated) > 1
        took = (
            f"the same fact asserted again: {new_key} takes the place of its earlier record"
            f"{'s' if many else ''} {', '.join(plan.meta.restated)}, which stay{'' if many else 's'} dead"
        )
        result["note"] = "; ".join(filter(None, [result.get("note"), took]))
    if is_preview(batch):
        result["note"] = (
            result["note"] + "; " if result.get("note") else ""
        ) + f"dry run: nothing changed (this is what the revision would apply as epoch {plan.epoch})"
        result["preview"] = {"new_evidence": new_key, "epoch": plan.epoch}  # what the real run would record
        result["new_evidence"] = None
        result["epoch"] = None
    return result


def intervals(job, plan) -> dict:
    """The valid time this revision gives: the new fact's interval (when it has one) and
    every node whose ``valid_to`` it changes (``was``: its ``valid_to`` before), each as this
    change left it (its own after-images: a later fact of the same batch may move it again)."""
    view = job.batch.view
    spans = {}
    node = view.nodes.get(job.new_key) if view is not None else None
    if node is not None:
        # the fact's end as this change set it: the request's, unless its place in time moved it
        set_to = [c.after["valid_to"] for c in plan.changes if c.key == job.new_key and "valid_to" in c.after]
        valid_to = set_to[-1] if set_to else job.request.valid_to
        if node.valid_from or valid_to:
            spans[job.new_key] = {"valid_from": node.valid_from, "valid_to": valid_to}
    if view is not None:
        spans.update(validity.changed_intervals(view, plan, skip=[job.new_key]))
    return spans


async def preflight(stores: Stores, requests: list[RevisionRequest], what: str) -> None:
    """Check many requests against the data root before anything is revised: every
    target names stored evidence (or the key of an earlier line), and no line's key is
    already used by another node or by another line. What is pure over the requests runs in a
    worker thread for a large batch (:mod:`memory_core.store.off_loop`)."""
    keys, facts, wanted = await off_loop.run(_lines, requests, size=len(requests))
    stored = await stores.store.find_keys(wanted)
    await off_loop.run(_check_lines, requests, what, keys, facts, stored, size=len(requests))


def _lines(requests: list[RevisionRequest]) -> tuple[dict, dict, list[str]]:
    """Each line's key and fact (spaces collapsed), and the keys to look up (its key, its target)."""
    keys = {r.line: r.new_key for r in requests}
    facts = {r.line: " ".join(r.fact.split()) for r in requests}
    wanted = set(keys.values()) | {r.target for r in requests if r.target}
    return keys, facts, sorted(wanted)


def _check_lines(requests: list[RevisionRequest], what: str, keys: dict, facts: dict, stored: dict) -> None:
    """:func:`preflight`'s checks of each line against what is stored and the lines before it."""
    earlier: dict[str, Optional[int]] = {}  # normalised key -> the first line that uses it (None: unnumbered)
    for request in requests:
        line, key = request.line, keys[request.line]
        if request.target:
            props = stored.get(request.target)
            if normalise_key(request.target) not in earlier and (
                props is None or props.get("type") != "Evidence"
            ):
                raise InputError(
                    f"{what} line {line}: --target {request.target!r}: no evidence with that key in this "
                    "data root or on an earlier line; nothing was revised",
                    field="target",
                )
        norm = normalise_key(key)
        if request.key is None or request.key == readable_key(request.fact):
            # a key derived from the fact's text that another fact holds (an earlier line's given
            # key, a stored fact differing in case) moves on to the next free one, as one revision
            # at a time does (tasks.detect_contradictions.place_repeats)
            earlier.setdefault(norm, line)
            continue
        if norm in earlier:
            if facts[earlier[norm]] != facts[line]:
                raise InputError(
                    f"{what} line {line}: key {key!r} is also the key of line {earlier[norm]} (another fact); "
                    "nothing was revised",
                    field="key",
                )
            continue  # the same fact again: recorded once, then "already recorded"
        props = stored.get(key)
        if props is not None and not (
            props.get("type") == "Evidence" and " ".join(props.get("claim", "").split()) == facts[line]
        ):
            raise InputError(
                f"{what} line {line}: key {key!r} is already used by another node; nothing was revised",
                field="key",
            )
        earlier[norm] = line


def _results(batch: RevisionBatch) -> list[RevisionResult]:
    return [result_of(job) for job in batch.jobs if job.applies]


async def revise_many(
    stores: Stores,
    requests: list[RevisionRequest],
    what: str = "facts",
    dry_run: bool = False,
    on_result=None,
) -> list[RevisionResult]:
    """Many facts as ONE batch: validated and checked against the root as a whole first,
    detected together, applied fact by fact on one in-memory view (each sees the effects
    of the ones before it), written as one journalled intent (one epoch, undone as a
    whole); one result per fact, in order. ``on_result(result)`` is called for each."""
    await preflight(stores, requests, what)
    batch = RevisionBatch(stores, list(requests), options(stores, requests, what, dry_run))
    with command_meter(stores.settings):  # FALSIFY_LLM_BUDGET_USD caps this command's LLM spend
        await run_revision(stores, batch)
    # one result per fact, pure over the batch: in a worker thread for a large one
    results = await off_loop.run(_results, batch, size=len(batch.jobs))
    if on_result is not None:
        for result in results:
            on_result(result)
    stop = batch.stop
    if stop is not None and stop.at is not None:  # a judge failed part-way: the lines before it are applied
        error, stopped = stop.error, stop.at
        line = batch.jobs[stopped].request.line or stopped + 1
        done = (
            f"the lines before it were applied (epoch {batch.epoch})"
            if batch.entry is not None and not dry_run
            else "no line before it changed anything"
        )
        raise type(error)(
            f"{what} line {line}: {error} [{done}; this line and the ones after it were not applied]"
        )
    return results
