"""Before a change relabels: read the timelines of the values it would take out of dispute.

A timed value in dispute could not end another value of its slot (whether it held was
open). When a change settles the dispute in its favour (``resolve`` names it the winner, or
a revision kills its rival), it takes its place in its single-valued slot's timeline as a
new fact that holds does (:func:`memory_core.core.validity.place_settled`, after the
relabelling). The values of that slot need not be in the change's view: they are read here,
by subject and predicate, only for the values the new labels would take out of dispute
(none in the common case: no read at all).
"""

from __future__ import annotations

from typing import Mapping

from memory_core.core import reinstatement
from memory_core.core.beliefs import BeliefView
from memory_core.core.cardinality import multi_valued
from memory_core.core.identity import node_id
from memory_core.core.keys import normalise_term, sp_key
from memory_core.core.plan import Plan
from memory_core.core.tms import L_ALIVE, downstream, labels
from memory_core.core.vocabulary import DISPUTED
from memory_core.judging.judges import declarations_of
from memory_core.store.belief_store import BeliefStore
from memory_core.store.tms_io import merged
from memory_core.tasks.rejudge import held_same_sp, stored_props, triple_of


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
    props = await stored_props(store, recorded, {}, settling)
    declared = await store.declared_predicates(props.values())
    added: list[str] = []
    for key in settling:
        mine = props.get(key) or {}
        triple = triple_of(mine)
        if triple is None or multi_valued(declarations_of(declared, mine), triple[1]):
            continue
        sp = sp_key(triple[0], triple[1])
        if sp is None:
            continue
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


__all__ = ["read_settling"]
