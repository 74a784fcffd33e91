"""What a revision will change: the output of the pure rules, the input of the writer.

A :class:`Plan` lists every state, weight and confidence change with its cause
(rule, triggering nodes, epoch), the edges to add and the nodes to forget. The
rules build it without I/O; the store adapter applies it in batches; the journal
and ``explain`` read the same records.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, NotRequired, Optional, Protocol, TypedDict, Unpack

from memory_core.core.vocabulary import ALIVE, DEAD, Rule
from memory_core.core.beliefs import BeliefView, Edge, Node

if TYPE_CHECKING:
    from memory_core.core.policy import Decision


class Snapshot(TypedDict):
    """A node's revisable state before or after a change (the ``before``/``after`` of a logged
    change); ``valid_to`` only where the change ended or shortened evidence's validity (core.validity)."""

    state: str
    weight: float
    confidence: Optional[float]
    valid_to: NotRequired[Optional[str]]


class NodeChange(TypedDict, total=False):
    """What :func:`record` sets on a node: any of a :class:`Snapshot`'s fields (confidence None: none)."""

    state: str
    weight: float
    confidence: Optional[float]


class LogMemory(Protocol):
    """What the rules read of :class:`memory_core.core.tms.Memory` (tms imports this module:
    the plan names its fields, not its class)."""

    before_death: dict[str, dict]
    promotions: dict[str, list[tuple[str, float]]]
    weakened: dict[str, float]
    undecayed: dict[str, Optional[float]]


@dataclass
class Change:
    key: str
    rule: str  # a Rule (core/vocabulary.py): contradicted, superseded_by_fact, justification_lost, ...
    before: Snapshot
    after: Snapshot
    cause: list[str] = field(default_factory=list)
    detail: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(slots=True)
class PlanInputs:
    """What the steps of one revision pass to each other (never written: the plan's changes
    are). Set by :func:`memory_core.core.revision.begin` or ``begin_resolve``, by the valid-time
    reading and by the re-judging; read by the relabelling and the result."""

    verdicts: dict[str, tuple[str, float]] = field(default_factory=dict)  # evidence -> (relation, confidence)
    decisions: dict[str, "Decision"] = field(default_factory=dict)  # evidence -> who won (core.policy)
    forced: list[str] = field(default_factory=list)  # taken as dead by the relabelling (no new fact)
    seeds: list[str] = field(default_factory=list)  # a resolution: the two sides of the dispute
    reinstate_notes: dict[str, str] = field(default_factory=dict)  # reinstated un-judged: why
    validity: dict[str, str] = field(default_factory=dict)  # evidence -> its valid-time case (core.validity)
    validity_note: str = ""  # one side timed, the other not: what rule applied
    fact_ends: dict[str, str] = field(default_factory=dict)  # stored values a timed fact ends if it holds
    returning_until: dict[str, tuple[str, str]] = field(default_factory=dict)  # back until (date, cause)
    # timed values this change may take out of dispute -> the other values of their slot
    # (core.validity.place_settled places them in time after the relabelling)
    settling: dict[str, list[str]] = field(default_factory=dict)
    # values ended by the start of a value this change may find never true -> (that value, the
    # other values of their slot) (core.validity.reopen_ended moves their ends on after placing)
    reopening: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    # the new fact's earlier records of the same text it takes the place of (core.revision.restate)
    restated: list[str] = field(default_factory=list)
    # the log's memory of earlier changes (a memory_core.core.tms.Memory, set by tms.relabel)
    memory: Optional[LogMemory] = None


@dataclass
class Plan:
    epoch: int
    fact: Optional[str] = None
    new_node: Optional[Node] = None
    changes: list[Change] = field(default_factory=list)
    new_edges: list[Edge] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    died: list[str] = field(default_factory=list)  # nodes that died in this revision, in order
    revived: list[str] = field(default_factory=list)  # nodes that hold again (reinstated, dispute ended)
    restored: list[str] = field(
        default_factory=list
    )  # forgotten nodes that hold again: back from their tombstones
    removed_edges: list[Edge] = field(default_factory=list)  # disputes edges a resolution or revision ends
    decisions: list[dict] = field(default_factory=list)  # who won each contradiction, and why (core.policy)
    meta: PlanInputs = field(default_factory=PlanInputs, repr=False)  # passed between the steps

    def keys_with(self, *rules: str) -> list[str]:
        seen: list[str] = []
        for change in self.changes:
            if change.rule in rules and change.key not in seen:
                seen.append(change.key)
        return seen

    @property
    def refuted(self) -> list[str]:
        return self.keys_with(Rule.CONTRADICTED, Rule.OUTRANKED)

    @property
    def superseded(self) -> list[str]:
        return self.keys_with(Rule.SUPERSEDED_BY_FACT, Rule.SUPPORT_LOST, Rule.VALIDITY_ENDED)

    @property
    def invalidated(self) -> list[str]:
        return self.keys_with(Rule.JUSTIFICATION_LOST)

    @property
    def weakened(self) -> list[str]:
        return self.keys_with(Rule.NONCRITICAL_DECAY, Rule.WEAKENED_NO_RIVAL)

    @property
    def promoted(self) -> list[str]:
        return self.keys_with(Rule.PROMOTED)

    def kept_dead(self) -> list[Change]:
        """The ``not_reinstated`` changes of the nodes the plan leaves dead: one a later step of
        the same plan put in dispute (its refuter went into dispute) is disputed, not kept dead."""
        last = {c.key: c.after["state"] for c in self.changes}
        return [c for c in self.changes if c.rule == Rule.NOT_REINSTATED and last[c.key] in DEAD]

    @property
    def disputed(self) -> list[str]:
        return [c.key for c in self.changes if c.after["state"] == "disputed"]

    @property
    def reinstated(self) -> list[str]:
        found = self.keys_with(Rule.REINSTATED, Rule.RESOLVED)
        # a value ended by a value found never true, alive again (core.validity.reopen_ended)
        return found + [
            c.key
            for c in self.changes
            if c.rule == Rule.VALIDITY_REOPENED and c.after["state"] == ALIVE and c.key not in found
        ]

    @property
    def demoted(self) -> list[str]:
        return self.keys_with(Rule.DEMOTED)

    @property
    def empty(self) -> bool:
        return not self.changes and not self.forgotten and self.new_node is None


def snapshot(node: Node) -> Snapshot:
    return {"state": node.state, "weight": node.weight, "confidence": node.confidence}


def record(
    view: BeliefView,
    plan: Plan,
    key: str,
    rule: str,
    cause: list[str],
    detail: str = "",
    **after: Unpack[NodeChange],
) -> None:
    """Apply a change to the view's node and record it (with before/after) in the plan."""
    node = view.nodes[key]
    before = snapshot(node)
    if "state" in after:
        node.state = after["state"]
    if "weight" in after:
        node.weight = after["weight"]
    if "confidence" in after:
        node.confidence = after["confidence"]
    if "state" in after or snapshot(node) != before:
        # a node's epoch is that of its last change of any kind: state, weight or confidence
        node.epoch = plan.epoch
    plan.changes.append(Change(key, rule, before, snapshot(node), sorted(set(cause)), detail))
