"""The vocabulary of belief graphs: node kinds, edge kinds, truth states, rules.

Everything here is a :class:`enum.StrEnum`, so a member *is* its string (the
value cognee stores, the value in ``--json`` output) and compares equal to it.
The plain constants below (``DEPENDS_ON``, ``ALIVE``, ...) are the members under
short names.
"""

from __future__ import annotations

from enum import StrEnum


class NodeKind(StrEnum):
    QUESTION = "question"
    HYPOTHESIS = "hypothesis"
    EVIDENCE = "evidence"
    CONCLUSION = "conclusion"


class EdgeKind(StrEnum):
    """cognee ``relationship_name`` values of the belief graph."""

    DEPENDS_ON = "depends_on"  # Conclusion|Evidence -> Evidence|Conclusion {critical, group}
    SUPPORTS = "supports"  # Evidence -> Hypothesis {weight}
    REFUTES = "refutes"  # Evidence -> Hypothesis {weight}
    SUPERSEDES = "supersedes"  # Evidence(new) -> Evidence(old) {confidence}
    PART_OF = "part_of"  # every node -> its InvestigationQuestion (one-call subgraph reads)
    DISPUTES = "disputes"  # Evidence(new) -> Evidence(old) {confidence}: neither won (preserve_both)


class State(StrEnum):
    """Truth states (``truth_alignment`` = [state] on the node)."""

    ALIVE = "alive"
    REFUTED = "refuted"  # evidence contradicted by a fact that won
    SUPERSEDED = "superseded"  # evidence replaced by a newer value / hypothesis that lost its support
    INVALIDATED = "invalidated"  # no justification holds any more
    DISPUTED = "disputed"  # neither alive nor dead: rests on an unresolved dispute (three-valued labelling)


class Rule(StrEnum):
    """Why a node changed (the ``rule`` of every logged change; ``explain`` reads them)."""

    CONTRADICTED = "contradicted"
    SUPERSEDED_BY_FACT = "superseded_by_fact"
    JUSTIFICATION_LOST = "justification_lost"
    NONCRITICAL_DECAY = "noncritical_decay"
    SUPPORT_LOST = "support_lost"
    PROMOTED = "promoted"
    WEAKENED_NO_RIVAL = "weakened_no_rival"
    REBALANCED = "rebalanced"
    ORPHANED = "orphaned"
    DISPUTED = "disputed"
    OUTRANKED = "outranked"
    REINSTATED = "reinstated"
    RESOLVED = "resolved"
    DEMOTED = "demoted"
    VALIDITY_ENDED = "validity_ended"
    VALIDITY_SHORTENED = "validity_shortened"
    VALIDITY_REOPENED = "validity_reopened"  # what ended it was found never true: its end moves on
    NOT_REINSTATED = "not_reinstated"
    RESTATED = "restated"  # the same fact asserted again: the new record takes this one's place


DEPENDS_ON, SUPPORTS, REFUTES, SUPERSEDES, PART_OF = (
    EdgeKind.DEPENDS_ON,
    EdgeKind.SUPPORTS,
    EdgeKind.REFUTES,
    EdgeKind.SUPERSEDES,
    EdgeKind.PART_OF,
)
DISPUTES = EdgeKind.DISPUTES
BELIEF_EDGES = (DEPENDS_ON, SUPPORTS, REFUTES, SUPERSEDES, DISPUTES)

ALIVE, REFUTED, SUPERSEDED, INVALIDATED = State.ALIVE, State.REFUTED, State.SUPERSEDED, State.INVALIDATED
DISPUTED = State.DISPUTED
STATES = tuple(State)
DEAD = (REFUTED, SUPERSEDED, INVALIDATED)

# the text field of each kind in the stores (the investigation file calls the question's "text")
TEXT_FIELD: dict[str, str] = {  # by kind (a NodeKind is a str)
    NodeKind.QUESTION: "question",
    NodeKind.HYPOTHESIS: "statement",
    NodeKind.EVIDENCE: "claim",
    NodeKind.CONCLUSION: "statement",
}

# (source kinds, target kinds) each edge type may join.
ENDPOINTS = {
    DEPENDS_ON: ({"conclusion", "evidence"}, {"conclusion", "evidence"}),
    SUPPORTS: ({"evidence"}, {"hypothesis"}),
    REFUTES: ({"evidence"}, {"hypothesis"}),
    SUPERSEDES: ({"evidence"}, {"evidence"}),
    DISPUTES: ({"evidence"}, {"evidence"}),
}
