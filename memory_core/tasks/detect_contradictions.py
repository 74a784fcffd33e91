"""Task 1: detection for the whole batch, a thin Task over :mod:`memory_core.judging`.

Gate 1 (``judging.retrieval.gate1_many``: vector + lexical, fused, top k, plus the
subject+predicate lookup) runs once for every fact of the batch; unless it is a dry run,
the facts before each one count as stored candidates too (``judging.retrieval.EarlierFacts``);
then the judges (``judging.chain.judge_cases``). What stays here is the Task's part: the
revision lock, the early detection that overlaps cognee's runner start-up, pins, and which
candidates still count when each fact's turn comes (:func:`narrow`): only evidence alive at
that point acts, exactly as a one-at-a-time revision would see it. A judge that fails on
fact *k* stops the batch there: facts before it are still applied.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from typing import Iterable, Optional

from memory_core.core.errors import InputError
from memory_core.core import validity
from memory_core.core.keys import claim_text, normalise_key, resolve_words, sp_key
from memory_core.core.requests import fact_key, readable_key
from memory_core.core.vocabulary import SUPERSEDED
from memory_core.judging.chain import Case, judge_cases
from memory_core.judging.detect import (
    CALLER,
    Candidate,
    Detection,
    candidates_from,
    decided_by_caller,
    earlier_candidates,
    finish_detection,
    pinned,
    undecided_note,
)
from memory_core.judging.retrieval import LIVE, EarlierFacts, Query, cosine_distance, gate1_many
from memory_core.judging.llm import Usage
from memory_core.core.identity import collection, node_id
from memory_core.store import off_loop
from memory_core.store.belief_store import state_of
from memory_core.store.forgotten import forgotten_index, not_stored
from memory_core.store.stores import Stores
from memory_core.tasks.batch import FactJob, RevisionBatch, RevisionOptions, Stop, as_requests, named_inquiry
from memory_core.tasks.timing import timed


def make_detect_task(stores: Stores, options: RevisionOptions):
    """The first task: turns the pipeline's data item (a fact, a dict, a list of them, or a
    prepared :class:`RevisionBatch`) into a batch, takes the revision lock, and detects.
    A batch built here from a host's data goes by ``options`` (``host`` set)."""
    hosted = replace(options, host=True)

    async def detect_contradictions(items, ctx=None):
        batches = []
        for item in items:
            if isinstance(item, RevisionBatch):
                batch = item
            else:
                try:
                    batch = RevisionBatch(stores, as_requests(item), hosted)
                except InputError as error:
                    batch = RevisionBatch(stores, [], hosted, stop=Stop(error))
            batches.append(batch)
        for batch in batches:
            if not batch.failed:
                await batch.acquire()
        await _timed_detect([b for b in batches if not b.failed and not await early_detection_holds(b)])
        for batch in batches:
            if batch.options.dry_run or batch.failed and not batch.jobs:
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
    if batch.failed or not batch.jobs or batch.detecting is not None or stores.revision.locked():
        return
    turn = await stores.revision.take()
    try:
        epoch = await asyncio.to_thread(stores.journal.epoch)  # a query on PostgreSQL: off the loop
    except BaseException:
        stores.revision.release()
        raise

    async def early():
        start = time.perf_counter()
        error = None
        try:
            await detect_batch(batch)
        except Exception as caught:  # the task re-raises it if the result holds
            error = caught
        finally:
            stores.revision.release()
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
    if turn is None or batch.turn != turn + 1 or await asyncio.to_thread(batch.stores.journal.epoch) != epoch:
        batch.reset_detection()
        EARLY["redone"] += 1
        return False
    EARLY["used"] += 1
    if error is not None:
        batch.fail(error)
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


