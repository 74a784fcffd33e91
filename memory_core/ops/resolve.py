"""``resolve LOSER --winner WINNER``: end a dispute between two disputed evidence nodes, or
decide a contradiction no judge decided between two alive facts of one question.

The ``disputes`` edge between them is replaced by ``supersedes`` WINNER→LOSER (for two alive
facts, that edge is added);
then everything relabels by the three-valued rules (:mod:`memory_core.core.tms`):
the loser becomes ``refuted``, its dependents die and are forgotten as usual, the
winner and whatever rested on it come back alive, forgotten nodes included (from
their tombstones). The labels are exactly those the winner would have had by
winning outright. One journalled intent, one log entry (``kind: resolve``): undo
reverts it exactly. The result has the shape of ``revise``'s.
"""

from __future__ import annotations

import copy
import time
from typing import Optional

from memory_core.core.reinstatement import kept_dead_note
from memory_core.core.errors import InputError
from memory_core.core.identity import node_id
from memory_core.core.investigation import check_key
from memory_core.core.keys import normalise_key
from memory_core.core.plan import Plan
from memory_core.core.results import RevisionResult
from memory_core.core.revision import begin_resolve, finish_resolve
from memory_core.core.validity import changed_intervals
from memory_core.store.stores import Stores
from memory_core.store import writer
from memory_core.store.belief_store import edge_row, to_node
from memory_core.store.forgotten import not_stored
from memory_core.store.intents import log_changes, tombstones, updates as intent_updates
from memory_core.store.tms_io import extend_view, restored_entries, rests_on_forgotten
from memory_core.tasks.rejudge import rejudge_returning
from memory_core.tasks.settle_in_time import read_reopening, read_settling


def empty_result(fact: str, new_key: Optional[str], judge: str = "none") -> RevisionResult:
    """A revision-shaped result with nothing done: the keys every one carries, in their order."""
    return {
        "fact": fact,
        "new_evidence": new_key,
        "judge": judge,
        "candidates": [],
        "refuted": [],
        "superseded": [],
        "invalidated": [],
        "weakened": [],
        "promoted": [],
        "forgotten": [],
        "epoch": None,
        "elapsed_ms": 0.0,
    }


def plan_fields(plan: Plan) -> RevisionResult:
    """Who won, what became disputed and what holds again: a revision-shaped result's fields
    from a plan."""
    return {
        "decisions": list(plan.decisions),
        "disputed": plan.disputed,
        "reinstated": plan.reinstated,
        "restored": list(plan.restored),
        "demoted": plan.demoted,
    }


