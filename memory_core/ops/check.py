"""``check``: do the stores agree, do the states obey the rules, is the journal complete?

* Graph vs vector: every embeddable node has its vector row; no vector row
  without its node.
* Revision rules: every alive Evidence/Conclusion with critical dependencies
  has a well-founded justification (no alive node rests on a dead one, no
  alive cycle holds itself up), computed over the whole graph by check's own
  labelling (:mod:`memory_core.ops.check_log`, not the cascade's); every stored
  state agrees with the three-valued labelling of the whole graph too (a node's
  antecedents, supporters and attackers may be in another question); every state
  is a known one.
* Forget rules against the revision log (its intents replayed): no node the log
  says exists is missing, none was forgotten while a node alive now supersedes
  or consumes it, and no stored dead orphan was left by a revision that should
  have forgotten it.
* Valid time: every stored ``valid_to`` is the one the log wrote, no interval is empty or
  inverted (``valid_to`` not after ``valid_from``), and no two values of a
  single-valued predicate (same normalised subject and predicate, another object) that
  both held -- alive, disputed or superseded in time -- have overlapping validity.
* Journal: no unfinished intent; every log line parses. Opening the root has
  already recovered an interrupted change (pending intent, torn last log line,
  torn graph checkpoint); the result names it under ``recovered_at_open``.

``--repair`` deletes orphan vector rows, re-indexes nodes missing theirs (state
and weight preserved), restores missing or wrongly forgotten nodes from the log
(both stores, state, edges), invalidates unfounded alive nodes and forgets missed
orphans through journalled intents, and rolls back an unfinished intent. It never
guesses which of two overlapping values has the wrong dates: it names the pair under
``cannot_restore`` (revise the wrong one with its dates, or undo what placed it).
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional, TypedDict

from memory_core.core import validity
from memory_core.core.beliefs import STATES, BeliefView, Node
from memory_core.core.cardinality import multi_valued, stored_predicates
from memory_core.core.errors import RootBusy
from memory_core.core.keys import sp_key
from memory_core.core.results import CheckResult
from memory_core.core.investigation import key_refusal, named, text_refusal
from memory_core.core.vocabulary import DISPUTES, TEXT_FIELD
from memory_core.ops.check_log import StoredNode, forget_problems, replay, restore_entries, unfounded_alive
from memory_core.core.identity import KIND_BY_TYPE, KINDS, collection
from memory_core.core.revision import plan_relabel, plan_settle
from memory_core.core.tms import historical_node, three_valued_violations
from memory_core.store.stores import Stores
from memory_core.store import writer
from memory_core.store.belief_store import BeliefStore, to_node
from memory_core.store.intents import log_changes, tombstones, updates
from memory_core.store.journal import MAX_EPOCH, Journal, described, valid_epoch
from memory_core.store.forgotten import ForgottenIndex, forgotten_index
from memory_core.store.tms_io import add_antecedent_ghosts, forgotten_off_loop


async def _graph_ids(store: BeliefStore, kind: str) -> dict[str, dict]:
    return await store.raw_nodes(await store.ids_of_kind(kind))


async def _whole_view(store: BeliefStore) -> BeliefView:
    """Every stored node and every edge between them, as one belief view."""
    every = {i: p for kind in KINDS for i, p in (await _graph_ids(store, kind)).items()}
    edges = await store.all_edges_of(list(every)) if every else []
    return await store.view_of(list(every.values()), edges)


# how many inspect-and-repair passes ``check --repair`` makes at most: one repair can
# expose the next (a node restored from the log may rest on one refuted since), so the
# passes repeat until nothing is left or a pass changes nothing
REPAIR_PASSES = 6
# invalid log lines named one by one; beyond that, counted
LINES_NAMED = 20


class Findings(TypedDict):
    """What :func:`_inspect` found: the problems, and what :func:`_repair` needs to fix them."""

    problems: list[str]
    orphan_rows: dict[str, list[str]]  # kind -> vector row ids without their node
    missing_vectors: dict[str, dict]  # id -> props of a node without its vector row
    restore: dict[str, dict]  # id -> the log's node entry to restore (check_log.forget_problems)
    every: dict[str, dict]  # id -> props of every stored node
    unfounded_by_q: dict[str, tuple[BeliefView, list[str]]]  # question -> (whole graph, its unfounded)
    mislabelled: list[tuple[str, str, str]]  # (key, state, label) the whole graph's labelling disagrees with
    forget_ids: list[str]  # orphans a revision should have forgotten
    stored: dict[str, StoredNode]  # id -> what the forget rules read of every readable node
    whole: BeliefView
    lost: list[list[int]]  # lost epoch ranges [first, last] not recorded yet
    valid_to: dict[str, tuple[dict, object]]  # id -> (props, the valid_to the log wrote)
    meta: bool  # falsify.json has problems
    log_lines: bool  # the log has lines that are not entries
    absurd: dict[str, Node]  # id -> a node carrying an epoch no log could hold
    overlaps: list[tuple[str, str, str, validity.Interval]]
    empty: list[tuple[str, str, str]]
    unaccepted: list[str]  # stored nodes whose key or text FALSIFY's input refuses, as the problems name them


async def check(stores: Stores, repair: bool = False) -> CheckResult:
    found = await _inspect(stores)
    result: CheckResult = {"clean": not found["problems"], "problems": list(found["problems"])}
    if stores.recovered:
        # opening the root already finished or rolled back an interrupted change (a pending
        # intent, a torn log line, a torn graph checkpoint): say so; "clean" is the state after it
        result["recovered_at_open"] = stores.recovered
    if not repair:
        return result
    if not found["problems"]:  # nothing to repair: the repair's fields all the same (one shape)
        result.update(
            {"repaired": [], "clean_after_repair": True, "problems_after_repair": [], "cannot_restore": []}
        )
        return result
    repaired: list[str] = []
    cannot: list[str] = []
    # an unfinished change (a torn log line, a pending intent) is rolled back first, and the
    # root inspected again: what the rollback removed is never re-indexed or restored, and no
    # history is recorded lost for an epoch that never committed. Only under the writer lock:
    # without it the intent may be a live writer's, being applied now (reported, never rolled back)
    if not stores.holds_writer_lock:
        raise RootBusy(
            "check --repair: the root was opened without its writer lock (lock=False), so it reads "
            "only: an unfinished change may be the one the lock's holder is writing now; nothing was "
            "written (open the root with its lock to repair)"
        )
    recovered = await writer.recover(stores.store, stores.journal)
    if recovered:
        repaired.append(recovered)
        found = await _inspect(stores)
    for _ in range(REPAIR_PASSES):
        if not found["problems"]:
            break
        done = await _repair(stores, found, cannot)
        repaired += done
        found = await _inspect(stores)
        if not found["problems"] or not done:
            break
    # what no repair may do, among the problems the repairs left (not those one of them removed)
    cannot += [m for m in _not_for_repair(found) if m not in cannot]
    result.update(
        {
            "repaired": repaired,
            "clean_after_repair": not found["problems"],
            "problems_after_repair": found["problems"],
            "cannot_restore": cannot,
        }
    )
    return result


def _subtract(span: tuple[int, int], covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``span`` (inclusive) outside the sorted, merged ``covered`` spans."""
    first, end = span
    left = []
    for a, b in covered:
        if b < first or a > end:
            continue
        if a > first:
            left.append((first, a - 1))
        first = max(first, b + 1)
        if first > end:
            return left
    if first <= end:
        left.append((first, end))
    return left


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def history_problems(
    entries, meta_epoch: int, stored_epoch: int
) -> tuple[list[str], list[list[int]], list[list[int]]]:
    """Missing or shortened history: every committed change is one log line, epochs
    1, 2, 3, ... (each write takes the last epoch + 1), and ``falsify.json`` and the
    stores never run ahead of the log. A gap, a log that starts late, or a root whose
    ``falsify.json`` or stored nodes name a later epoch than the log's last is lost
    history, unless a repair has recorded that gap (``lost_epochs``). Returns the
    problems, the lost epoch ranges ``[first, last]`` not recorded yet, and every gap
    (recorded or not: a node missing from the graph may have been forgotten in one).
    Works on ranges, never on each epoch: constant memory for any epoch (an epoch above
    :data:`~memory_core.store.journal.MAX_EPOCH` is damage, named by :func:`epoch_problems`,
    and not counted here)."""
    acknowledged: list[tuple[int, int]] = []
    gaps: list[tuple[int, int]] = []
    last = 0
    for entry in entries:  # the journal's readers yield only entries; a list given here may hold others
        epoch = entry.get("epoch") if isinstance(entry, dict) else None
        if not isinstance(epoch, int) or not valid_epoch(epoch):
            continue
        spans = (entry.get("lost_epochs") or []) if entry.get("kind") == "repair" else []
        for span in spans if isinstance(spans, list) else []:
            if (
                isinstance(span, list)
                and len(span) == 2
                and all(valid_epoch(x) for x in span)
                and span[0] <= span[1]
            ):
                acknowledged.append((span[0], span[1]))
        if epoch > last + 1:
            gaps.append((last + 1, epoch - 1))
        last = max(last, epoch)
    ahead = (
        max(e for e in (meta_epoch, stored_epoch) if valid_epoch(e))
        if any(valid_epoch(e) for e in (meta_epoch, stored_epoch))
        else 0
    )
    if ahead > last:
        gaps.append((last + 1, ahead))
    covered = _merged(acknowledged)
    lost = [list(piece) for gap in gaps for piece in _subtract(gap, covered)]
    problems = []
    for first, end in lost:
        which = f"epoch {first}" if first == end else f"epochs {first}-{end}"
        if end > last:
            whose = " and ".join(
                filter(
                    None,
                    [
                        f"falsify.json says epoch {meta_epoch}" if meta_epoch > last else "",
                        f"stored nodes carry epoch {stored_epoch}" if stored_epoch > last else "",
                    ],
                )
            )
            ends = f"ends at epoch {last}" if last else "is empty or missing"
            problems.append(
                f"history lost: {whose}, but the revision log {ends} ({which} missing; "
                "undo and explain cannot reach those changes)"
            )
        else:
            problems.append(
                f"history lost: the revision log has no entry for {which} "
                "(undo and explain cannot reach those changes)"
            )
    return problems, lost, [list(g) for g in gaps]