def reserve_keys(batch: RevisionBatch) -> None:
    """A forgotten node's key stays reserved: a reinstatement may bring that node back, and
    ``explain`` tells its story under it. A key given for a new fact that names one is refused
    (InputError, exit 2, nothing written); a key derived from the fact's text (none given, or
    the viewer's readable one) moves on to the first free ``KEY_2``, ``KEY_3``, ... (the same text keeps finding it)."""
    gone = forgotten_index(batch.stores.journal).gone
    if not gone:
        return
    for job in batch.jobs:
        norm = normalise_key(job.new_key)
        if norm not in gone:
            continue
        if job.request.key is not None and job.request.key != readable_key(job.request.fact):
            tomb = gone[norm]
            raise InputError(
                f"{line_of(batch, job)}--key {job.new_key!r} is reserved: it names a forgotten "
                f"{tomb.get('kind', 'node')} ({tomb.get('key', job.new_key)}; explain says when and "
                "why); a forgotten key is never given to another node; choose another key; "
                "nothing was revised"
            )
        n = 2
        while normalise_key(f"{job.new_key}_{n}") in gone:
            n += 1
        job.request = replace(job.request, key=f"{job.new_key}_{n}")
    batch.keys_changed()


def _same_claim(props: dict, fact: str) -> bool:
    """Whether stored node ``props`` is evidence recording ``fact`` (spacing aside)."""
    return props.get("type") == "Evidence" and " ".join(props.get("claim", "").split()) == " ".join(
        fact.split()
    )


def record_holds(state: str, valid_to: Optional[str], start: Optional[str], end: Optional[str]) -> bool:
    """Whether a record of a fact holds for the fact asserted again (valid from ``start`` until
    ``end``, each None if not given): the record is alive, disputed, or superseded in time (it
    was true for its period), and it did not end by ``start`` (a fact true again from a date
    after its record's period ended is a new period of it). A fact asserted with no date at all
    says it holds now: a record whose period has an end does not hold it (Porto from 2015,
    Berlin from 2018, then "Porto" undated is Porto again, not Porto's 2015-2018 period). A
    refuted, invalidated or superseded record holds no more: the same fact asserted again is
    news, not a repeat."""
    if valid_to is not None:
        if start is None and end is None:
            return False
        if start is not None and validity.moment(start) >= validity.moment(valid_to):
            return False
    return state in LIVE or (state == SUPERSEDED and valid_to is not None)


def _no_more(state: str, valid_to: Optional[str]) -> str:
    """Why a record holds no more for a fact asserted again, in words (for the note): a record
    that was true has a period that ended, one refuted or invalidated is its state."""
    ended = valid_to is not None and (state in LIVE or state == SUPERSEDED)
    return f"{state}, its period ended {valid_to}" if ended else state


def _derived(request) -> bool:
    """Whether a request's key comes from its text (none given, or the viewer's readable one)."""
    return request.key is None or request.key == readable_key(request.fact)


def _as_repeat(props: dict, request) -> tuple[bool, Optional[int]]:
    """A stored record of a fact asserted again, as ``job.repeats`` holds it: whether it holds for
    the fact (:func:`record_holds`, with the fact's valid time), and the epoch it was recorded at."""
    held = record_holds(state_of(props), props.get("valid_to"), request.valid_from, request.valid_to)
    return held, props.get("truth_epoch")


def _other_form(request) -> str:
    """The other form of a derived key's base: the readable key for the API's hash, and back."""
    return readable_key(request.fact) if request.key is None else fact_key(request.fact)


async def _other_form_records(store, job, base: str, found: dict, gone) -> None:
    """The records of ``job``'s text under the other form of its key (``base``, ``base_2``, ...;
    a forgotten key stays reserved) into ``job.repeats``: whether each holds for the fact, and
    its epoch."""
    n, key = 1, base
    while True:
        if normalise_key(key) not in gone:
            props = found[key] if key in found else (await store.find_keys([key])).get(key)
            if props is None:
                return
            if _same_claim(props, job.fact):
                job.repeats[key] = _as_repeat(props, job.request)
        n += 1
        key = f"{base}_{n}"


