"""``revise``: one new fact through detection, the cascade and the write.

Input is validated first (:class:`InputError`, exit 2, nothing written). The
steps then run as cognee Tasks through ``run_custom_pipeline`` (see
:mod:`memory_core.tasks.revision_tasks`). The result is the ``--json`` shape of the CLI.
"""

from __future__ import annotations

import time
from typing import Optional

from memory_core.core.errors import InputError, JudgeError
from memory_core.core.keys import normalise_key
from memory_core.core.requests import RevisionRequest, fact_key
from memory_core.judging.detect import DEFAULT_LIMIT, Detection, gate1_threshold, pinned
from memory_core.ops.stores import Stores
from memory_core.store.embedder import fingerprint
from memory_core.core.identity import collection, node_id
from memory_core.store.settings import llm_key_configured
from memory_core.tasks.revision_tasks import RevisionJob, revision_tasks, run_pipeline

RESULT_KEYS = ("fact", "new_evidence", "judge", "candidates", "refuted", "superseded", "invalidated",
               "weakened", "promoted", "forgotten", "epoch", "elapsed_ms")


def empty_result(fact: str, new_key: Optional[str]) -> dict:
    result = {k: [] for k in RESULT_KEYS}
    result.update(fact=fact, new_evidence=new_key, judge="none", epoch=None, elapsed_ms=0.0)
    return result


async def target_distance(stores: Stores, fact: str, key: str) -> Optional[float]:
    """Gate 1's distance from the fact to a pinned target (shown, not used)."""
    wanted = node_id("evidence", key)
    for hit in await stores.store.search(collection("evidence"), fact, 50):
        if str(hit.id) == wanted:
            return float(hit.score)
    return None


async def revise(stores: Stores, request: RevisionRequest, dry_run: bool = False, pin_reason: str = "--target") -> dict:
    """One revision (``request`` already validated by :mod:`memory_core.core.requests`)."""
    start = time.perf_counter()
    fact, target = request.fact, request.target
    new_key = request.new_key
    result = empty_result(fact, new_key)
    result["dry_run"] = dry_run
    existing = (await stores.store.find_keys([new_key])).get(new_key)
    if existing is not None:
        if existing.get("type") == "Evidence" and " ".join(existing.get("claim", "").split()) == " ".join(fact.split()):
            result["note"] = f"already recorded as {new_key} (epoch {existing.get('truth_epoch')}); nothing changed"
            result["already_applied"] = True
            result["new_evidence"] = new_key
            return finish(result, start)
        raise InputError(f"--key {new_key!r} is already used by another node")
    detection: Optional[Detection] = None
    if target is not None:
        try:
            detection = await pinned(stores.store, fact, target, pin_reason)
        except LookupError as error:
            raise InputError(str(error)) from None
        detection.candidates[0].distance = await target_distance(stores, fact, target)
    threshold = gate1_threshold(fingerprint()["provider"])
    job = RevisionJob(stores.store, stores.journal, fact, request.triple, new_key, stores.journal.epoch() + 1, threshold,
                      DEFAULT_LIMIT, source_id=request.source, asserted_at=request.asserted_at, detection=detection,
                      dry_run=dry_run, hook=stores.hook)
    use_llm = detection is None and llm_key_configured()
    tasks = revision_tasks(use_llm)
    await run_pipeline(tasks[:1] if dry_run else tasks, [job], "falsify_revision")
    d = job.detection
    result.update(judge=d.judge, candidates=[c.as_dict() for c in d.candidates], threshold=threshold,
                  timings=job.timings)
    if d.judge == "pinned":
        result["note"] = f"judge pinned by {pin_reason}: {target} taken as contradicted, gates skipped"
    if dry_run:
        result["note"] = (d.note + "; " if d.note else "") + "dry run: nothing changed"
        result["new_evidence"] = None
        return finish(result, start)
    if not job.records:
        result["note"] = d.note + ("; " if d.note else "") + "nothing recorded"
        result["new_evidence"] = None
        return finish(result, start)
    plan = job.plan
    result.update(refuted=plan.refuted, superseded=plan.superseded, invalidated=plan.invalidated,
                  weakened=plan.weakened, promoted=plan.promoted, forgotten=list(plan.forgotten), epoch=plan.epoch,
                  question=plan.new_node.question)
    if not d.acting:
        relations = sorted({c.relation for c in d.candidates})
        result["note"] = f"no contradiction (verdicts: {', '.join(relations)}); the fact is recorded as {new_key}"
    elif d.undecided and d.judge != "pinned":
        result["note"] = d.note
    return finish(result, start)


async def preflight(stores: Stores, requests: list[RevisionRequest], what: str) -> None:
    """Check many requests against the data root before anything is revised: every
    target names stored evidence (or the key of an earlier line), and no line's key is
    already used by another node or by another line."""
    keys = {r.line: r.new_key for r in requests}
    facts = {r.line: " ".join(r.fact.split()) for r in requests}
    wanted = set(keys.values()) | {r.target for r in requests if r.target}
    stored = await stores.store.find_keys(sorted(wanted))
    earlier: dict[str, int] = {}  # normalised key -> the first line that uses it
    for request in requests:
        line, key = request.line, keys[request.line]
        if request.target:
            props = stored.get(request.target)
            if normalise_key(request.target) not in earlier and (props is None or props.get("type") != "Evidence"):
                raise InputError(f"{what} line {line}: --target {request.target!r}: no evidence with that key in this "
                                 "data root or on an earlier line; nothing was revised")
        norm = normalise_key(key)
        if norm in earlier:
            if facts[earlier[norm]] != facts[line]:
                raise InputError(f"{what} line {line}: key {key!r} is also the key of line {earlier[norm]} (another fact); "
                                 "nothing was revised")
            continue  # the same fact again: recorded once, then "already recorded"
        props = stored.get(key)
        if props is not None and not (props.get("type") == "Evidence" and
                                      " ".join(props.get("claim", "").split()) == facts[line]):
            raise InputError(f"{what} line {line}: key {key!r} is already used by another node; nothing was revised")
        earlier[norm] = line


async def revise_many(stores: Stores, requests: list[RevisionRequest], what: str = "facts", dry_run: bool = False,
                      on_result=None) -> list[dict]:
    """Many facts, validated and checked against the root as a whole first, then applied
    in order (each sees the effects of the ones before it); one result per fact.
    ``on_result(result)`` is called as each one lands (progress)."""
    await preflight(stores, requests, what)
    results: list[dict] = []
    applied: list[str] = []
    for request in requests:
        try:
            result = await revise(stores, request, dry_run=dry_run)
        except (InputError, JudgeError) as error:
            done = (f"the lines before it were applied (epochs {', '.join(applied)})" if applied
                    else "no line before it changed anything")
            raise type(error)(f"{what} line {request.line}: {error} [{done}; this line and the ones after it "
                              "were not applied]") from None
        if result.get("epoch") is not None:
            applied.append(str(result["epoch"]))
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def finish(result: dict, start: float) -> dict:
    result["elapsed_ms"] = round((time.perf_counter() - start) * 1000, 1)
    return result