async def _inspect(stores: Stores) -> Findings:
    """Every problem of the root, and what a repair needs to fix them. The stores are read on
    the caller's event loop (cognee's engines are bound to it; large answers are decoded off
    it); what they hold is checked in a worker thread (:func:`_findings`: the labelling, the
    revision log's reading and replay, the forget and valid-time rules), so the loop keeps
    running (seconds on a 9,000-node root). The caller holds the revision lock throughout."""
    store, journal = stores.store, stores.journal
    graph: dict[str, dict[str, dict]] = {}  # kind -> its stored nodes (id -> props)
    vectors: dict[str, set[str]] = {}  # kind -> the ids of its vector rows
    for kind in KINDS:
        graph[kind] = await _graph_ids(store, kind)
        vectors[kind] = await store.vector_ids(collection(kind))
    every = await asyncio.to_thread(lambda: {i: p for nodes in graph.values() for i, p in nodes.items()})
    edges = await store.all_edges_of(list(every)) if every else []
    forgotten = await forgotten_off_loop(journal)
    return await asyncio.to_thread(_findings, store, journal, graph, vectors, every, edges, forgotten)


def _findings(
    store: BeliefStore,
    journal: Journal,
    graph: dict[str, dict[str, dict]],
    vectors: dict[str, set[str]],
    every: dict[str, dict],
    edges: list[tuple[str, str, str, dict]],
    forgotten: ForgottenIndex,
) -> Findings:
    """What :func:`_inspect` read, checked (pure over it, but for the revision log it reads):
    ``graph`` kind -> stored nodes, ``vectors`` kind -> vector row ids, ``every`` id -> props of
    every stored node, ``edges`` every edge of theirs, ``forgotten`` the forgotten index
    (:func:`forgotten_off_loop`)."""
    problems: list[str] = []
    missing_vectors: dict[str, dict] = {}
    orphan_rows: dict[str, list[str]] = {}
    for kind in KINDS:
        nodes, rows = graph[kind], vectors[kind]
        for i, props in nodes.items():
            if i not in rows:
                missing_vectors[i] = props
                problems.append(
                    f"{props.get('key', i)} ({kind}) has no row in vector collection {collection(kind)}"
                )
        extra = sorted(rows - set(nodes))
        if extra:
            orphan_rows[kind] = extra
            problems += [f"vector row {i} in {collection(kind)} has no graph node" for i in extra]
    # the whole graph (edges may cross investigations), labelled by check's own
    # well-founded computation (memory_core.ops.check_log, not the cascade's)
    whole = store._view(list(every.values()), edges)
    problems += [
        f"{k} has unknown state {n.state!r}" for k, n in whole.nodes.items() if n.state not in STATES
    ]
    unfounded_all = unfounded_alive({k: n.state for k, n in whole.nodes.items()}, whole.edges)
    unfounded_by_q: dict[str, tuple[BeliefView, list[str]]] = {}
    for k in sorted(unfounded_all):
        if k in whole.nodes:
            unfounded_by_q.setdefault(whole.nodes[k].question or "", (whole, []))[1].append(k)
    bad = {k for _, found in unfounded_by_q.values() for k in found}
    problems += [f"{k} is alive but has no well-founded justification" for k in sorted(bad)]
    # the three-valued labelling (supersedes/disputes attack; disputed = undefined) of the
    # whole graph too: a node's antecedents, supporters and attackers may be in another
    # question (a loaded edge may name any stored node; a fact joins the question of what it
    # contradicts and supersedes values of others), and the revisions read them wherever they live
    mislabelled = [(k, state, label) for k, state, label in _violations(whole, forgotten) if k not in bad]
    problems += [
        f"{k} is {state} but the three-valued labelling makes it {label}" for k, state, label in mislabelled
    ]
    # the forget rules against the revision log (missing nodes, wrongly forgotten ones, orphans kept)
    readable = {i: n for i, n in ((i, to_node(p)) for i, p in every.items()) if n is not None}
    stored: dict[str, StoredNode] = {
        i: {"key": n.key, "state": n.state, "epoch": n.epoch, "historical": historical_node(n)}
        for i, n in readable.items()
    }
    # epochs no log could hold (damage, not lost history), and the history itself
    absurd = {i: n for i, n in readable.items() if not valid_epoch(n.epoch)}
    problems += [
        f"{n.key} carries epoch {described(n.epoch)}, beyond any epoch FALSIFY writes "
        f"(0..{MAX_EPOCH}): the stored node is damaged"
        for n in absurd.values()
    ]
    meta_found = journal.meta_problems()
    problems += meta_found
    stored_epoch = max((n["epoch"] for i, n in stored.items() if i not in absurd), default=0)
    lost_found, lost, gaps = history_problems(journal.entries(), journal.meta_epoch(), stored_epoch)
    log = replay(journal.entries())
    forget_found, restore, forget_ids = forget_problems(log, stored, edges, gaps)
    problems += forget_found
    # valid time: every stored valid_to is the one the log wrote (a load, a revision that ended it, an undo)
    valid_to_fix: dict[str, tuple[dict, object]] = {}
    for i, props in every.items():
        image = log.nodes.get(i)
        if image is None or KIND_BY_TYPE.get(props.get("type", "")) != "evidence":
            continue
        logged = (image.get("props") or {}).get("valid_to")
        if props.get("valid_to") != logged:
            valid_to_fix[i] = (props, logged)
            problems.append(
                f"{props.get('key', i)} has valid_to {props.get('valid_to')!r} but the revision log "
                f"wrote {logged!r}"
            )
    # valid time: an interval that holds at no date (its valid_to not after its valid_from)
    empty = empty_intervals(every)
    problems += [
        f"{key} has valid time [{start}, {end}): an empty interval, true at no date"
        for key, start, end in empty
    ]
    # valid time: two values of a single-valued predicate that both held over one period
    overlapping = validity_overlaps(every, whole)
    problems += [validity.overlap_text(p) + " (overlapping validity)" for p in overlapping]
    # nodes written past FALSIFY's input (a host's own add_data_points) with a key or text it refuses
    unaccepted = unaccepted_nodes(every)
    problems += unaccepted
    if journal.pending() is not None:
        problems.append("the journal holds an unfinished intent")
    log_found = journal.log_problems(LINES_NAMED)
    problems += log_found
    problems += lost_found
    return {
        "problems": problems,
        "orphan_rows": orphan_rows,
        "missing_vectors": missing_vectors,
        "restore": restore,
        "every": every,
        "unfounded_by_q": unfounded_by_q,
        "mislabelled": mislabelled,
        "forget_ids": forget_ids,
        "stored": stored,
        "whole": whole,
        "lost": lost,
        "valid_to": valid_to_fix,
        "meta": bool(meta_found),
        "log_lines": bool(log_found),
        "absurd": absurd,
        "overlaps": overlapping,
        "empty": empty,
        "unaccepted": unaccepted,
    }


