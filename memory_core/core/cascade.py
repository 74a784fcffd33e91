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
* **Non-critical dependencies.** Each non-critical ``depends_on`` target that
  dies in this revision multiplies the dependent's confidence by
  :data:`DECAY` (an unset confidence counts as 1.0); the dependent stays alive.
"""

from __future__ import annotations

from typing import Optional

from memory_core.core.beliefs import ALIVE, INVALIDATED, BeliefView
from memory_core.core.vocabulary import DEPENDS_ON, Rule
from memory_core.core.plan import Plan, record

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


def decay(view: BeliefView, plan: Plan, newly_dead: list[str]) -> list[str]:
    """Lower the confidence of alive nodes with a non-critical dependency that died."""
    weakened: list[str] = []
    dead = set(newly_dead)
    hits: dict[str, list[str]] = {}
    for key in newly_dead:
        for edge in view.in_edges(key, DEPENDS_ON):
            if not edge.critical and edge.src in view.nodes and view.nodes[edge.src].alive:
                hits.setdefault(edge.src, []).append(key)
    for key in sorted(hits):
        causes = sorted(set(hits[key]) & dead)
        node = view.nodes[key]
        base = 1.0 if node.confidence is None else node.confidence
        new = round(base * DECAY ** len(causes), 6)
        detail = f"confidence x{DECAY} per dead non-critical dependency ({len(causes)})"
        record(view, plan, key, Rule.NONCRITICAL_DECAY, causes, detail, confidence=new)
        weakened.append(key)
    return weakened
