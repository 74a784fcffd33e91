"""Surgical forget: which dead nodes are removed from both stores.

A node is forgotten (hard-deleted from graph and vector store) iff

(a) its state is ``refuted`` or ``invalidated`` (``superseded`` nodes are
    provenance and always stay),
(b) no alive node consumes it (an alive dependent through ``depends_on``, or an
    alive hypothesis it ``supports``), and
(c) it is not the ``supersedes`` target of an alive node (the new fact's
    provenance anchor stays, with its state).

Forgetting a dead node cannot change another node's consumers (only alive nodes
count), so one pass over the view decides the whole death set.
"""

from __future__ import annotations

from .beliefs import INVALIDATED, REFUTED, BeliefView
from .plan import Plan


def orphans(view: BeliefView) -> list[str]:
    found = []
    for key, node in sorted(view.nodes.items()):
        if node.state not in (REFUTED, INVALIDATED):
            continue
        if any(view.state(c) == "alive" for c in view.consumers(key)):
            continue
        if any(view.state(s) == "alive" for s in view.superseders(key)):
            continue
        found.append(key)
    return found


def forget(view: BeliefView, plan: Plan) -> list[str]:
    plan.forgotten = orphans(view)
    return plan.forgotten