def unaccepted_nodes(every: dict[str, dict]) -> list[str]:
    """A problem for every stored node whose key FALSIFY's input refuses (or reads as another
    key), or whose text it refuses (a control character, a lone surrogate, empty): written past
    that input, e.g. by a host's own ``add_data_points`` with FALSIFY's DataPoint classes. No
    command can name such a key (explain, revise --target refuse it), and no reader should be
    handed such a text; the key is named escaped."""
    found = []
    for props in every.values():
        kind, key = KIND_BY_TYPE.get(props.get("type", "")), props.get("key")
        if kind is None or not isinstance(key, str):
            continue
        refused = key_refusal(key)
        if refused is not None:
            found.append(
                f"{kind} {named(key)} is stored under a key FALSIFY does not accept ({refused}): no "
                "command can name it (it was written past FALSIFY's input, e.g. by a host's add_data_points)"
            )
            continue
        field = TEXT_FIELD[kind]
        refused = text_refusal(props.get(field), field)
        if refused is not None:
            found.append(
                f"{kind} {named(key)} is stored with a {field} FALSIFY does not accept ({refused}; it was "
                "written past FALSIFY's input, e.g. by a host's add_data_points)"
            )
    return sorted(found)


def empty_intervals(every: dict[str, dict]) -> list[tuple[str, str, str]]:
    """``(key, valid_from, valid_to)`` of every stored node whose interval is empty or inverted
    (``valid_to`` not after ``valid_from``): every input path refuses one, and a revision never
    writes one (a derived fact whose support ended before it starts never held: invalidated)."""
    found = []
    for props in every.values():
        node = to_node(props)
        if node is None or node.valid_from is None or node.valid_to is None:
            continue
        try:
            inverted = validity.moment(node.valid_to) <= validity.moment(node.valid_from)
        except ValueError:
            continue  # not a date: the valid_to check against the log names it
        if inverted:
            found.append((node.key, node.valid_from, node.valid_to))
    return sorted(found)