async def place_repeats(batch: RevisionBatch) -> dict[str, dict]:
    """A fact recorded already is recorded once, but only while its record holds: the same fact
    asserted after its record was refuted (a value that came back: Porto, then Berlin, then
    Porto again) is a new assertion, revised as any new fact is (AGM's success: after revising
    by a fact, the fact is believed, unless the policy prefers what contradicts it). Its key is
    the next free one after its text's (``KEY_2``, ``KEY_3``, ...; a forgotten key stays
    reserved), so the same text keeps finding its records. A fact repeating a record that
    holds is "already recorded" when nothing before it in the batch could have changed that;
    a later line repeating a stored record, or an earlier line of its own batch, is decided at
    its turn (``job.repeats``, read by ``begin_fact``). A key given explicitly names its record:
    it stays "already recorded" when that record holds no more (the note says how to assert it
    again). Returns the stored nodes of the keys asked (key -> props)."""
    store, jobs = batch.stores.store, batch.jobs
    gone = forgotten_index(batch.stores.journal).gone
    stored = await store.find_keys(sorted({j.new_key for j in jobs}))
    taken = {normalise_key(j.new_key) for j in jobs if not _derived(j.request)}
    by_text: dict[str, list[str]] = {}  # a fact's text -> the keys earlier lines of the batch took
    changes = False  # whether a line before this one may change what holds
    # a text's keys come in two forms (the API's hash, the viewer's readable key): the records
    # under the other form are the fact's records too (one read for the batch; a walk further
    # only where the other form holds its text)
    other_form = {j.index: _other_form(j.request) for j in jobs if _derived(j.request)}
    alt = await store.find_keys(sorted(set(other_form.values()))) if other_form else {}
    for job in jobs:
        if job.index in other_form and _same_claim(alt.get(other_form[job.index]) or {}, job.fact):
            await _other_form_records(store, job, other_form[job.index], alt, gone)
        text, key = " ".join(job.fact.split()), job.new_key
        props = stored.get(key)
        same = props is not None and _same_claim(props, job.fact)
        start, end = job.request.valid_from, job.request.valid_to
        holds = (
            props is not None and same and record_holds(state_of(props), props.get("valid_to"), start, end)
        )
        if not _derived(job.request):
            if props is not None and same and not holds:
                job.already = (
                    f"already recorded as {key} (epoch {props.get('truth_epoch')}), which holds no more "
                    f"({_no_more(state_of(props), props.get('valid_to'))}); nothing changed: a fact "
                    "asserted again is a new record: revise it without a key to assert it again"
                )
            elif not holds:
                changes = True
            continue
        if (
            text not in by_text
            and normalise_key(key) not in gone
            and normalise_key(key) not in taken  # another line's given key: the next free one
            and (props is None or (holds and not changes))
        ):
            changes = changes or props is None  # a new fact (a repeat of what holds changes nothing)
            by_text[text] = [key]
            taken.add(normalise_key(key))
            continue
        # the records of its text, in key order, and the first free key after them
        base = fact_key(job.fact) if job.request.key is None else readable_key(job.fact)
        earlier = set(by_text.get(text, ()))
        for k in earlier:  # an earlier line's record of its text, whatever the form of its key
            job.repeats.setdefault(k, (None, None))
        n, key = 1, base
        while True:
            norm = normalise_key(key)
            if key in earlier:
                job.repeats[key] = (None, None)
            elif norm not in gone and norm not in taken:
                found = stored[key] if key in stored else (await store.find_keys([key])).get(key)
                if found is None:
                    break
                if _same_claim(found, job.fact):
                    job.repeats[key] = _as_repeat(found, job.request)
                    stored[key] = found
            n += 1
            key = f"{base}_{n}"
        job.request = replace(job.request, key=key)
        by_text.setdefault(text, []).append(key)
        taken.add(normalise_key(key))
        changes = True
    batch.keys_changed()
    return stored


async def find_same_claims(batch: RevisionBatch) -> None:
    """Each new fact's stored evidence claiming its text under another key (an inquiry's loaded
    evidence, a fact given ``--key``, the other form of a derived key): read by its triple's
    subject and predicate, one query for the batch, so a batch finds what its facts one at a
    time find whatever its view holds. For a fact whose key is derived from its text they are
    its records (``job.repeats``: "already recorded" at its turn while one holds; with
    ``--inquiry``, only that question's); for a fact with a key of its own, records it may
    take the place of (``job.same_claim``). A fact without a triple finds its text's keys, in
    both forms, only (``place_repeats``)."""
    sps: dict[int, str] = {}
    for job in batch.jobs:
        triple = job.request.triple
        if not job.already and triple and (sp := sp_key(triple[0], triple[1])) is not None:
            sps[job.index] = sp
    if not sps:
        return
    by_claim: dict[tuple[str, str], list[dict]] = {}
    for props in await batch.stores.store.nodes_by_sps(sps.values()):
        if props.get("key") and props.get("name"):
            by_claim.setdefault((props["name"], claim_text(props.get("claim") or "")), []).append(props)
    for job in batch.jobs:
        if job.index not in sps:
            continue
        found = sorted(by_claim.get((sps[job.index], claim_text(job.fact)), []), key=lambda p: p["key"])
        inquiry = job.request.inquiry
        for props in found:
            key = props["key"]
            if key == job.new_key or key in job.repeats:
                continue
            if _derived(job.request) and (inquiry is None or props.get("question_key") == inquiry):
                # a record of the same claim is one of its records whatever its key (a key the
                # viewer derives, the caller's, an inquiry's): "already recorded" while it holds
                job.repeats[key] = _as_repeat(props, job.request)
            else:
                job.same_claim.append(key)


