"""Before a change relabels: read the timelines of the values it would take out of dispute.

A timed value in dispute could not end another value of its slot (whether it held was
open). When a change settles the dispute in its favour (``resolve`` names it the winner, or
a revision kills its rival), it takes its place in its single-valued slot's timeline as a
new fact that holds does (:func:`memory_core.core.validity.place_settled`, after the
relabelling). The values of that slot need not be in the change's view: they are read here,
by subject and predicate, only for the values the new labels would take out of dispute
(none in the common case: no read at all).

And the values a change finds never true: a timed value of a single-valued slot that held
before the change and is dead after it (refuted as a misprint, invalidated, the loser of a
``resolve``) ended nothing. The values of its slot its start had ended are read, with the other
values of their slot, for :func:`memory_core.core.validity.reopen_ended` to place them again
after the change is placed in time (none in the common case: no read at all).
"""

from __future__ import annotations

from typing import Mapping

from memory_core.core import reinstatement
from memory_core.core.beliefs import BeliefView
from memory_core.core.cardinality import multi_valued
from memory_core.core.identity import node_id
from memory_core.core.keys import normalise_term, sp_key
from memory_core.core.plan import Plan
from memory_core.core import validity
from memory_core.core.tms import L_ALIVE, L_DEAD, L_DISPUTED, downstream, labels
from memory_core.core.vocabulary import ALIVE, DISPUTED, SUPERSEDED
from memory_core.judging.judges import declarations_of
from memory_core.store.belief_store import BeliefStore
from memory_core.store.tms_io import merged
from memory_core.tasks.rejudge import held_same_sp, stored_props, triple_of


async def single_valued_slots(
    store: BeliefStore, recorded: Mapping[str, dict], keys: list[str]
) -> list[tuple[str, tuple[str, str, str], str]]:
    """``(key, triple, subject|predicate)`` of each of ``keys`` stored (or recorded by the change,
    ``recorded``) with a triple of a single-valued predicate, in the order of ``keys``."""
    props = await stored_props(store, recorded, {}, keys)
    declared = await store.declared_predicates(props.values())
    found = []
    for key in keys:
        mine = props.get(key) or {}
        triple = triple_of(mine)
        if triple is None or multi_valued(declarations_of(declared, mine), triple[1]):
            continue
        sp = sp_key(triple[0], triple[1])
        if sp is not None:
            found.append((key, triple, sp))
    return found


async def read_settling(
    store: BeliefStore, view: BeliefView, plan: Plan, *, recorded: Mapping[str, dict] = {}
) -> list[str]:
    """The timed evidence of ``view`` in dispute that the change's labels make alive, with a
    triple of a single-valued predicate: the other values of its slot that hold once the change
    is applied (another object, a ``valid_from``) are read into ``view`` and named in
    ``plan.meta.settling``. ``recorded``: the properties of facts the change (a batch) has
    recorded but not yet stored. Returns the keys added to the view (the caller keeps their
    before-images, as for the rest of its view)."""
    # only what the change relabels can leave a dispute: the region downstream of its seeds
    # (a batch's view holds every fact's neighbourhood; it is not scanned fact by fact)
    seeds, forced = reinstatement.seeds_of(plan)
    region = downstream(view, list(seeds) + sorted(forced))
    disputed = [
        k
        for k in region
        if (n := view.nodes.get(k)) is not None
        and n.kind == "evidence"
        and n.state == DISPUTED
        and n.valid_from is not None
    ]
    if not disputed:
        return []
    new_labels = labels(view, region, forced)
    settling = sorted(k for k in disputed if new_labels.get(k) == L_ALIVE)
    if not settling:
        return []
    added: list[str] = []
    for key, triple, sp in await single_valued_slots(store, recorded, settling):
        same = await held_same_sp(store, recorded, view, new_labels, sp, key)
        others = [
            o["key"]
            for o in same
            if o.get("valid_from") and normalise_term(o.get("object", "")) != normalise_term(triple[2])
        ]
        missing = [k for k in others if k not in view.nodes]
        if missing:
            before = set(view.nodes)
            await merged(view, await store.affected_view([node_id("evidence", k) for k in missing]))
            added += [k for k in view.nodes if k not in before and k not in added]
        plan.meta.settling[key] = [k for k in others if k in view.nodes]
    return added


async def read_reopening(
    store: BeliefStore, view: BeliefView, plan: Plan, *, recorded: Mapping[str, dict] = {}
) -> list[str]:
    """The timed evidence of ``view`` with a triple of a single-valued predicate that the change
    finds never true (it held, alive, disputed or superseded in time, before it; dead and not
    superseded in time under the change's labels, or refuted by it already): the values of its
    slot its start had ended (another object, ended or disputed, their end its start) are read
    into ``view`` with the other values of their slot that hold (timed or not), and named in
    ``plan.meta.reopening``
    (:func:`memory_core.core.validity.reopen_ended` places them again). ``recorded``: the
    properties of facts the change (a batch) has recorded but not yet stored. Returns the
    keys added to the view (the caller keeps their before-images)."""
    seeds, forced = reinstatement.seeds_of(plan)
    region = downstream(view, list(seeds) + sorted(forced))
    first: dict[str, str] = {}
    for change in plan.changes:
        first.setdefault(change.key, change.before["state"])
    timed = [
        k
        for k in sorted(set(region) | set(first))
        if (n := view.nodes.get(k)) is not None and n.kind == "evidence" and n.valid_from is not None
    ]
    # refuted here already (a value superseded in time the fact claims the same period of)
    dying = [
        k
        for k in timed
        if k in first
        and validity.never_held(view.nodes[k])
        and (first[k] in (ALIVE, DISPUTED) or (first[k] == SUPERSEDED and view.nodes[k].valid_to is not None))
    ]
    holding = [k for k in timed if k in region and view.nodes[k].state in (ALIVE, DISPUTED)]
    new_labels = labels(view, region, forced) if holding else {}
    dying += [k for k in holding if new_labels.get(k) == L_DEAD and k not in dying]
    if not dying:
        return []
    added: list[str] = []
    for key, triple, sp in await single_valued_slots(store, recorded, sorted(dying)):
        start = view.nodes[key].valid_from
        same = await held_same_sp(store, recorded, view, new_labels, sp, key)
        ended = [
            o
            for o in same
            if o["holds"] in ("historical", L_DISPUTED)
            and o.get("valid_to") == start
            and o.get("valid_from")
            and normalise_term(o.get("object", "")) != normalise_term(triple[2])
        ]
        if not ended:
            continue
        wanted = {o["key"] for o in same}
        missing = [k for k in sorted(wanted) if k not in view.nodes]
        if missing:
            before = set(view.nodes)
            await merged(view, await store.affected_view([node_id("evidence", k) for k in missing]))
            added += [k for k in view.nodes if k not in before and k not in added]
        for value in ended:
            rivals = [
                o["key"]
                for o in same
                if o["key"] != value["key"]
                and o["key"] in view.nodes
                and normalise_term(o.get("object", "")) != normalise_term(value.get("object", ""))
            ]
            plan.meta.reopening.setdefault(value["key"], (key, rivals))
    return added


__all__ = ["read_reopening", "read_settling"]