async def resolve(stores: Stores, loser: str, winner: str) -> RevisionResult:
    """A revision-shaped result."""
    start = time.perf_counter()
    loser, winner = check_key(loser, "loser"), check_key(winner, "--winner")
    # keys match as node ids do (normalise_key: case aside): two spellings of one key are one
    # node, found once under whichever spelling came last, so each is looked up by its match
    found = {normalise_key(k): props for k, props in (await stores.store.find_keys([loser, winner])).items()}
    for key, what in ((loser, "loser"), (winner, "--winner")):
        props = found.get(normalise_key(key))
        if props is None:
            raise InputError(not_stored(stores.journal, key, what))
        if props.get("type") != "Evidence":
            node = to_node(props)
            kind = node.kind if node is not None else f"node of type {props.get('type')!r}"
            raise InputError(
                f"{what} {key!r} is a {kind}, not evidence: only evidence is disputed or contradicted"
            )
    stored = found[normalise_key(loser)]["key"], found[normalise_key(winner)]["key"]
    if stored[0] == stored[1]:
        spelt = "" if loser == winner else f" ({loser!r} and {winner!r} are one key: {stored[0]!r})"
        raise InputError(f"the loser and the winner must be two different nodes{spelt}", field="winner")
    loser, winner = stored
    store = stores.store
    view = await store.affected_view([node_id("evidence", loser), node_id("evidence", winner)])
    original = {k: copy.copy(n) for k, n in view.nodes.items()}
    found_ghosts = await extend_view(stores, view, [loser, winner], force=True)
    ghosts, memory, forgotten_ids = (
        found_ghosts.tombstones,
        found_ghosts.memory,
        set(found_ghosts.forgotten_ids),
    )
    for key, node in view.nodes.items():
        if key not in original and key not in ghosts:
            original[key] = copy.copy(node)
    epoch = stores.journal.epoch() + 1
    plan = begin_resolve(view, loser, winner, epoch)
    # what the resolution would bring back is judged against the winner first
    # (and against the alive evidence under its subject+predicate)
    wprops = found[normalise_key(winner)]
    wtriple = tuple(wprops.get(k) for k in ("subject", "predicate", "object"))
    before = set(view.nodes)
    await rejudge_returning(
        store,
        view,
        plan,
        [(winner, wprops.get("claim", ""), wtriple if all(wtriple) else None)],
        use_llm=bool(stores.settings.llm_key),
        ghosts=ghosts,
    )
    for key in view.nodes.keys() - before:  # values holding a slot, read in by the re-judging
        original.setdefault(key, copy.copy(view.nodes[key]))
    # the winner leaves its dispute: its slot's timeline is read for its place in it
    for key in await read_settling(store, view, plan):
        original.setdefault(key, copy.copy(view.nodes[key]))
    # the loser, found never true: the values its start had ended, for their places, and what
    # their holding again may bring back (forgotten nodes resting on them)
    for key in await read_reopening(store, view, plan):
        original.setdefault(key, copy.copy(view.nodes[key]))
    if plan.meta.reopening:
        before = set(view.nodes)
        more = await extend_view(stores, view, sorted(plan.meta.reopening), force=True)
        for key in view.nodes.keys() - before:
            if key in more.tombstones:
                ghosts.setdefault(key, more.tombstones[key])
            else:
                original.setdefault(key, copy.copy(view.nodes[key]))
    # what was read in since must not bring back the dispute edges this resolution removes
    for edge in plan.removed_edges:
        for again in [e for e in view.out_edges(edge.src, edge.kind) if e.dst == edge.dst]:
            view.remove_edge(again)
    finish_resolve(view, plan, loser, winner, memory, set(ghosts))
    kinds = {k: n.kind for k, n in view.nodes.items()}
    forgotten = [k for k in plan.forgotten if k not in ghosts]
    absent = (forgotten_ids - {ghosts[k]["id"] for k in plan.restored}) | {
        node_id(view.nodes[k].kind, k) for k in forgotten
    }
    updates = intent_updates(view, original, plan, skip=set(ghosts))
    intent = {
        "epoch": epoch,
        "add_nodes": restored_entries(ghosts, plan.restored, view, absent),
        # no edge to a forgotten node that stays forgotten (it is not stored)
        "add_edges": [
            list(edge_row(e, kinds)) for e in plan.new_edges if e.dst not in ghosts or e.dst in plan.restored
        ],
        "del_edges": [list(edge_row(e, kinds)) for e in plan.removed_edges],
        "updates": updates,
        "del_nodes": await tombstones(store, view, forgotten),
    }
    fact = f"resolved: {winner} wins over {loser}"  # in no caller's flags: the log is every caller's
    entry = {
        "epoch": epoch,
        "kind": "resolve",
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "fact": fact,
        "loser": loser,
        "winner": winner,
        "decisions": plan.decisions,
        "changes": log_changes(plan),
        "forgotten": forgotten,
        "restored": list(plan.restored),
        "intent": intent,
    }
    rests = rests_on_forgotten(ghosts, list(plan.restored), absent)
    if rests:  # a restored node's edges to nodes that stay forgotten: the log keeps them
        entry["rests_on_forgotten"] = rests
    await writer.run(store, stores.journal, intent, entry, stores.hook)
    result = empty_result(fact, None, judge="resolve")
    result.update(
        {
            "refuted": plan.refuted,
            "superseded": plan.superseded,
            "invalidated": plan.invalidated,
            "weakened": plan.weakened,
            "promoted": plan.promoted,
            "forgotten": forgotten,
            "epoch": epoch,
            "question": view.nodes[winner].question,
        }
    )
    result.update(plan_fields(plan))
    spans = changed_intervals(view, plan)
    if spans:  # the winner's place in its timeline ended another value (core.validity.place_settled)
        result["intervals"] = spans
    kept = plan.kept_dead()
    if kept:
        result["not_reinstated"] = [c.key for c in kept]
        result["note"] = kept_dead_note([(c.key, c.detail) for c in kept], winner)
    result["elapsed_ms"] = round((time.perf_counter() - start) * 1000, 1)
    return result
