"""Three-valued truth maintenance: disputes, resolution and reinstatement (pure).

Labels are those of a well-founded semantics with "undefined": every evidence
or conclusion node is ``alive``, ``disputed`` (undefined) or dead. The graph is
read as a normal logic program:

* a node holds when one of its justifications holds (all antecedents hold; its
  critical ``depends_on`` edges grouped by ``group``) and none of its
  *attackers* holds; a node without justifications (a premise) needs only the
  latter;
* a node's attackers are the nodes that ``supersedes`` it (whoever won a
  contradiction supersedes the loser) and its rivals in a ``disputes`` edge
  (two facts no policy could order attack each other);
* a premise nothing attacks holds unless it is stored dead (a loaded premise is
  alive; evidence killed without a recorded winner stays dead; a disputed one
  whose dispute is gone holds).

:func:`labels` computes the well-founded model by Van Gelder's alternating
fixpoint: ``T`` (alive) is the least fixpoint of Γ², ``U = Γ(T)`` is what is
not dead; ``U \\ T`` is disputed. So a justification is alive when all its
antecedents are alive, disputed when none is dead but some are disputed, and a
node takes the best of its justifications; nodes holding each other up in a
cycle stay dead (a least fixpoint); two facts in a dispute are both disputed;
and when the evidence R that refuted E is itself refuted, E holds again unless
another alive node supersedes it (*reinstatement*).

:func:`relabel` recomputes the labels downstream of some seeds, records every
change (with its cause) in the plan, and returns what died, what came back and
what became disputed. Dead nodes that were forgotten can take part as *ghosts*
(the adapter rebuilds them from their tombstones): a ghost that holds again is
listed in ``plan.restored``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from memory_core.core.beliefs import BeliefView, Edge, Node
from memory_core.core.cascade import cycle_through, lost_text
from memory_core.core.errors import InputError
from memory_core.core.plan import LogMemory, NodeChange, Plan, record
from memory_core.core.promotion import undo_promotions_over
from memory_core.core.vocabulary import (
    Rule,
    ALIVE,
    DEAD,
    DEPENDS_ON,
    DISPUTED,
    DISPUTES,
    INVALIDATED,
    REFUTED,
    SUPERSEDED,
    SUPERSEDES,
    SUPPORTS,
)

L_ALIVE, L_DISPUTED, L_DEAD = "alive", "disputed", "dead"
LABELLED_KINDS = ("evidence", "conclusion")
RELATION_STATE = {"contradicts": REFUTED, "supersedes": SUPERSEDED}


def historical_node(node: Optional[Node]) -> bool:
    """Superseded in time (core.validity): evidence whose validity ended (it has a
    ``valid_to``), or a conclusion that rested on one (conclusions are otherwise never
    superseded). It was true: it holds no more, yet what it defeated stays defeated."""
    return (
        node is not None
        and node.state == SUPERSEDED
        and (node.valid_to is not None or node.kind == "conclusion")
    )


def label_of(state: str) -> str:
    if state == ALIVE:
        return L_ALIVE
    if state == DISPUTED:
        return L_DISPUTED
    return L_DEAD


def attackers(view: BeliefView, key: str) -> list[str]:
    """Nodes whose holding kills ``key``: its superseders and its dispute rivals."""
    found = [e.src for e in view.in_edges(key, SUPERSEDES)]
    found += [e.src for e in view.in_edges(key, DISPUTES)] + [e.dst for e in view.out_edges(key, DISPUTES)]
    return sorted(set(found) - {key})


def rivals(view: BeliefView, key: str) -> list[str]:
    """The other side of each dispute ``key`` is in."""
    return sorted(
        {e.src for e in view.in_edges(key, DISPUTES)} | {e.dst for e in view.out_edges(key, DISPUTES)}
    )


def labellable(view: BeliefView, key: str) -> bool:
    node = view.nodes.get(key)
    return node is not None and node.kind in LABELLED_KINDS


def downstream(view: BeliefView, seeds: Iterable[str]) -> set[str]:
    """``seeds`` and every node whose label can depend on theirs: critical
    dependents, superseded nodes and dispute rivals, transitively."""
    found: set[str] = set()
    frontier = [k for k in seeds if labellable(view, k)]
    while frontier:
        key = frontier.pop()
        if key in found:
            continue
        found.add(key)
        nxt = view.dependents(key, critical_only=True)
        nxt += [e.dst for e in view.out_edges(key, SUPERSEDES)]
        nxt += rivals(view, key)
        frontier.extend(k for k in nxt if k not in found and labellable(view, k))
    return found


def labels(
    view: BeliefView, scope: Optional[Iterable[str]] = None, forced_dead: Iterable[str] = ()
) -> dict[str, str]:
    """The three-valued labels of ``scope`` (default: every evidence and
    conclusion node); nodes outside it keep the label of their stored state.
    ``forced_dead``: nodes killed outright (a contradiction with no recorded winner)."""
    scope = {k for k in (view.nodes if scope is None else scope) if labellable(view, k)}
    forced = set(forced_dead)
    rules: dict[str, tuple[list[str], Optional[list[list[str]]], str]] = {}
    for key in scope:
        justs = [ants for _, ants in view.justifications(key)]
        rules[key] = (attackers(view, key), justs or None, label_of(view.nodes[key].state))
    # the nodes outside the scope that the scope's rules read keep the label of their stored state
    refs = {a for atts, justs, _ in rules.values() for a in atts} | {
        a for _, justs, _ in rules.values() for ants in justs or () for a in ants
    }
    outside = {k: label_of(view.nodes[k].state) for k in refs - scope if k in view.nodes}
    fixed_true = {k for k, lab in outside.items() if lab == L_ALIVE}
    # evidence superseded in time (it has a valid_to: core.validity) was true: what it
    # defeated stays defeated, so it still attacks though it holds no more
    ended = lambda k: historical_node(view.nodes[k])  # noqa: E731
    historical = {a for atts, _, _ in rules.values() for a in atts if a in view.nodes and ended(a)}
    historical |= {k for k in scope if ended(k)}  # and it holds no more, whatever its justifications
    fixed_undefined = {k for k, lab in outside.items() if lab == L_DISPUTED}
    order = sorted(scope)

    def gamma(assumed: set[str]) -> set[str]:
        """Least model of the program with every ``not a`` read as ``a not in assumed``."""
        true = set(fixed_true) | {k for k in fixed_undefined if k not in assumed}
        changed = True
        while changed:
            changed = False
            for key in order:
                if key in true or key in forced or key in historical:
                    continue
                atts, justs, stored = rules[key]
                if any(a in assumed or a in historical for a in atts):
                    continue
                if justs is None:
                    if atts:
                        ok = True
                    else:  # an unattacked premise holds unless it is stored dead
                        ok = stored != L_DEAD
                else:
                    ok = any(all(a in true for a in ants) for ants in justs)
                if ok:
                    true.add(key)
                    changed = True
        return true

    alive: set[str] = set()
    while True:
        possible = gamma(alive)
        nxt = gamma(possible)
        if nxt == alive:
            break
        alive = nxt
    return {k: L_ALIVE if k in alive else L_DISPUTED if k in possible else L_DEAD for k in scope}


@dataclass
class Memory:
    """What the log remembers of earlier deaths, so a node that comes back gets
    its weight and confidence back and a promotion made because of it is undone.

    ``before_death``: key -> the snapshot ({state, weight, confidence}) before its latest death;
    ``promotions``: hypothesis -> [(the rival promoted over it, the rival's weight before)];
    ``weakened``: hypothesis -> its weight before it was weakened (no rival);
    ``undecayed``: node -> its confidence before its first non-critical decay (its base)."""

    before_death: dict[str, dict] = field(default_factory=dict)
    promotions: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    weakened: dict[str, float] = field(default_factory=dict)
    undecayed: dict[str, Optional[float]] = field(default_factory=dict)

    @classmethod
    def from_changes(cls, changes: Iterable[dict]) -> "Memory":
        """From logged changes ({key, rule, cause, before, after}) in log order."""
        memory = cls()
        memory.add(changes)
        return memory

    def add(self, changes: Iterable[dict]) -> None:
        """Fold more logged changes in (log order): ``from_changes(a + b)`` equals
        ``from_changes(a)`` then ``add(b)``."""
        for change in changes:
            key, rule, before, after = change["key"], change["rule"], change["before"], change["after"]
            if label_of(before["state"]) != L_DEAD and label_of(after["state"]) == L_DEAD:
                self.before_death[key] = dict(before)
            if rule == Rule.PROMOTED:
                for loser in change.get("cause", []):
                    self.promotions.setdefault(loser, []).append((key, float(before["weight"])))
            if rule == Rule.WEAKENED_NO_RIVAL:
                self.weakened[key] = float(before["weight"])
            if rule == Rule.NONCRITICAL_DECAY and key not in self.undecayed:
                self.undecayed[key] = before.get("confidence")

    def copy(self) -> "Memory":
        return Memory(
            dict(self.before_death),
            {k: list(v) for k, v in self.promotions.items()},
            dict(self.weakened),
            dict(self.undecayed),
        )

    def then(self, later: "Memory") -> "Memory":
        """This memory followed by ``later`` (what more changes taught): the latest death and
        weakening win, promotions add up, the first base of a confidence stays."""
        return Memory(
            {**self.before_death, **later.before_death},
            {
                k: list(self.promotions.get(k, [])) + list(later.promotions.get(k, []))
                for k in {*self.promotions, *later.promotions}
            },
            {**self.weakened, **later.weakened},
            {**later.undecayed, **self.undecayed},
        )

    def absorb(self, plan: Plan) -> None:
        """Add a plan's changes (pure tests chain plans with it)."""
        fresh = Memory.from_changes(c.as_dict() for c in plan.changes)
        self.before_death.update(fresh.before_death)
        for loser, items in fresh.promotions.items():
            self.promotions.setdefault(loser, []).extend(items)
        self.weakened.update(fresh.weakened)
        for key, base in fresh.undecayed.items():
            self.undecayed.setdefault(key, base)


@dataclass
class Outcome:
    died: list[str] = field(default_factory=list)
    revived: list[str] = field(default_factory=list)
    disputed: list[str] = field(default_factory=list)


def relabel(
    view: BeliefView,
    plan: Plan,
    seeds: Iterable[str],
    forced_dead: Iterable[str] = (),
    verdicts: Optional[Mapping[str, tuple[str, Optional[float]]]] = None,
    memory: Optional[Memory] = None,
    ghosts: Iterable[str] = (),
    notes: Optional[Mapping[str, tuple[str, str]]] = None,
) -> Outcome:
    """Recompute the labels downstream of ``seeds`` and record every change.

    ``verdicts``: evidence key -> (judge relation, confidence), for the wording and
    the dead state (``refuted``/``superseded``) of evidence that dies here;
    ``notes``: key -> (rule, detail) overriding the recorded rule (resolve).
    Each node changes at most once. Order: premises that die, then nodes that
    lose their justification, then newly disputed nodes, then nodes that hold again."""
    verdicts = verdicts or {}
    notes = notes or {}
    # none given: a later step of the same revision, with the memory it was given
    log: LogMemory = (
        memory if memory is not None else plan.meta.memory if plan.meta.memory is not None else Memory()
    )
    plan.meta.memory = log  # what the decay and the rescoring that follow read
    ghosts = set(ghosts)
    forced = set(forced_dead)
    scope = downstream(view, list(seeds) + sorted(forced))
    new = labels(view, scope, forced)
    old = {k: label_of(view.nodes[k].state) for k in scope}
    moved = sorted(k for k in scope if new[k] != old[k])
    dying = [k for k in moved if new[k] == L_DEAD]

    def winners_of(key: str) -> list[str]:
        """The nodes that won a contradiction against ``key`` and hold (or, superseded in time,
        still attack): its ``supersedes`` sources. A rival in a dispute never won one: one that
        holds now holds because ``key`` died for another reason (its support failed), and the
        dispute comes back with that support."""
        return [
            e.src
            for e in view.in_edges(key, SUPERSEDES)
            if e.src != key
            and (
                new.get(e.src, label_of(view.state(e.src))) == L_ALIVE
                or historical_node(view.nodes.get(e.src))
            )
        ]

    def struck(key: str) -> bool:
        """Killed by a contradiction: killed outright, or a node that won a contradiction
        against it holds (:func:`winners_of`). Such a node is refuted (rule 1) even when it
        rests on something: its justifications may all hold, what killed it is its attacker."""
        return key in forced or bool(winners_of(key))

    # "premises" here: the nodes that die as contradicted evidence does, refuted or superseded
    premises = [k for k in dying if not view.justifications(k) or struck(k)]
    victims = [k for k in dying if k not in set(premises)]
    outcome = Outcome()
    for key in premises:
        winners = [a for a in winners_of(key) if new.get(a, label_of(view.state(a))) == L_ALIVE]
        relation, confidence = verdicts.get(key, ("contradicts", None))
        state = RELATION_STATE.get(relation, REFUTED)
        rule: str = Rule.CONTRADICTED if state == REFUTED else Rule.SUPERSEDED_BY_FACT
        if key in forced or key in verdicts:
            detail = f"judge: {relation}" + (
                f" (confidence {confidence:.2f})" if confidence is not None else ""
            )
        else:
            detail = f"superseded by {', '.join(winners)}"
        rule, detail = notes.get(key, (rule, detail))
        record(view, plan, key, rule, winners, detail, state=state, weight=0.0)
        outcome.died.append(key)
    victim_set = set(victims)
    for key in victims:
        ants = {a for _, group in view.justifications(key) for a in group}
        lost = sorted(a for a in ants if a in victim_set or label_of(view.state(a)) == L_DEAD)
        cycle = cycle_through(view, key, victim_set) if lost and all(a in victim_set for a in lost) else None
        if cycle:  # a real cycle: what is left of its support runs back to itself
            detail = f"only circular support remained ({' -> '.join(cycle)})"
        else:
            detail = "no justification holds: " + lost_text(
                view, key, lambda a: a in victim_set or label_of(view.state(a)) == L_DEAD
            )
        if not lost:  # its justifications hold, but an attacker holds
            lost = [a for a in attackers(view, key) if new.get(a, label_of(view.state(a))) == L_ALIVE]
            detail = f"superseded by {', '.join(lost)}"
        record(view, plan, key, Rule.JUSTIFICATION_LOST, lost, detail, state=INVALIDATED, weight=0.0)
        outcome.died.append(key)
    for key in (k for k in moved if new[k] == L_DISPUTED):
        node = view.nodes[key]
        cause = [a for a in attackers(view, key) if new.get(a, label_of(view.state(a))) != L_DEAD]
        cause += sorted(
            {
                a
                for _, g in view.justifications(key)
                for a in g
                if new.get(a, label_of(view.state(a))) == L_DISPUTED
                # an antecedent that died here: the justification it broke no longer holds it
                or (a in scope and old[a] != L_DEAD and new[a] == L_DEAD)
            }
            - set(cause)
        )
        detail = (
            f"in dispute with {', '.join(rivals(view, key))}"
            if rivals(view, key)
            else "its support runs through disputed nodes"
        )
        rule, detail = notes.get(key, (Rule.DISPUTED, detail))
        weight = node.weight if old[key] != L_DEAD else log.before_death.get(key, {}).get("weight", 0.5)
        record(view, plan, key, rule, cause, detail, state=DISPUTED, weight=weight)
        outcome.disputed.append(key)
    for key in (k for k in moved if new[k] == L_ALIVE):
        node = view.nodes[key]
        gone = [a for a in attackers(view, key) if new.get(a, label_of(view.state(a))) == L_DEAD]
        holding = next(
            (
                g
                for _, g in view.justifications(key)
                if all(new.get(a, label_of(view.state(a))) == L_ALIVE for a in g)
            ),
            [],
        )
        why_gone = "; ".join(_death(plan, a) for a in gone)
        # a rival that died for want of support, no winner over it: the disputes edge is kept
        # (end_settled_disputes) and the dispute comes back with that support
        waiting = [a for a in gone if a in rivals(view, key) and not winners_of(a)]
        if old[key] == L_DISPUTED and gone and len(waiting) == len(gone):
            detail = f"its rival {why_gone}; the dispute comes back if it holds again"
        elif old[key] == L_DISPUTED:
            detail = "dispute ended: " + (why_gone if gone else "its support holds again")
        elif gone and (node.state != INVALIDATED or not holding):
            # it died by its refuter, not by its support: its refuter's death brings it back
            detail = f"its refuter {why_gone}"
        elif holding:
            detail = f"a justification holds again ({', '.join(holding)})"
        else:
            detail = "nothing alive supersedes it any more"
        # the cause is what changed here (an antecedent that never changed only completes the
        # justification); none changed: a justification a load added, all of it the cause
        cause = sorted(a for a in set(gone) | set(holding) if a in scope and new[a] != old[a]) or sorted(
            set(gone) | set(holding)
        )
        rule, detail = notes.get(key, (Rule.REINSTATED, detail))
        before = log.before_death.get(key, {})
        after: NodeChange = {"state": ALIVE}
        if old[key] == L_DEAD:
            after["weight"] = before.get("weight", 0.5) if before.get("weight") is not None else 0.5
        if key in log.undecayed:  # its base: the non-critical decay recomputes it (cascade.decay)
            after["confidence"] = log.undecayed[key]
        record(view, plan, key, rule, cause, detail, **after)
        outcome.revived.append(key)
        if key in ghosts:
            plan.restored.append(key)
    for key in outcome.disputed:
        if key in ghosts:
            plan.restored.append(key)
    return outcome


def end_settled_disputes(view: BeliefView, plan: Plan, ghosts: Iterable[str] = ()) -> list[Edge]:
    """A dispute a revision settled, not ``resolve``: each ``disputes`` edge one side of which is
    dead, killed by an attacker other than its rival (a ``supersedes`` source that holds, or one
    superseded in time, which still attacks), while the other side is not dead, is removed and
    recorded in ``plan.removed_edges`` (the writer deletes it, undo puts it back). The dispute
    ended as a ``resolve`` ends it: if that attacker dies later, the dead side comes back next to
    its former rival, not disputed again. A side dead because its support failed keeps the edge:
    its support may come back, and the dispute with it. No label changes here; the log does: the
    rival is no cause of the dead side's death, and the rival's "dispute ended" names who killed
    the other side. Forgotten nodes (``ghosts``) are left alone (their edges are not stored)."""
    ghosts = set(ghosts)

    def settled(dead: str, rival: str) -> bool:
        node = view.nodes.get(dead)
        if node is None or dead in ghosts or rival in ghosts or label_of(node.state) != L_DEAD:
            return False
        if rival not in view.nodes or label_of(view.state(rival)) == L_DEAD:
            return False
        return any(
            view.state(e.src) == ALIVE or historical_node(view.nodes.get(e.src))
            for e in view.in_edges(dead, SUPERSEDES)
            if e.src != dead
        )

    ended: dict[str, set[str]] = {}  # a dead side -> the rivals its settled disputes were with
    removed: list[Edge] = []
    for edge in view.dispute_edges():
        for dead, rival in ((edge.src, edge.dst), (edge.dst, edge.src)):
            if settled(dead, rival):
                remove_edge(view, edge)
                plan.removed_edges.append(edge)
                removed.append(edge)
                ended.setdefault(dead, set()).add(rival)
                break
    if not ended:
        return removed
    for change in plan.changes:  # the rival held only because the dead side died: no cause of it
        if change.key in ended and label_of(change.after["state"]) == L_DEAD:
            change.cause = [c for c in change.cause if c not in ended[change.key]]
    back = {r: sorted(k for k, them in ended.items() if r in them) for rs in ended.values() for r in rs}
    for change in plan.changes:  # the rival's dispute ended: the edge is gone, name who ended it
        if (
            change.key in back
            and change.rule == Rule.REINSTATED
            and change.detail.startswith("dispute ended: ")
        ):
            gone = sorted(
                set(back[change.key])
                | {a for a in attackers(view, change.key) if label_of(view.state(a)) == L_DEAD}
            )
            change.detail = "dispute ended: " + "; ".join(_death(plan, a) for a in gone)
    return removed


def _death(plan: Plan, key: str) -> str:
    """``"F1 was refuted by F2"`` when this plan killed ``key``, else ``"F1 is dead"`` (a record
    that only kept a dead node dead, not reinstated or restated, is no death of it)."""
    for change in reversed(plan.changes):
        if (
            change.key == key
            and label_of(change.after["state"]) == L_DEAD
            and label_of(change.before["state"]) != L_DEAD
        ):
            by = f" by {', '.join(change.cause)}" if change.cause else ""
            return f"{key} was {change.after['state']}{by}"
    return f"{key} is dead"


def disputed_supporters(view: BeliefView, hypothesis: str) -> list[str]:
    return [e.src for e in view.in_edges(hypothesis, SUPPORTS) if view.state(e.src) == DISPUTED]


def reinstate_hypotheses(
    view: BeliefView, plan: Plan, revived: list[str], memory: Optional[Memory] = None
) -> list[str]:
    """A hypothesis superseded because its support died holds again when an alive
    supporter is back; a rival promoted over it gets its weight back; a hypothesis
    weakened for lack of a rival gets its weight back."""
    memory = memory or Memory()
    back: list[str] = []
    candidates = sorted({e.dst for k in revived for e in view.out_edges(k, SUPPORTS)})
    for h in candidates:
        node = view.nodes.get(h)
        if node is None or not view.alive_supporters(h):
            continue
        cause = sorted(set(view.alive_supporters(h)) & set(revived))
        if node.state == SUPERSEDED:
            weight = memory.before_death.get(h, {}).get("weight")
            record(
                view,
                plan,
                h,
                Rule.REINSTATED,
                cause,
                "alive supporting evidence is back",
                state=ALIVE,
                weight=weight if weight is not None else (node.prior or 0.5),
            )
            back.append(h)
            undo_promotions_over(view, plan, h, memory.promotions)
        elif node.alive and h in memory.weakened and node.weight < memory.weakened[h]:
            record(
                view,
                plan,
                h,
                Rule.REINSTATED,
                cause,
                "its supporting evidence is back",
                weight=memory.weakened[h],
            )
    return back


def remove_edge(view: BeliefView, edge: Edge) -> None:
    view.remove_edge(edge)


def dispute_edges(view: BeliefView, a: str, b: str) -> list[Edge]:
    return [e for e in view.out_edges(a, DISPUTES) if e.dst == b] + [
        e for e in view.out_edges(b, DISPUTES) if e.dst == a
    ]


def check_resolvable(view: BeliefView, loser: str, winner: str) -> list[Edge]:
    """What ``resolve`` replaces by ``supersedes`` WINNER->LOSER: the dispute edges between the two;
    none when they are two alive facts of one question no judge found contradictory (the
    caller decides that contradiction). InputError for anything else, nothing changed."""
    for key in (loser, winner):
        node = view.nodes.get(key)
        if node is None:
            raise InputError(f"{key!r}: no such node")
        if node.kind != "evidence":
            raise InputError(
                f"{key!r} is a {node.kind}, not evidence: only evidence is disputed or contradicted"
            )
    if loser == winner:
        raise InputError("the loser and the winner must be two different nodes")
    edges = dispute_edges(view, loser, winner)
    if edges:
        for key in (loser, winner):
            if view.nodes[key].state != DISPUTED:
                raise InputError(
                    f"{key} is {view.nodes[key].state}, not disputed: the dispute with "
                    f"{winner if key == loser else loser} is already decided"
                )
        return edges
    for key in (loser, winner):
        if view.nodes[key].state != ALIVE:
            raise InputError(
                f"{key} is {view.nodes[key].state} and not in a dispute with "
                f"{winner if key == loser else loser}: resolve decides a dispute, or a contradiction "
                "between two alive facts (explain says why it is not alive)"
            )
    a, b = view.nodes[loser].question, view.nodes[winner].question
    if a != b:
        raise InputError(
            f"{loser} belongs to question {a!r}, {winner} to {b!r}: a contradiction is decided "
            "within one question"
        )
    return []


def three_valued_violations(view: BeliefView) -> list[tuple[str, str, str]]:
    """Nodes whose stored state disagrees with the labelling of the whole view:
    (key, stored state, expected label)."""
    expected = labels(view)
    return sorted(
        (k, view.nodes[k].state, lab) for k, lab in expected.items() if label_of(view.nodes[k].state) != lab
    )


__all__ = [
    "DEAD",
    "DEPENDS_ON",
    "L_ALIVE",
    "L_DEAD",
    "L_DISPUTED",
    "Memory",
    "Outcome",
    "attackers",
    "check_resolvable",
    "disputed_supporters",
    "downstream",
    "end_settled_disputes",
    "label_of",
    "labels",
    "reinstate_hypotheses",
    "relabel",
    "remove_edge",
    "rivals",
    "three_valued_violations",
]