def validity_overlaps(
    every: dict[str, dict], whole: BeliefView
) -> list[tuple[str, str, str, validity.Interval]]:
    """Pairs of evidence values of a single-valued predicate (by their questions' declarations)
    that both held over an overlapping period (:func:`memory_core.core.validity.overlaps`)."""
    declared = {
        p.get("key"): stored_predicates(p.get("predicates"))
        for p in every.values()
        if KIND_BY_TYPE.get(p.get("type", "")) == "question"
    }
    values: list[tuple[str, str, str, validity.Interval]] = []
    for props in every.values():
        node = to_node(props)
        if node is None or node.kind != "evidence" or not props.get("object"):
            continue
        slot = sp_key(props.get("subject"), props.get("predicate"))
        if slot is None:  # no subject or no predicate: not a value of a slot
            continue
        held = node.state in ("alive", "disputed") or (
            node.state == "superseded" and node.valid_to is not None
        )
        if not held or multi_valued(declared.get(node.question), props["predicate"]):
            continue
        values.append(
            (
                node.key,
                slot,
                props["object"],
                (node.valid_from, node.valid_to),
            )
        )
    disputes = [(e.src, e.dst) for e in whole.edges if e.kind == DISPUTES]
    # a pair with an undecided value (disputed: in a dispute, or resting on one) is an open
    # question, not two values that both held
    undecided = [k for k, _, _, _ in values if k in whole.nodes and whole.nodes[k].state == "disputed"]
    return validity.overlaps(values, disputes, undecided)


