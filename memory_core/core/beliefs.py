"""An in-memory view of (part of) a belief graph. Pure data: no I/O.

The store adapter fills a :class:`BeliefView` with the nodes a revision can
touch and the edges around them; the rules in :mod:`memory_core.core.cascade` read
it and return a :class:`Plan`; the adapter writes the plan back in batches.
Nodes and edges are addressed by their investigation key.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Optional

from memory_core.core.vocabulary import (  # noqa: F401  (states re-exported)
    ALIVE,
    DEAD,
    DEPENDS_ON,
    DISPUTES,
    INVALIDATED,
    REFUTED,
    REFUTES,
    STATES,
    SUPERSEDED,
    SUPERSEDES,
    SUPPORTS,
)


UNRECORDED = ""  # Node.stated_to of evidence stored before the stated end was kept


@dataclass
class Node:
    key: str
    kind: str  # question | hypothesis | evidence | conclusion
    state: str = ALIVE
    weight: float = 0.5  # feedback_weight
    confidence: Optional[float] = None
    epoch: int = 0
    question: Optional[str] = None
    prior: Optional[float] = None
    text: str = ""
    valid_from: Optional[str] = None  # evidence: when it became true in the world (core.validity)
    valid_to: Optional[str] = None  # evidence: when it stopped being true (None: still true)
    # evidence: the end its fact stated when it was recorded (None: open), kept when a later
    # value's start ends it earlier; UNRECORDED: stored before FALSIFY kept it (read as valid_to)
    stated_to: Optional[str] = UNRECORDED

    @property
    def alive(self) -> bool:
        return self.state == ALIVE


@dataclass(frozen=True)
class Edge:
    kind: str  # depends_on | supports | refutes | supersedes
    src: str
    dst: str
    critical: bool = True
    group: Optional[str] = None
    weight: float = 1.0
    confidence: Optional[float] = None
    # an antecedent shared by several justifications: one stored edge, one membership per
    # group (``group`` is then the first of them); None for the usual single group
    groups: Optional[tuple] = None

    @property
    def memberships(self) -> tuple:
        """The justifications (group names, None = the default one) this edge belongs to."""
        return tuple(self.groups) if self.groups else (self.group,)


@dataclass
class BeliefView:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._out: dict[str, list[Edge]] = defaultdict(list)
        self._in: dict[str, list[Edge]] = defaultdict(list)
        self._hypotheses: dict[str, set[str]] = defaultdict(set)
        self._disputes: list[Edge] = []  # the disputes edges: read for every fact of a batch
        for node in self.nodes.values():
            self._index_node(node)
        for edge in self.edges:
            self._index(edge)

    def _index_node(self, node: Node) -> None:
        if node.kind == "hypothesis":
            self._hypotheses[node.question or ""].add(node.key)

    def _index(self, edge: Edge) -> None:
        self._out[edge.src].append(edge)
        self._in[edge.dst].append(edge)
        if edge.kind == DISPUTES:
            self._disputes.append(edge)

    def add_node(self, node: Node) -> None:
        self.nodes[node.key] = node
        self._index_node(node)

    def add_edge(self, edge: Edge) -> None:
        self.edges.append(edge)
        self._index(edge)

    def remove_edge(self, edge: Edge) -> None:
        self.edges.remove(edge)
        self._out[edge.src].remove(edge)
        self._in[edge.dst].remove(edge)
        if edge.kind == DISPUTES:
            self._disputes.remove(edge)

    def dispute_edges(self) -> list[Edge]:
        """Every ``disputes`` edge of the view (a copy: the caller may remove them)."""
        return list(self._disputes)

    def out_edges(self, key: str, kind: str | None = None) -> list[Edge]:
        return [e for e in self._out.get(key, ()) if kind is None or e.kind == kind]

    def in_edges(self, key: str, kind: str | None = None) -> list[Edge]:
        return [e for e in self._in.get(key, ()) if kind is None or e.kind == kind]

    def state(self, key: str) -> str:
        """A node's state; a node outside the view is taken as alive only if the
        adapter did not include it (the adapter always includes every endpoint)."""
        node = self.nodes.get(key)
        return node.state if node else ALIVE

    def justifications(self, key: str) -> list[tuple[str, list[str]]]:
        """The node's justifications: its critical ``depends_on`` edges grouped by
        ``group`` (edges without a group form one default justification). Each is
        ``(group name, [antecedent keys])``. Empty list: the node is a premise. An
        edge with several ``groups`` puts its antecedent in each of them."""
        groups: dict[str, list[str]] = {}
        for edge in self.out_edges(key, DEPENDS_ON):
            if edge.critical:
                for group in dict.fromkeys(edge.memberships):
                    groups.setdefault(group or "", []).append(edge.dst)
        return sorted(groups.items())

    def dependents(self, key: str, critical_only: bool = False) -> list[str]:
        """Nodes with a ``depends_on`` edge into ``key``."""
        return [e.src for e in self.in_edges(key, DEPENDS_ON) if e.critical or not critical_only]

    def support(self, hypothesis: str) -> float:
        """Σ weight of alive supports − Σ weight of alive refutes."""
        total = 0.0
        for edge in self.in_edges(hypothesis):
            if edge.kind in (SUPPORTS, REFUTES) and self.state(edge.src) == ALIVE:
                total += edge.weight if edge.kind == SUPPORTS else -edge.weight
        return total

    def alive_supporters(self, hypothesis: str) -> list[str]:
        return [e.src for e in self.in_edges(hypothesis, SUPPORTS) if self.state(e.src) == ALIVE]

    def hypotheses_of(self, question: Optional[str]) -> list[str]:
        """The hypotheses of ``question`` (None: those stored without a question)."""
        return sorted(self._hypotheses.get(question or "", ()))

    def consumers(self, key: str) -> list[str]:
        """Nodes that consume ``key``: via depends_on (dependents) or supports (hypotheses)."""
        found = [e.src for e in self.in_edges(key, DEPENDS_ON)]
        found += [e.dst for e in self.out_edges(key, SUPPORTS)]
        return found

    def superseders(self, key: str) -> list[str]:
        return [e.src for e in self.in_edges(key, SUPERSEDES)]

    def keys(self) -> Iterable[str]:
        return self.nodes.keys()