async def detect_batch(batch: RevisionBatch) -> None:
    store = batch.stores.store
    jobs = batch.jobs
    stored = await place_repeats(batch)
    await find_same_claims(batch)
    reserve_keys(batch)
    new_keys = {normalise_key(j.new_key) for j in jobs}
    for job in jobs:
        props = stored.get(job.new_key)
        if props is None or job.already:
            continue
        if _same_claim(props, job.fact):
            job.already = (
                f"already recorded as {job.new_key} (epoch {props.get('truth_epoch')}); nothing changed"
            )
        else:
            raise InputError(
                f"{line_of(batch, job)}--key {job.new_key!r} is already used by another node", field="key"
            )
    # a fact repeating a stored record that holds carries no decision that record does not hold
    # (refused, nothing written); a later line's repeat is decided at its turn, and so are its
    # decisions (refuse_repeat_decisions): an earlier line may end the record, and the fact
    # with its decision is then news
    repeating = [(j, j.new_key) for j in jobs if j.already and j.new_key in stored]
    await refuse_new_decisions_on_recorded(batch, repeating, stored)
    # a fact already recorded adds no node: its evidence is stored, and the facts after it compare
    # with it as with any stored evidence (gate 1 must not leave it out, and the batch's earlier
    # facts skip it as a candidate since it is stored), as one revision at a time would
    batch.keys_changed()
    exclude = set(batch.new_keys)
    await _hypotheses(batch)
    free = [j for j in jobs if not j.already and j.request.target is None]
    vectors = {}
    if free or (len(jobs) > 1 and not batch.options.dry_run):
        # embedded once: gate 1 searches with them, the batch compares its facts, the write reuses them
        embedded = await store.embed([j.fact for j in jobs])
        vectors = {j.index: v for j, v in zip(jobs, embedded)}
    pins = [j for j in jobs if not j.already and j.request.target is not None]
    for job in pins:
        job.detection = await detect_fact(batch, job, new_keys, exclude, vectors)
    if free:
        await judge_together(batch, free, exclude, vectors)
    if batch.stop is not None and (batch.stop.at == 0 or len(jobs) == 1):
        raise batch.stop.error


async def refuse_repeat_decisions(job: FactJob, key: str) -> None:
    """A batch line found at its turn to repeat record ``key`` that holds then carries no
    decision that record does not hold (:func:`refuse_new_decisions_on_recorded`, as one
    revision at a time refuses it): its record as it is in the batch's view (an earlier line's
    or a stored one collected), else as stored."""
    r = job.request
    if r.target is None and not r.hypothesis and r.inquiry is None and r.valid_from is None:
        return
    batch = job.batch
    node = batch.belief_view.nodes.get(key)
    if node is None:
        props = (await batch.stores.store.find_keys([key]))[key]
    else:
        props = {"valid_from": node.valid_from, "question_key": node.question, "truth_epoch": node.epoch}
    await refuse_new_decisions_on_recorded(batch, [(job, key)], {key: props})


