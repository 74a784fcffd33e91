"""One revision as pure logic: refute → invalidate → decay → rescore → forget.

The cognee Tasks in :mod:`memory_core.tasks.revision_tasks` call these same steps one by one;
:func:`plan_revision` runs them in one go (tests, the benchmark's lower bound).
Each step mutates only the view it is given and records into the plan.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from memory_core.core.beliefs import ALIVE, BeliefView, Edge, Node
from memory_core.core.cascade import decay, dependent_closure, settle
from memory_core.core.policy import EVIDENCE, FACT
from memory_core.core.tms import (
    Memory,
    check_resolvable,
    end_settled_disputes,
    historical_node,
    reinstate_hypotheses,
    relabel,
    remove_edge,
)
from memory_core.core.vocabulary import (
    DEPENDS_ON,
    DISPUTED,
    DISPUTES,
    INVALIDATED,
    REFUTED,
    REFUTES,
    Rule,
    SUPERSEDED,
    SUPERSEDES,
    SUPPORTS,
)
from memory_core.core.forget import forget
from memory_core.core.plan import Plan, PlanInputs, record
from memory_core.core.promotion import rescore
from memory_core.core.validity import end_returning, place_settled, reopen_ended


def begin(
    view: BeliefView,
    verdicts: list[tuple[str, str, float]],
    epoch: int,
    fact: str | None = None,
    new_node: Node | None = None,
    decisions: Optional[dict] = None,
) -> Plan:
    """Record the new fact in the view with one edge per contradicted evidence E:
    ``supersedes`` F→E when F wins (the default, and every verdict without a
    decision), ``supersedes`` E→F when E wins, ``disputes`` F→E for a dispute
    (``decisions``: evidence key -> :class:`memory_core.core.policy.Decision`).
    When F supersedes E on a *supersedes* verdict (a newer value), F also
    supersedes what E had superseded, so the older values stay dead even if F is
    refuted later. The labels are settled by :func:`propagate_refutation`."""
    plan = Plan(epoch=epoch, fact=fact, new_node=new_node)
    decisions = decisions or {}
    plan.decisions = [decisions[k].as_dict() for k, _, _ in sorted(verdicts) if k in decisions]
    if new_node is not None:
        new_node.epoch = epoch
        view.add_node(new_node)
        for key, relation, confidence in sorted(verdicts):
            decision = decisions.get(key)
            if decision is None or decision.winner == FACT:
                edges = [Edge(SUPERSEDES, new_node.key, key, confidence=confidence)]
                if relation == "supersedes":
                    edges += [
                        Edge(SUPERSEDES, new_node.key, e.dst, confidence=confidence)
                        for e in view.out_edges(key, SUPERSEDES)
                        if e.dst != new_node.key and view.state(e.dst) != ALIVE
                    ]
            elif decision.winner == EVIDENCE:
                edges = [Edge(SUPERSEDES, key, new_node.key, confidence=confidence)]
            else:
                edges = [Edge(DISPUTES, new_node.key, key, confidence=confidence)]
            for edge in edges:
                if edge not in view.out_edges(edge.src, edge.kind):
                    view.add_edge(edge)
                    plan.new_edges.append(edge)
    plan.meta = PlanInputs(
        verdicts={k: (r, c) for k, r, c in verdicts},
        decisions=decisions,
        forced=[] if new_node is not None else [k for k, _, _ in verdicts],
    )
    return plan


def restate(view: BeliefView, plan: Plan, records: Iterable[str]) -> list[str]:
    """The new fact asserted again after its earlier records of the same text died: it takes
    the place of those nothing rests on (a ``supersedes`` edge from the new record to each, so
    they stay dead when what had refuted them dies, rather than coming back beside it: a value
    flipped back and forth keeps one alive record, not one per return). A record something
    rests on (a conclusion's ``depends_on``, a hypothesis it ``supports`` or ``refutes``) comes
    back with what rests on it, by reinstatement; one superseded in time was true for its
    period and is left alone, and so is one of another question (an inquiry's beliefs are its
    own) or with another ``valid_from`` (the same words from another start claim another period).
    Call after :func:`begin`, before the relabelling. Returns the records taken over."""
    new = plan.new_node
    taken: list[str] = []
    if new is None:
        return taken
    for key in sorted(set(records)):
        node = view.nodes.get(key)
        if (
            node is None
            or key == new.key
            or node.kind != "evidence"
            or node.question != new.question
            or node.valid_from != new.valid_from  # another start: another period's claim
            or node.state not in (REFUTED, SUPERSEDED, INVALIDATED)
            or historical_node(node)
            or view.in_edges(key, DEPENDS_ON)
            or view.out_edges(key, SUPPORTS)
            or view.out_edges(key, REFUTES)
        ):
            continue
        edge = Edge(SUPERSEDES, new.key, key)
        if edge not in view.out_edges(new.key, SUPERSEDES):
            view.add_edge(edge)
            plan.new_edges.append(edge)
        record(view, plan, key, Rule.RESTATED, [new.key])
        taken.append(key)
    plan.meta.restated = taken
    return taken


def propagate_refutation(
    view: BeliefView, plan: Plan, memory: Optional[Memory] = None, ghosts: Iterable[str] = ()
) -> list[str]:
    """Relabel everything downstream of the contradicted evidence and the new fact
    (three-valued: see :mod:`memory_core.core.tms`); decay non-critical dependents.
    Returns every node that died in this revision (premises first)."""
    meta = plan.meta
    verdicts = meta.verdicts
    notes = {}
    new = plan.new_node
    for key, decision in meta.decisions.items():
        if new is not None and decision.winner == EVIDENCE:
            notes[new.key] = ("outranked", decision.reason)
        elif new is not None and decision.winner is None:
            notes.setdefault(new.key, (Rule.DISPUTED, decision.reason))
            notes[key] = (Rule.DISPUTED, decision.reason)
    seeds = sorted(verdicts) + ([new.key] if new is not None else [])
    outcome = relabel(
        view,
        plan,
        seeds,
        forced_dead=meta.forced,
        verdicts={k: v for k, v in verdicts.items() if k not in notes},
        memory=memory,
        ghosts=ghosts,
        notes=notes,
    )
    # a dispute one side of which another winner killed is over, as if resolved (no label changes)
    end_settled_disputes(view, plan, ghosts)
    plan.died = plan.died + [k for k in outcome.died if k not in plan.died]
    plan.revived = plan.revived + outcome.revived
    note_unjudged(plan)
    decay(view, plan, plan.died)
    end_returning(view, plan, ghosts)  # a timed value that came back holds until its slot's next value
    return plan.died


def note_unjudged(plan: Plan) -> None:
    """Evidence reinstated without being re-judged (no judge could decide): its
    reinstatement record says so (:mod:`memory_core.core.reinstatement`)."""
    notes = plan.meta.reinstate_notes
    for change in plan.changes:
        if change.key in notes and change.rule == Rule.REINSTATED and notes[change.key] not in change.detail:
            change.detail = f"{change.detail}; {notes[change.key]}" if change.detail else notes[change.key]


def promote_competing_hypothesis(view: BeliefView, plan: Plan, memory: Optional[Memory] = None) -> list[str]:
    promoted = rescore(view, plan, plan.died)
    if plan.revived:
        reinstate_hypotheses(view, plan, plan.revived, memory)
    return promoted


def forget_orphans(view: BeliefView, plan: Plan, ghosts: Iterable[str] = ()) -> list[str]:
    """Forget dead nodes nothing alive needs. A node a disputed node consumes or
    supersedes is kept too (the dispute may still go its way), and ``ghosts``
    (forgotten nodes rebuilt from tombstones) that stay dead are already gone:
    never forgotten twice. A ghost the relabelling brought back that a later step of
    the same plan killed again (a value reinstated only until its slot's next value,
    so a conclusion resting on it and on a later value never held) and that nothing
    needs is forgotten again: it leaves ``plan.restored`` (its tombstone stands, it
    is not stored again), as the reference stores a forgotten node again only when
    its label is no longer dead."""
    gone = set(ghosts) - set(plan.restored)

    def disputed_need(key: str) -> bool:
        return any(view.state(k) == DISPUTED for k in view.consumers(key) + view.superseders(key))

    plan.forgotten = [k for k in forget(view, plan) if k not in gone and not disputed_need(k)]
    again = set(plan.forgotten)
    plan.restored = [k for k in plan.restored if k not in again]
    return plan.forgotten


def plan_revision(
    view: BeliefView,
    verdicts: list[tuple[str, str, float]],
    epoch: int,
    fact: str | None = None,
    new_node: Node | None = None,
    decisions: Optional[dict] = None,
    memory: Optional[Memory] = None,
    ghosts: Iterable[str] = (),
) -> Plan:
    """``verdicts``: (evidence key, "contradicts"|"supersedes", confidence);
    ``decisions``: who won each (:func:`memory_core.core.policy.decide`; default: the fact)."""
    plan = begin(view, verdicts, epoch, fact, new_node, decisions)
    propagate_refutation(view, plan, memory, ghosts)
    promote_competing_hypothesis(view, plan, memory)
    forget_orphans(view, plan, ghosts)
    return plan


def plan_resolve(
    view: BeliefView,
    loser: str,
    winner: str,
    epoch: int,
    memory: Optional[Memory] = None,
    ghosts: Iterable[str] = (),
) -> Plan:
    """End the dispute between two disputed evidence nodes: the ``disputes``
    edge is replaced by ``supersedes`` winner→loser, and everything relabels (the
    loser's dependents die and are forgotten as usual; the winner's hold again).
    The labels are those the winner would have had by winning outright. Between two
    alive facts of one question (a contradiction no judge decided) the edge is
    added: the loser is refuted as by a revision pinned on it."""
    plan = begin_resolve(view, loser, winner, epoch)
    return finish_resolve(view, plan, loser, winner, memory, ghosts)


def begin_resolve(view: BeliefView, loser: str, winner: str, epoch: int) -> Plan:
    """:func:`plan_resolve`'s first half: the new edges, nothing relabelled yet (the
    caller may re-judge what the resolution would bring back, :mod:`.reinstatement`)."""
    edges = check_resolvable(view, loser, winner)
    plan = Plan(epoch=epoch, fact=None)
    # a dispute keeps its judge's confidence; a contradiction decided by hand is certain
    confidence = max(
        (e.confidence for e in edges if e.confidence is not None), default=None if edges else 1.0
    )
    for edge in edges:
        remove_edge(view, edge)
        plan.removed_edges.append(edge)
    edge = Edge(SUPERSEDES, winner, loser, confidence=confidence)
    if edge not in view.out_edges(winner, SUPERSEDES):
        view.add_edge(edge)
        plan.new_edges.append(edge)
    plan.decisions = [
        {
            "evidence": loser,
            "fact": winner,
            "winner": winner,
            "loser": loser,
            "policy": "resolve",
            "reason": (
                f"{winner} kept: dispute with {loser} resolved by hand (resolve)"
                if edges
                else f"{winner} kept: it contradicts {loser}, decided by hand (resolve)"
            ),
        }
    ]
    plan.meta = PlanInputs(seeds=[winner, loser])
    return plan


def finish_resolve(
    view: BeliefView,
    plan: Plan,
    loser: str,
    winner: str,
    memory: Optional[Memory] = None,
    ghosts: Iterable[str] = (),
) -> Plan:
    """:func:`plan_resolve`'s second half: relabel, decay, promote, forget."""
    if plan.removed_edges:  # a dispute ended
        notes = {
            loser: (Rule.CONTRADICTED, f"dispute resolved in favour of {winner}"),
            winner: (Rule.RESOLVED, f"dispute with {loser} resolved in its favour"),
        }
    else:  # two alive facts: the caller decided the winner contradicts the loser
        notes = {loser: (Rule.CONTRADICTED, "the caller's decision: resolve")}
    outcome = relabel(view, plan, [winner, loser], memory=memory, ghosts=ghosts, notes=notes)
    # the dispute edge is gone, so the relabelling cannot see it: the winner's cause is the
    # loser (not an antecedent of its own that merely completes its justification)
    for change in plan.changes:
        if change.key == winner and change.rule == Rule.RESOLVED:
            change.cause = [loser]
    end_settled_disputes(view, plan, ghosts)  # the loser's disputes with others end with it
    plan.died = outcome.died
    plan.revived = outcome.revived
    note_unjudged(plan)
    decay(view, plan, plan.died)
    end_returning(view, plan, ghosts)
    place_settled(view, plan, ghosts)  # the winner, out of dispute, takes its place in its timeline
    reopen_ended(view, plan, ghosts)  # a value the loser's start had ended holds on past it
    promote_competing_hypothesis(view, plan, memory)
    forget_orphans(view, plan, ghosts)
    return plan


