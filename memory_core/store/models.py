"""The belief graph's node types (cognee DataPoints) and the judge's verdict.

Identity: every node's id is derived from its type and its investigation key
(``uuid5("<Type>:<normalised key>")``), so the same key maps to the same node in
every process and session. Keys are unique within a data root, compared the way
cognee normalises identity values (case-insensitive, spaces as underscores).

Each node also carries ``question`` (its investigation's question key); all
nodes are joined to their question by a ``part_of`` edge, so one
``get_neighborhood([question], depth=1)`` call reads a whole investigation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from memory_core.store import data_root

if TYPE_CHECKING:  # cognee ships no type information: a type checker reads DataPoint's public fields here
    from memory_core.store.datapoint_types import DataPoint
else:
    data_root.require_configured()  # cognee reads its settings at import: configure the data root first
    from cognee.infrastructure.engine import DataPoint


from memory_core.core.keys import normalise_key  # noqa: F401  (re-exported)


class BeliefNode(DataPoint):
    """Fields every belief node carries. ``truth_alignment``/``truth_epoch`` are
    the very properties Ladybug's ``set_node_truth_state`` writes, so a node is
    born with its state in the one ``add_data_points`` call that creates it."""

    truth_alignment: list[str] = ["alive"]
    truth_epoch: int = 0


class InvestigationQuestion(BeliefNode):
    key: str
    question: str
    policy: Optional[str] = None  # reconciliation policy (memory_core.core.policy); None: latest_wins
    sources: Optional[list] = None  # [{"id", "trust", "name"?}] from the investigation file
    predicates: Optional[dict] = None  # {"speaks": "many", ...}: predicate cardinality (core.cardinality)
    metadata: dict = {"index_fields": ["question"], "identity_fields": ["key"]}


class Hypothesis(BeliefNode):
    key: str
    statement: str
    question_key: str
    prior: Optional[float] = None
    metadata: dict = {"index_fields": ["statement"], "identity_fields": ["key"]}


class Evidence(BeliefNode):
    key: str
    claim: str
    question_key: str
    source_id: Optional[str] = None
    quote: Optional[str] = None
    asserted_at: Optional[str] = None
    stance: Optional[str] = None
    subject: Optional[str] = None
    predicate: Optional[str] = None
    object: Optional[str] = None
    valid_from: Optional[str] = None  # valid time: when it became true (core.validity)
    valid_to: Optional[str] = None  # when it stopped being true (None: still true)
    # the end its fact stated (None: open), kept when a later value's start ends it earlier: what
    # it holds until again if that value is found never true (core.validity.reopen_ended)
    stated_to: Optional[str] = None
    trust: Optional[float] = None  # its source's trust when recorded by revise --trust (unlisted source)
    # Ladybug's native ``name`` column: the normalised "subject|predicate", indexed
    # lookups for the structured judge (see store.nodes_by_sp); "" without a triple.
    name: str = ""
    metadata: dict = {"index_fields": ["claim"], "identity_fields": ["key"]}


class Conclusion(BeliefNode):
    key: str
    statement: str
    question_key: str
    confidence: Optional[float] = None
    metadata: dict = {"index_fields": ["statement"], "identity_fields": ["key"]}


MODEL_BY_KIND: dict[str, type[BeliefNode]] = {
    "question": InvestigationQuestion,
    "hypothesis": Hypothesis,
    "evidence": Evidence,
    "conclusion": Conclusion,
}
KIND_BY_TYPE = {cls.__name__: kind for kind, cls in MODEL_BY_KIND.items()}
from memory_core.core.vocabulary import TEXT_FIELD  # noqa: E402,F401  (re-exported)


def collection(kind: str) -> str:
    """The vector collection holding a kind's text, e.g. ``Evidence_claim``."""
    return MODEL_BY_KIND[kind].vector_collection()


def node_id(kind: str, key: str) -> str:
    """The stable id of the node of this kind with this key (no store access)."""
    return str(MODEL_BY_KIND[kind].id_for(key))