async def refuse_new_decisions_on_recorded(
    batch: RevisionBatch, jobs: list[tuple[FactJob, str]], stored: dict
) -> None:
    """A fact already recorded comes again with a decision its record does not hold (``--target``
    E it neither supersedes nor disputes, ``--supports``/``--refutes`` H it has no edge to,
    ``--inquiry`` another question than its own, a ``--valid-from`` other than its own):
    repeating the fact changes nothing, so the decision would be dropped; refused instead (exit
    2, nothing written), naming the command that makes it about the recorded fact."""
    for job, key in jobs:
        props, start = stored[key], job.request.valid_from
        had_start = props.get("valid_from")
        if start is not None and (had_start is None or validity.moment(had_start) != validity.moment(start)):
            # a revision never moves a value's start (it only ends values), so the stored start
            # is the one the record gave: another one would be dropped without a word
            had = f"valid from {had_start}" if had_start else "with no valid_from"
            raise InputError(
                f"{line_of(batch, job)}the fact is already recorded as {key} (epoch "
                f"{props.get('truth_epoch')}) {had}, not from {start}; a fact is recorded once: to "
                "record it from that date, undo the change that recorded it and revise it again",
                field="valid_from",
            )
        home, named = props.get("question_key"), job.request.inquiry
        if named is not None and home and normalise_key(named) != normalise_key(home):
            raise InputError(
                f"{line_of(batch, job)}the fact is already recorded as {key} in question {home!r}, not "
                f"{named!r}; a fact is recorded once (a fragment loads evidence of another question with "
                "its own key)",
                field="inquiry",
            )
    asked = [(j, k) for j, k in jobs if j.request.target is not None or j.request.hypothesis]
    if not asked:
        return
    rows = await batch.stores.store.all_edges_of([node_id("evidence", k) for _, k in asked])
    linked = {frozenset((src, dst)) for src, dst, _, _ in rows}
    view = batch.view  # at its turn: edges an earlier line of the batch added (its own records)
    if view is not None:
        for _, k in asked:
            for e in view.out_edges(k) + view.in_edges(k):
                ends = [view.nodes.get(e.src), view.nodes.get(e.dst)]
                linked.add(frozenset(node_id(n.kind, n.key) for n in ends if n is not None))
    for job, key in asked:
        mine, r = node_id("evidence", key), job.request
        epoch = stored[key].get("truth_epoch")
        recorded = f"{line_of(batch, job)}the fact is already recorded as {key} (epoch {epoch})"
        if r.target is not None and frozenset((mine, node_id("evidence", r.target))) not in linked:
            raise InputError(
                f"{recorded} and does not contradict {r.target}; a fact is recorded once: to decide that "
                f"{key} contradicts {r.target}: {resolve_words(r.target, key)}",
                field="target",
            )
        if r.hypothesis:
            kind, hyp, _ = r.hypothesis
            if frozenset((mine, node_id("hypothesis", hyp))) not in linked:
                raise InputError(
                    f"{recorded} with no edge to {hyp}; a fact is recorded once: to add that it {kind} "
                    f'{hyp}, load a fragment with the edge {{"type": "{kind}", "from": "{key}", '
                    f'"to": "{hyp}"}}',
                    field=kind,
                )


async def _hypotheses(batch: RevisionBatch) -> None:
    """The hypotheses the caller named (``supports``/``refutes``): each must be a stored
    hypothesis; its question is where the fact is recorded."""
    asked = {
        job.index: job.request.hypothesis for job in batch.jobs if job.request.hypothesis and not job.already
    }
    if not asked:
        return
    found = await batch.stores.store.find_keys(sorted({h for _, h, _ in asked.values()}))
    for job in batch.jobs:
        if job.index not in asked:
            continue
        kind, key, _ = asked[job.index]
        props = found.get(key)
        if props is None or props.get("type") != "Hypothesis":
            raise InputError(
                f"{line_of(batch, job)}--{kind} {key!r}: no hypothesis with that key in this data root",
                field=kind,
            )
        job.hypothesis_question = props.get("question_key")