def plan_relabel(
    view: BeliefView,
    keys: list[str],
    epoch: int,
    memory: Optional[Memory] = None,
    dead_as: Optional[dict[str, str]] = None,
) -> Plan:
    """``check --repair``: ``keys`` are nodes whose stored state disagrees with the three-valued
    labelling of the whole view (changed behind FALSIFY's back). They and what depends on them
    are relabelled as a revision would (:func:`relabel`: each change recorded with its cause,
    rule ``repair``); hypotheses' weights follow (decay, rescore). ``dead_as``: key ->
    ``refuted``/``superseded``, the dead state an evidence premise had when it was last written
    (default refuted)."""
    plan = Plan(epoch=epoch)
    dead_as = dead_as or {}
    verdicts: dict[str, tuple[str, Optional[float]]] = {
        k: ("supersedes" if dead_as.get(k) == SUPERSEDED else "contradicts", None) for k in keys
    }
    notes = {
        k: (
            "repair",
            f"repaired by check: its stored state ({view.nodes[k].state}) disagreed with the "
            "three-valued labelling",
        )
        for k in keys
        if k in view.nodes
    }
    outcome = relabel(view, plan, keys, verdicts=verdicts, memory=memory or Memory(), notes=notes)
    plan.died = list(outcome.died)
    if plan.died:
        decay(view, plan, plan.died)
        rescore(view, plan, plan.died)
    return plan