def _settled(view: BeliefView, bad: list[str], epoch: int) -> tuple[dict, list]:
    """The intent and logged changes that invalidate the unfounded alive nodes ``bad`` of
    ``view`` at ``epoch`` (pure: run in a worker thread)."""
    original = {k: type(n)(**vars(n)) for k, n in view.nodes.items()}
    plan = plan_settle(view, bad, epoch)
    return {"epoch": epoch, "updates": updates(view, original, plan, skip=set())}, log_changes(plan)


def _violations(view: BeliefView, forgotten: ForgottenIndex) -> list[tuple[str, str, str]]:
    """``(key, stored state, label)`` of the nodes of ``view`` whose stored state the three-valued
    labelling of the whole view disagrees with. The forgotten nodes a kept node still rests on
    take part as dead ghosts (forgetting deleted their edges) on a copy of the view, and are
    never named themselves."""
    labelled = BeliefView(dict(view.nodes), list(view.edges))
    ghosts: dict[str, dict] = {}
    add_antecedent_ghosts(labelled, forgotten, ghosts)
    return [v for v in three_valued_violations(labelled) if v[0] not in ghosts]


def _relabelled(view: BeliefView, journal: Journal) -> Optional[tuple[list[str], dict, list]]:
    """The nodes of ``view`` (the whole graph) the three-valued labelling disagrees with (the
    forgotten ones it still rests on as ghosts), and the intent and logged changes that relabel
    them at the next epoch; None when there are none (the revision log is read: run in a worker
    thread)."""
    ghosts: dict[str, dict] = {}
    add_antecedent_ghosts(view, forgotten_index(journal), ghosts)
    keys = [k for k, _, _ in three_valued_violations(view) if k not in ghosts]
    if not keys:
        return None
    epoch = journal.epoch() + 1
    original = {k: type(n)(**vars(n)) for k, n in view.nodes.items()}
    images = replay(journal.entries()).nodes
    # a state the image lacks (or not a string) is no dead state: the default (refuted)
    dead_as = {
        img["key"]: img["state"]
        for img in images.values()
        if img.get("key") in keys and isinstance(img.get("state"), str)
    }
    plan = plan_relabel(view, keys, epoch, forgotten_index(journal).memory, dead_as)
    return (
        keys,
        {"epoch": epoch, "updates": updates(view, original, plan, skip=set(ghosts))},
        log_changes(plan),
    )


