"""Surgical forget: which dead nodes are removed from both stores.

A node is forgotten (hard-deleted from graph and vector store) iff

(a) its state is ``refuted`` or ``invalidated`` (``superseded`` nodes are
    provenance and always stay),
(b) no alive node consumes it (an alive dependent through ``depends_on``, or an
    alive hypothesis it ``supports``), and
(c) it is not the ``supersedes`` target of an alive node (the new fact's
    provenance anchor stays, with its state).

Forgetting a dead node cannot change another node's consumers (only alive nodes
count), so one pass decides the whole death set. And a node's orphan status can
only change when it or one of its consumers or superseders changes state, so a
revision examines just the nodes it changed and their neighbours.
"""

from __future__ import annotations

from memory_core.core.beliefs import INVALIDATED, REFUTED, BeliefView
from memory_core.core.vocabulary import DEPENDS_ON, SUPERSEDES, SUPPORTS
from memory_core.core.plan import Plan
from memory_core.core.tms import historical_node


def neighbourhood(view: BeliefView, changed) -> set[str]:
    """``changed`` plus every node whose consumers or superseders are among them."""
    keys = set(changed)
    for key in changed:
        keys.update(e.dst for e in view.out_edges(key) if e.kind in (DEPENDS_ON, SUPERSEDES))
        keys.update(e.src for e in view.in_edges(key, SUPPORTS))
    return {k for k in keys if k in view.nodes}


def orphans(view: BeliefView, changed=None) -> list[str]:
    """Dead nodes nothing alive needs. ``changed``: limit the search to what a
    revision touched (None: the whole view)."""
    found = []
    keys = view.nodes if changed is None else neighbourhood(view, changed)
    for key in sorted(keys):
        node = view.nodes[key]
        if node.state not in (REFUTED, INVALIDATED):
            continue
        # a node superseded in time was true: what it consumed or defeated is its history, kept
        if any(view.state(c) == "alive" or historical_node(view.nodes.get(c)) for c in view.consumers(key)):
            continue
        if any(view.state(s) == "alive" or historical_node(view.nodes.get(s)) for s in view.superseders(key)):
            continue
        found.append(key)
    return found


def forget(view: BeliefView, plan: Plan) -> list[str]:
    changed = {c.key for c in plan.changes} | ({plan.new_node.key} if plan.new_node else set())
    plan.forgotten = orphans(view, changed)
    return plan.forgotten