def plan_settle(
    view: BeliefView, touched: list[str], epoch: int, gained: Optional[Mapping[str, Iterable[str]]] = None
) -> Plan:
    """Loading (and ``check --repair`` of unfounded nodes): ``touched`` = new nodes and nodes
    that gained an edge. They and what rests on them or they attack take the state the
    three-valued labelling gives them: a node resting on a dead antecedent (a forgotten one
    included, as a dead ghost) enters ``invalidated``, one resting on a disputed one enters
    ``disputed``; the consequences follow as in a revision. With no dispute in the view the
    labels are two-valued, and the unfounded-set computation (:func:`settle`) gives them at
    a fraction of the cost of the alternating fixpoint (a large load); otherwise
    :func:`relabel` does. ``gained``: node -> the non-critical dependencies it gained with
    this load: one that is dead already halves its confidence (rule 4), as its death would."""
    plan = Plan(epoch=epoch)
    seeds = sorted(k for k in dict.fromkeys(touched) if k in view.nodes)
    if any(n.state == DISPUTED for n in view.nodes.values()) or bool(view.dispute_edges()):
        outcome = relabel(view, plan, seeds)
        plan.died = list(outcome.died)
    else:
        candidates = {k for k in seeds if view.nodes[k].alive and view.justifications(k)}
        candidates |= dependent_closure(view, seeds)
        plan.died = settle(view, plan, candidates)
        # a loaded supersedes edge attacks its target: relabel what it reaches (three-valued)
        attacked = sorted(
            {e.dst for k in seeds for e in view.out_edges(k) if e.kind == SUPERSEDES}
            | {k for k in seeds if view.in_edges(k, SUPERSEDES)}
        )
        if attacked:
            outcome = relabel(view, plan, attacked)
            plan.died = plan.died + [k for k in outcome.died if k not in plan.died]
    if plan.died or gained:
        decay(view, plan, plan.died, gained)
    if plan.died:
        rescore(view, plan, plan.died)
    return plan