async def judge_together(batch: RevisionBatch, jobs: list[FactJob], exclude: set, vectors: dict) -> None:
    """Gate 1 for every free fact in one call (:func:`memory_core.judging.retrieval.gate1_many`:
    vector + lexical, fused, top k, plus the subject+predicate lookup), the batch's earlier
    facts added as candidates, then the judges (structured first, then one LLM call per fact,
    facts judged concurrently: :func:`memory_core.judging.chain.judge_cases`). A judge failure
    on fact *k* stops the batch there."""
    store = batch.stores.store
    scopes: dict[int, str] = {}
    if any(j.request.inquiry is not None for j in jobs):
        await batch.home()  # the stored questions: a fact naming its question is compared with its evidence
        scopes = {j.index: named_inquiry(j) for j in jobs if j.request.inquiry is not None}
    excluded = frozenset(exclude)
    queries = [
        Query(
            j.fact,
            j.request.triple,
            vectors.get(j.index),
            excluded,
            timeline=j.request.valid_from is not None,
            question=scopes.get(j.index),
        )
        for j in jobs
    ]
    found = await gate1_many(store, queries, batch.options.limit, batch.options.threshold)
    # pure over the batch's own facts and what gate 1 found: in a worker thread for a large batch
    # (each fact's distances to every fact before it)
    prepared = await off_loop.run(_with_earlier_facts, batch, jobs, found, vectors, size=len(batch.jobs))
    declared = await store.declared_predicates(p for _, _, props in prepared for p in props.values())
    cases = [
        Case(job.fact, job.request.triple, candidates, props, declared, settings=batch.stores.settings)
        for job, candidates, props in prepared
    ]
    stop = await judge_cases(cases, batch.options.use_llm)
    if stop is not None:
        batch.stop = Stop(stop[1], jobs[stop[0]].index)
    for (job, candidates, _), case in zip(prepared, cases):
        if job.applies:
            job.detection = finish_detection(candidates, batch.options.threshold, case.usage or Usage())
            if job.request.record:
                job.detection.judge = CALLER


def _with_earlier_facts(
    batch: RevisionBatch, jobs: list[FactJob], found: list, vectors: dict
) -> list[tuple[FactJob, list, dict]]:
    """Each free fact's candidates (gate 1's, then the batch's earlier facts near it, which count
    as stored for the ones after them; not in a dry run) with their props by key."""
    earlier = (
        EarlierFacts([(j.new_key, j.fact, j.request.triple, bool(j.already)) for j in batch.jobs], vectors)
        if len(batch.jobs) > 1 and not batch.options.dry_run
        else None
    )
    prepared = []
    for job, got in zip(jobs, found):
        candidates, props_by_key = candidates_from(got)
        if earlier is not None:
            extra, extra_props = earlier_candidates(
                earlier, job.index, batch.options.limit, batch.options.threshold
            )
            candidates += extra
            props_by_key.update(extra_props)
        if job.request.record:  # the caller decided: none of them is contradicted (no judge asked)
            decided_by_caller(candidates)
        prepared.append((job, candidates, props_by_key))
    return prepared


async def detect_fact(
    batch: RevisionBatch, job: FactJob, new_keys: set, exclude: set, vectors: dict
) -> Detection:
    store = batch.stores.store
    request = job.request
    earlier = [j for j in batch.jobs[: job.index] if not j.already] if not batch.options.dry_run else []
    if request.target is not None:
        mine = next((j for j in earlier if normalise_key(j.new_key) == normalise_key(request.target)), None)
        if mine is not None:
            verdict_text = f"pinned: {batch.options.pin_reason} names {mine.new_key}; gates skipped"
            cand = Candidate(mine.new_key, None, mine.fact, None, "contradicts", 1.0, verdict_text, "pinned")
            return Detection("pinned", [cand])
        try:
            detection = await pinned(store, request.fact, request.target, batch.options.pin_reason)
        except LookupError as error:
            said = str(error)
            if said.endswith("no evidence with that key in this data root"):  # forgotten, or never stored
                said = not_stored(batch.stores.journal, request.target, "--target", "evidence")
            raise InputError(f"{line_of(batch, job)}{said}", field="target") from None
        detection.candidates[0].distance = await _distance_to(
            store, request.fact, detection.candidates[0].key
        )
        return detection
    raise AssertionError("detect_fact is for pinned facts; free facts go through judge_together")


def _held_for_gate1(node, timeline: bool) -> bool:
    """Whether gate 1 would read ``node`` (``judging.retrieval.LIVE``, and for a timed fact the
    past values of a timeline too)."""
    return node.kind == "evidence" and (node.state in LIVE or (timeline and validity.past_value(node)))