def _not_for_repair(found: Findings) -> list[str]:
    """What no repair may do among the problems ``found`` (the root as the repairs left it):
    an empty interval, a node under a key or text FALSIFY's input refuses, two overlapping
    values. Read after the last pass, never before: a repair of another problem may have
    removed one (a value's logged ``valid_to`` written back ends the overlap it made)."""
    cannot: list[str] = []
    for key, start, end in found.get("empty", []):
        # which bound is wrong is a judgment, not a rule: named, never guessed
        message = (
            f"cannot repair: {key} has valid time [{start}, {end}), true at no date; revise it again with "
            f"its dates, or undo the change that wrote them"
        )
        if message not in cannot:
            cannot.append(message)
    for problem in found.get("unaccepted", []):
        # a key or text is the host's to choose: never renamed, rewritten or deleted by check
        message = (
            f"cannot repair: {problem}; check does not rename, rewrite or delete what a host wrote: "
            "write it again under a key of letters, digits, '_', '-' and '.' with a text of no control "
            "character, and delete this node, with the host's own cognee calls"
        )
        if message not in cannot:
            cannot.append(message)
    for pair in found.get("overlaps", []):
        # which value's dates are wrong is a judgment, not a rule: named, never guessed
        message = (
            f"cannot repair: {validity.overlap_text(pair)}; which one's dates are wrong is not for check to "
            f"guess: revise the wrong value again with its dates (valid_from / valid_to), or undo the "
            f"change that placed it"
        )
        if message not in cannot:
            cannot.append(message)
    return cannot


