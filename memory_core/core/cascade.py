"""The cascade: refute contradicted evidence, invalidate what rested on it.

Rules (pure functions over a :class:`BeliefView`; each changes a node at most
once per revision and always terminates):

* **Refute.** Evidence contradicted by a new fact becomes ``refuted`` (judge
  said *contradicts*) or ``superseded`` (*supersedes*), feedback weight 0.
* **Justifications.** A node's critical ``depends_on`` edges with the same
  ``group`` form one justification; critical edges without a group form one
  default justification together. A justification *holds* when every one of its
  antecedents is alive. A node without critical ``depends_on`` edges is a premise.
* **Well-founded support** (a JTMS's labelling). A non-premise node is alive
  iff at least one justification holds through alive nodes that are themselves
  well-founded. After a change, every alive node downstream of the newly dead
  ones (its *dependent closure*) is provisionally taken out; then nodes are put
  back, in a least fixpoint, while one of their justifications holds using only
  nodes outside the closure or already put back. Whatever stays out becomes
  ``invalidated``: nodes holding each other up in a cycle go down together.
  Nodes outside the closure cannot change, so a revision touches only the
  affected subgraph.
* **Non-critical dependencies.** An alive node's confidence is its confidence with
  every non-critical ``depends_on`` target alive (an unset one counts as 1.0) times
  :data:`DECAY` per such target that is dead now: each that dies halves it, each that
  comes back restores it; the dependent stays alive.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from memory_core.core.beliefs import ALIVE, DEAD, INVALIDATED, BeliefView
from memory_core.core.vocabulary import DEPENDS_ON, Rule
from memory_core.core.plan import Plan, Snapshot, record

DECAY = 0.5


def dependent_closure(view: BeliefView, dead: list[str]) -> set[str]:
    """Alive nodes that rest, through critical depends_on edges, on a dead node."""
    closure: set[str] = set()
    frontier = list(dead)
    while frontier:
        key = frontier.pop()
        for dependent in view.dependents(key, critical_only=True):
            node = view.nodes.get(dependent)
            if node is not None and node.alive and dependent not in closure:
                closure.add(dependent)
                frontier.append(dependent)
    return closure


def unfounded(view: BeliefView, candidates: set[str]) -> set[str]:
    """The candidates with no well-founded justification (least fixpoint)."""
    out = set(candidates)
    changed = True
    while changed:
        changed = False
        for key in sorted(out):
            for _, antecedents in view.justifications(key):
                if all(a not in out and view.state(a) == ALIVE for a in antecedents):
                    out.discard(key)
                    changed = True
                    break
    return out


def settle(view: BeliefView, plan: Plan, candidates: set[str]) -> list[str]:
    """Relabel ``candidates`` (alive nodes); those left unfounded become invalidated."""
    victims = sorted(unfounded(view, candidates))
    victim_set = set(victims)
    for key in victims:

        def dead(a: str) -> bool:
            return a in victim_set or view.state(a) != ALIVE

        lost = sorted({a for _, ants in view.justifications(key) for a in ants if dead(a)})
        cycle = cycle_through(view, key, victim_set) if lost and all(a in victim_set for a in lost) else None
        detail = (
            f"only circular support remained ({' -> '.join(cycle)})"
            if cycle
            else "no justification holds: " + lost_text(view, key, dead)
        )
        record(view, plan, key, Rule.JUSTIFICATION_LOST, lost, detail, state=INVALIDATED, weight=0.0)
    return victims


def cycle_through(view: BeliefView, key: str, within: set[str]) -> Optional[list[str]]:
    """A path ``key -> a -> ... -> key`` along critical ``depends_on`` edges (node to
    antecedent) through nodes of ``within`` only, or None when ``key`` is on no such cycle."""
    stack = [
        (a, [key, a]) for a in sorted({a for _, g in view.justifications(key) for a in g}) if a in within
    ]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        if node == key:
            return path
        if node in seen:
            continue
        seen.add(node)
        for _, group in view.justifications(node):
            for a in group:
                if a == key or (a in within and a not in seen):
                    stack.append((a, path + [a]))
    return None


def lost_text(view: BeliefView, key: str, dead) -> str:
    """Which antecedents each justification of ``key`` lost (``dead(a)``), in words."""
    justs = view.justifications(key)
    parts = []
    for name, group in justs:
        gone = sorted(a for a in group if dead(a))
        if not gone:
            continue
        ants = f"{', '.join(gone)} {'is' if len(gone) == 1 else 'are'} dead"
        parts.append(ants if len(justs) == 1 else f"justification {name or '(default)'}: {ants}")
    if len(justs) == 1:
        return (
            f"its antecedent{'s' if ' are ' in parts[0] else ''} {parts[0]}"
            if parts
            else "its support is dead"
        )
    return f"each of its {len(justs)} justifications lost a member ({'; '.join(parts)})"


def decay(
    view: BeliefView,
    plan: Plan,
    newly_dead: Iterable[str] = (),
    gained: Optional[Mapping[str, Iterable[str]]] = None,
) -> list[str]:
    """Rule 4, a function of the current state: an alive node's confidence is its *base*
    (its confidence with every non-critical dependency alive; unset counts as 1.0) times
    :data:`DECAY` per non-critical ``depends_on`` target that is dead now. Recomputed for the
    alive nodes whose count may have moved in this plan: a non-critical dependency died or
    came back, or the node itself holds again (:func:`memory_core.core.tms.relabel` gives
    a node that comes back its base from the log). A dependency that comes back restores
    what its death took (rule ``reinstated``). ``newly_dead``: nodes the caller killed
    (their changes are in the plan too); ``gained``: node -> the non-critical dependencies it
    gained in this plan (a load: a new node's own, or a stored node's new edges), which its
    confidence at the start does not reflect: one already dead halves it as a death would.
    Returns the nodes whose confidence went down."""
    memory = plan.meta.memory
    start: dict[str, Snapshot] = {}
    for change in plan.changes:
        start.setdefault(change.key, change.before)

    def dead_now(key: str) -> bool:
        return view.state(key) in DEAD

    def dead_at_start(key: str) -> bool:
        return (start[key]["state"] if key in start else view.state(key)) in DEAD

    moved = {k for k in start if dead_at_start(k) != dead_now(k)}
    moved |= {k for k in newly_dead if dead_now(k) and not dead_at_start(k)}
    candidates = {e.src for k in moved for e in view.in_edges(k, DEPENDS_ON) if not e.critical}
    candidates |= {k for k in start if start[k]["state"] != ALIVE and view.state(k) == ALIVE}
    gained = {k: set(v) for k, v in (gained or {}).items()}
    candidates |= set(gained)
    weakened: list[str] = []
    for key in sorted(candidates):
        node = view.nodes.get(key)
        deps = sorted({e.dst for e in view.out_edges(key, DEPENDS_ON) if not e.critical})
        if node is None or not node.alive or not deps:
            continue
        if memory is not None and key in memory.undecayed:  # the log remembers its base
            base = memory.undecayed[key]
        elif key in start and start[key]["state"] != ALIVE:
            # it holds again: the confidence it came back with is its base
            base = next(
                c.after["confidence"] for c in plan.changes if c.key == key and c.after["state"] == ALIVE
            )
        else:
            first = start[key]["confidence"] if key in start else node.confidence
            counted = [d for d in deps if d not in gained.get(key, ())]  # those its confidence reflects
            base = None if first is None else first * 2 ** sum(dead_at_start(d) for d in counted)
        dead = [d for d in deps if dead_now(d)]
        new = (
            round((1.0 if base is None else base) * DECAY ** len(dead), 6)
            if dead or base is not None
            else None
        )
        if new == node.confidence:
            continue
        if node.confidence is None or (new is not None and new < node.confidence):
            causes = sorted(d for d in dead if d in moved) or dead
            detail = f"confidence x{DECAY} per dead non-critical dependency ({len(dead)})"
            record(view, plan, key, Rule.NONCRITICAL_DECAY, causes, detail, confidence=new)
            weakened.append(key)
        else:
            back = sorted(d for d in deps if d in moved and not dead_now(d))
            still = f"; {len(dead)} still dead" if dead else ""
            detail = (
                f"confidence restored to {new if new is not None else 'unset'}: non-critical "
                f"dependenc{'y' if len(back) == 1 else 'ies'} {', '.join(back)} alive again{still}"
            )
            record(view, plan, key, Rule.REINSTATED, back, detail, confidence=new)
    return weakened
