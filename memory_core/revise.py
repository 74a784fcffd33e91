"""``revise``: one new fact through detection, the cascade and the write.

Input is validated first (:class:`InputError`, exit 2, nothing written). The
steps then run as cognee Tasks through ``run_custom_pipeline`` (see
:mod:`memory_core.tasks`). The result is the ``--json`` shape of the CLI.
"""

from __future__ import annotations

import time
from typing import Optional

from .detect import DEFAULT_LIMIT, Detection, gate1_threshold, pinned
from .embedder import fingerprint
from .investigation import InputError, check_key, check_text, check_value
from .judges import parse_triple

RESULT_KEYS = ("fact", "new_evidence", "judge", "candidates", "refuted", "superseded", "invalidated",
               "weakened", "promoted", "forgotten", "epoch", "elapsed_ms")


def validate(fact, triple, target, key, source, asserted_at) -> tuple:
    fact = check_text(fact, "fact", "text")
    parsed = None
    if triple is not None:
        try:
            parsed = tuple(check_text(p, "--triple", "part") for p in parse_triple(triple))
        except ValueError as error:
            raise InputError(str(error)) from None
    if target is not None:
        target = check_key(target, "--target")
    if key is not None:
        key = check_key(key, "--key")
    if source is not None:
        source = check_text(source, "--source", "source")
    if asserted_at is not None:
        asserted_at = check_value("date", asserted_at, "--asserted-at", "date")
    return fact, parsed, target, key, source, asserted_at


def empty_result(fact: str, new_key: Optional[str]) -> dict:
    result = {k: [] for k in RESULT_KEYS}
    result.update(fact=fact, new_evidence=new_key, judge="none", epoch=None, elapsed_ms=0.0)
    return result


async def target_distance(app, fact: str, key: str) -> Optional[float]:
    """Gate 1's distance from the fact to a pinned target (shown, not used)."""
    from .models import collection, node_id

    wanted = node_id("evidence", key)
    for hit in await app.store.search(collection("evidence"), fact, 50):
        if str(hit.id) == wanted:
            return float(hit.score)
    return None


async def revise(app, fact, triple=None, target=None, key=None, source=None, asserted_at=None,
                 dry_run=False, pin_reason="--target") -> dict:
    from .app import fact_key
    from .tasks import RevisionJob, revision_tasks, run_pipeline

    start = time.perf_counter()
    fact, parsed, target, key, source, asserted_at = validate(fact, triple, target, key, source, asserted_at)
    new_key = key or fact_key(fact)
    result = empty_result(fact, new_key)
    result["dry_run"] = dry_run
    existing = (await app.store.find_keys([new_key])).get(new_key)
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
            detection = await pinned(app.store, fact, target, pin_reason)
        except LookupError as error:
            raise InputError(str(error)) from None
        detection.candidates[0].distance = await target_distance(app, fact, target)
    threshold = gate1_threshold(fingerprint()["provider"])
    job = RevisionJob(app.store, app.journal, fact, parsed, new_key, app.journal.epoch() + 1, threshold,
                      DEFAULT_LIMIT, source_id=source, asserted_at=asserted_at, detection=detection,
                      dry_run=dry_run, hook=app.hook)
    use_llm = detection is None and _llm()
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


def finish(result: dict, start: float) -> dict:
    result["elapsed_ms"] = round((time.perf_counter() - start) * 1000, 1)
    return result


def _llm() -> bool:
    from .settings import llm_key_configured

    return llm_key_configured()
