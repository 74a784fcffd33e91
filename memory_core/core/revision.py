"""One revision as pure logic: refute → invalidate → decay → rescore → forget.

The cognee Tasks in :mod:`memory_core.tasks.revision_tasks` call these same steps one by one;
:func:`plan_revision` runs them in one go (tests, the benchmark's lower bound).
Each step mutates only the view it is given and records into the plan.
"""

from __future__ import annotations

from memory_core.core.beliefs import BeliefView, Edge, Node
from memory_core.core.cascade import decay, dependent_closure, invalidate, refute, settle
from memory_core.core.vocabulary import SUPERSEDES
from memory_core.core.forget import forget
from memory_core.core.plan import Plan
from memory_core.core.promotion import rescore


def begin(view: BeliefView, verdicts: list[tuple[str, str, float]], epoch: int,
          fact: str | None = None, new_node: Node | None = None) -> Plan:
    """Record the new fact (with a ``supersedes`` edge to each contradicted
    evidence) in the view and mark the contradicted evidence dead."""
    plan = Plan(epoch=epoch, fact=fact, new_node=new_node)
    if new_node is not None:
        new_node.epoch = epoch
        view.add_node(new_node)
        for key, _, confidence in sorted(verdicts):
            edge = Edge(SUPERSEDES, new_node.key, key, confidence=confidence)
            if edge not in view.out_edges(new_node.key, SUPERSEDES):
                view.add_edge(edge)
                plan.new_edges.append(edge)
    plan.died = refute(view, plan, verdicts, new_node.key if new_node else None)
    return plan


def propagate_refutation(view: BeliefView, plan: Plan) -> list[str]:
    """Invalidate what lost its well-founded support; decay non-critical dependents.
    Returns every node that died in this revision (refuted first)."""
    victims = invalidate(view, plan, plan.died)
    plan.died = plan.died + victims
    decay(view, plan, plan.died)
    return plan.died


def promote_competing_hypothesis(view: BeliefView, plan: Plan) -> list[str]:
    return rescore(view, plan, plan.died)


def forget_orphans(view: BeliefView, plan: Plan) -> list[str]:
    return forget(view, plan)


def plan_revision(view: BeliefView, verdicts: list[tuple[str, str, float]], epoch: int,
                  fact: str | None = None, new_node: Node | None = None) -> Plan:
    """``verdicts``: (evidence key, "contradicts"|"supersedes", confidence)."""
    plan = begin(view, verdicts, epoch, fact, new_node)
    propagate_refutation(view, plan)
    promote_competing_hypothesis(view, plan)
    forget_orphans(view, plan)
    return plan


def plan_settle(view: BeliefView, touched: list[str], epoch: int) -> Plan:
    """Loading: ``touched`` = new nodes and nodes that gained a depends_on edge.
    Those (and alive nodes resting on them) whose justifications are already dead
    enter ``invalidated``; the consequences follow as in a revision."""
    plan = Plan(epoch=epoch)
    candidates = {k for k in touched if view.nodes[k].alive and view.justifications(k)}
    candidates |= dependent_closure(view, list(touched))
    plan.died = settle(view, plan, candidates)
    if plan.died:
        decay(view, plan, plan.died)
        rescore(view, plan, plan.died)
    return plan