def note_returned(batch: RevisionBatch, keys: Iterable[str]) -> None:
    """Remember, of the nodes a fact of the batch changed or restored (``keys``), the evidence
    that holds for gate 1 now and did not at the batch's start (:func:`compare_with_returned`
    reads them at each later fact's turn; most changes kill, and are not kept)."""
    view = batch.belief_view
    for key in keys:
        node, before = view.nodes.get(key), batch.original.get(key)
        if (
            node is not None
            and _held_for_gate1(node, True)
            and not (before is not None and _held_for_gate1(before, False))
        ):
            batch.came_back.add(key)


async def compare_with_returned(job: FactJob) -> bool:
    """Gate 1 ran for the whole batch at its start. Evidence an earlier fact of the batch
    brought back (reinstated, or restored from its tombstone) did not hold then, so gate 1
    never offered it; one revision at a time, the later fact's gate 1 would. It is compared
    with the fact now: within gate 1's distance floor, or under the fact's subject and
    predicate, and judged as gate 1's candidates are (the structured judge, the LLM judge with
    a key; offline the caller decides). Returns False when a judge failed on this fact (the
    batch stops here, the facts before it are applied)."""
    batch, request = job.batch, job.request
    if request.target is not None or job.already or not batch.came_back:
        return True
    view = batch.belief_view
    timeline = request.valid_from is not None
    seen = {c.key for c in job.detection.candidates} if job.detection else set()
    returned = []
    for key in sorted(batch.came_back):
        node, before = view.nodes.get(key), batch.original.get(key)
        if node is None or key in seen or key in batch.new_keys or not _held_for_gate1(node, timeline):
            continue
        if before is not None and _held_for_gate1(before, timeline):
            continue  # gate 1 read it at the batch's start
        returned.append(key)
    if not returned:
        return True
    store = batch.stores.store
    props = await store.find_keys(returned)
    for key in returned:
        if key not in props and key in batch.ghosts:  # restored from its tombstone by this batch
            props[key] = dict(batch.ghosts[key].get("props") or {})
    vectors = await store.embed([job.fact] + [view.nodes[k].text for k in returned])
    distances = {k: cosine_distance(vectors[0], v) for k, v in zip(returned, vectors[1:])}
    sp = sp_key(*request.triple[:2]) if request.triple else None
    threshold = batch.options.threshold
    found: list[Candidate] = []
    for key in returned:
        mine = props.get(key) or {}
        same_slot = (
            sp is not None
            and bool(mine.get("subject"))
            and (sp_key(mine["subject"], mine.get("predicate") or "") == sp)
        )
        near = threshold is None or distances[key] < threshold
        if near or same_slot:
            node = view.nodes[key]
            found.append(Candidate(key, node.question, node.text, distances[key] if near else None))
    if not found:
        return True
    if request.record:  # the caller decided: none of them is contradicted
        decided_by_caller(found)
    declared = await store.declared_predicates(props[c.key] for c in found if c.key in props)
    case = Case(
        job.fact,
        request.triple,
        found,
        {c.key: props.get(c.key, {}) for c in found},
        declared,
        settings=batch.stores.settings,
    )
    stop = await judge_cases([case], batch.options.use_llm)
    if stop is not None:
        batch.stop = Stop(stop[1], job.index)
        return False
    if job.detection is None:
        job.detection = Detection("none", [], [], "")
    job.detection.candidates += found
    job.detection.undecided += [c.key for c in found if c.relation is None]
    return True


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
    judge = CALLER if job.request.record else "+".join(used) or "none"
    return Detection(judge, kept, undecided, undecided_note(kept, undecided, job.batch.options.threshold))


def line_of(batch: RevisionBatch, job: FactJob) -> str:
    """``"facts line N: "`` for a line of a batch of several (the prefix of its refusals), else empty."""
    return (
        f"{batch.options.what} line {job.request.line}: " if len(batch.jobs) > 1 and job.request.line else ""
    )


async def _distance_to(store, fact: str, key: str) -> Optional[float]:
    """Gate 1's distance from the fact to a pinned target (shown, not used)."""
    wanted = node_id("evidence", key)
    for hit in await store.search(collection("evidence"), fact, 50):
        if str(hit.id) == wanted:
            return float(hit.score)
    return None
