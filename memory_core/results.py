"""The shapes every operation returns: exactly what the CLI prints with ``--json``,
what the Python API returns and what the MCP tools return as structured content
(docs/json-shapes.md). This is their public import path
(``from memory_core.results import RevisionResult``); they are declared in
:mod:`memory_core.core.results`, below the operations that build them.
"""

from __future__ import annotations

from memory_core.core.results import (
    Candidate,
    CheckResult,
    ExplainEvent,
    ExplainResult,
    LoadResult,
    RecallMatch,
    RecallRelevance,
    RecallResult,
    RecallSide,
    RevisionResult,
    SearchHit,
    StatusEdge,
    StatusNode,
    StatusResult,
    UndoResult,
)

__all__ = [
    "Candidate",
    "RevisionResult",
    "LoadResult",
    "StatusNode",
    "StatusEdge",
    "StatusResult",
    "ExplainEvent",
    "ExplainResult",
    "RecallMatch",
    "RecallRelevance",
    "RecallSide",
    "RecallResult",
    "SearchHit",
    "UndoResult",
    "CheckResult",
]
