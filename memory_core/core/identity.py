"""Node identity and collection names, computed without cognee.

Every node's id is derived from its type and its investigation key exactly as
cognee derives a DataPoint's identity id (``uuid5(NAMESPACE_OID, "<Type>:" +
normalised key)``, with ``identity_fields = ["key"]``), so the same key is the
same node in every process and session. Each kind's text lives in the vector
collection ``<Type>_<text field>``. ``tests/integration/test_cognee_contract.py`` checks
both against cognee's own ``DataPoint.id_for`` and ``vector_collection``.
"""

from __future__ import annotations

from uuid import NAMESPACE_OID, uuid5

from memory_core.core.keys import normalise_key
from memory_core.core.vocabulary import TEXT_FIELD, NodeKind

TYPE_BY_KIND = {
    NodeKind.QUESTION: "InvestigationQuestion",
    NodeKind.HYPOTHESIS: "Hypothesis",
    NodeKind.EVIDENCE: "Evidence",
    NodeKind.CONCLUSION: "Conclusion",
}
KIND_BY_TYPE = {name: kind for kind, name in TYPE_BY_KIND.items()}
KINDS = tuple(TYPE_BY_KIND)


def node_id(kind: str, key: str) -> str:
    """The stable id of the node of this kind with this key (no store access)."""
    return str(uuid5(NAMESPACE_OID, f"{TYPE_BY_KIND[NodeKind(kind)]}:{normalise_key(key)}"))


def collection(kind: str) -> str:
    """The vector collection holding a kind's text, e.g. ``Evidence_claim``."""
    kind = NodeKind(kind)
    return f"{TYPE_BY_KIND[kind]}_{TEXT_FIELD[kind]}"
