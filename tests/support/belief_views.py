"""Small hand-built belief views for the pure-rule tests: nodes by key and kind in one
question "Q" (conclusions with confidence 0.8), or by key, kind and state alone; depends_on
edges, a new fact."""

from __future__ import annotations

from memory_core.core.beliefs import ALIVE, BeliefView, Edge, Node


def view_of(nodes: dict[str, str], edges: list[Edge], **states) -> BeliefView:
    """A view of ``nodes`` (key -> kind) and ``edges``; ``states``: key -> state (else alive)."""
    v = BeliefView()
    for key, kind in nodes.items():
        v.add_node(
            Node(
                key,
                kind,
                question="Q",
                state=states.get(key, ALIVE),
                confidence=0.8 if kind == "conclusion" else None,
            )
        )
    for e in edges:
        v.add_edge(e)
    return v


def view_in_states(nodes: dict[str, tuple[str, str]], edges: list[Edge]) -> BeliefView:
    """A view of ``nodes`` (key -> (kind, state)) and ``edges``, with no question nor confidence:
    explain's pure tests read the reasons given for exactly these states."""
    view = BeliefView()
    for key, (kind, state) in nodes.items():
        view.add_node(Node(key, kind, state=state))
    for edge in edges:
        view.add_edge(edge)
    return view


def dep(src, dst, critical=True, group=None):
    return Edge("depends_on", src, dst, critical=critical, group=group)


def fact(key="F"):
    return Node(key, "evidence", question="Q")