async def _repair(stores: Stores, found: Findings, cannot: list[str]) -> list[str]:
    """One repair pass over what :func:`_inspect` found; returns what it did."""
    store, journal = stores.store, stores.journal
    repaired: list[str] = []
    orphan_rows, missing_vectors, restore, every = (
        found["orphan_rows"],
        found["missing_vectors"],
        found["restore"],
        found["every"],
    )
    unfounded_by_q, mislabelled, forget_ids = (
        found["unfounded_by_q"],
        found["mislabelled"],
        found["forget_ids"],
    )
    stored, whole = found["stored"], found["whole"]
    done = await writer.recover(store, journal)
    if done:
        repaired.append(done)
    if found.get("log_lines"):
        # lines that are not log entries (garbage, a repeated line): out of the log, kept beside it;
        # the next pass sees the log as it now is (an entry really lost is then lost history)
        moved = journal.set_aside_log_lines()
        repaired += moved
        if moved:
            return repaired
    if found.get("meta"):
        last = journal.last_entry()
        repaired += journal.repair_meta(last["epoch"] if last else 0)
    if found.get("absurd"):
        epoch = journal.epoch() + 1
        fixes: list[dict[str, Any]] = []
        for i in sorted(found["absurd"]):
            damaged = found["absurd"][i]
            same = {"state": damaged.state, "weight": damaged.weight, "confidence": damaged.confidence}
            fixes.append(
                {"id": i, "key": damaged.key, "before": dict(same, epoch=0), "after": dict(same, epoch=epoch)}
            )
        intent: dict = {"epoch": epoch, "updates": fixes}
        entry = {"epoch": epoch, "kind": "repair", "changes": [], "intent": intent}
        await writer.run(store, journal, intent, entry)
        repaired.append(
            f"gave {', '.join(f['key'] for f in fixes)} epoch {epoch} in place of an epoch no log could "
            f"hold (epoch {epoch})"
        )
    for kind, ids in orphan_rows.items():
        await store.delete_vectors(collection(kind), ids)
        repaired.append(f"deleted {len(ids)} orphan vector row(s) from {collection(kind)}")
    if missing_vectors:
        points = []
        for i, props in missing_vectors.items():
            node = to_node(props)  # re-adding rewrites the property blob: carry state and weight along
            if node is None:
                # not a node FALSIFY can read (its key lost behind its back): never re-indexed as it
                # is; the revision log's image restores it below, or it stays named
                continue
            points.append(writer.build_point(node.kind, i, props, node.state, node.epoch, node.weight))
        if points:
            await store.add_points(points)
            repaired.append(f"re-indexed {len(points)} node(s) missing their vector rows")
    if restore:
        epoch = journal.epoch() + 1
        adds = restore_entries(restore, set(every))
        keys = sorted(n["key"] for n in adds)
        intent = {"epoch": epoch, "add_nodes": adds}
        entry = {"epoch": epoch, "kind": "repair", "restored": keys, "changes": [], "intent": intent}
        await writer.run(store, journal, intent, entry)
        repaired.append(
            f"restored {', '.join(keys)} from the revision log, with state and edges (epoch {epoch})"
        )
    for question, (view, bad) in unfounded_by_q.items():
        epoch = await asyncio.to_thread(journal.epoch) + 1
        intent, changes = await asyncio.to_thread(_settled, view, bad, epoch)
        entry = {
            "epoch": epoch,
            "kind": "repair",
            "question": question,
            "changes": changes,
            "intent": intent,
        }
        await writer.run(store, journal, intent, entry)
        repaired.append(f"invalidated unfounded node(s) {', '.join(bad)} (epoch {epoch})")
    if mislabelled:
        # the whole graph read again (the repairs above may have changed it), and relabelled as
        # its labelling says: a node's antecedents, supporters and attackers may be in another question
        view = await _whole_view(store)
        # the forgotten index is fed in that thread: run to its end even when cancelled
        relabelled = await writer.uncancellable(lambda: asyncio.to_thread(_relabelled, view, journal))
        if relabelled is not None:
            keys, intent, changes = relabelled
            epoch = intent["epoch"]
            entry = {"epoch": epoch, "kind": "repair", "changes": changes, "intent": intent}
            await writer.run(store, journal, intent, entry)
            repaired.append(
                f"relabelled {', '.join(keys)} as the three-valued labelling makes them (epoch {epoch})"
            )
    if found.get("valid_to"):
        epoch = journal.epoch() + 1
        fixes = []
        for i, (props, logged) in sorted(found["valid_to"].items()):
            node = to_node(props)
            if node is None:  # its key lost behind FALSIFY's back: the log's image restores it, valid_to too
                continue
            same = {
                "state": node.state,
                "epoch": node.epoch,
                "weight": node.weight,
                "confidence": node.confidence,
            }
            fixes.append(
                {
                    "id": i,
                    "key": node.key,
                    "before": dict(same, valid_to=props.get("valid_to")),
                    "after": dict(same, valid_to=logged),
                }
            )
        if fixes:
            intent = {"epoch": epoch, "updates": fixes}
            entry = {"epoch": epoch, "kind": "repair", "changes": [], "intent": intent}
            await writer.run(store, journal, intent, entry)
            repaired.append(
                f"restored the logged valid_to of {', '.join(f['key'] for f in fixes)} (epoch {epoch})"
            )
    if forget_ids:
        epoch = journal.epoch() + 1
        keys = sorted(stored[i]["key"] for i in forget_ids)
        intent = {"epoch": epoch, "del_nodes": await tombstones(store, whole, keys)}
        entry = {"epoch": epoch, "kind": "repair", "changes": [], "forgotten": keys, "intent": intent}
        await writer.run(store, journal, intent, entry)
        repaired.append(f"forgot orphan(s) {', '.join(keys)} the forget rule had missed (epoch {epoch})")
    if journal.repair_log():
        repaired.append("cut a torn last line from revisions.jsonl")
    if found["lost"]:
        # a lost log cannot be rebuilt: the gap is recorded, so the log again covers every epoch
        spans = found["lost"]
        epoch = journal.epoch() + 1
        which = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
        entry = {
            "epoch": epoch,
            "kind": "repair",
            "changes": [],
            "lost_epochs": spans,
            "intent": {"epoch": epoch},
        }
        await writer.run(store, journal, {"epoch": epoch}, entry)
        message = (
            f"cannot restore the revision log of epoch(s) {which}: it is lost (restore revisions.jsonl "
            f"from a backup to get it back); recorded the gap at epoch {epoch}, so undo and explain "
            "cannot reach the changes made in it"
        )
        cannot.append(message)
        repaired.append(message)
    return repaired
