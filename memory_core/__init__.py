"""FALSIFY: a belief-revision memory on cognee.

    import memory_core
    from memory_core import Falsify

    async with Falsify.open("./my-root") as fx:
        await fx.load(memory_core.demo_investigation())  # the packaged demo investigation
        result = await fx.revise("Forensic audit: the March QA report was back-dated.", target="E_qa")
        print(result["invalidated"], result["promoted"])

Inside a host's own cognee set-up: ``Falsify.attach(state_dir)``; the revision as
cognee Tasks for a host's own ``run_custom_pipeline``: :func:`revision_tasks` (a FALSIFY
error fails the host's run; the last Task outputs the RevisionResults), and recall as one Task:
:func:`recall_tasks` (each data item a question, the Task outputs the RecallResults);
FALSIFY's DataPoint classes: ``memory_core.Evidence`` etc. (they import cognee, so
they load on first use, once cognee is configured). Errors: one hierarchy under
:class:`FalsifyError` (``memory_core.core.errors``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_core.api import Falsify, Opening, recall_tasks, revision_tasks
from memory_core.core.errors import (
    EmbedderMismatch,
    FacadeClosed,
    FalsifyError,
    HostConfigError,
    InputError,
    JudgeError,
    RootBusy,
    RootConflict,
)
from memory_core.core.vocabulary import EdgeKind, NodeKind, State
from memory_core.results import (
    CheckResult,
    ExplainResult,
    LoadResult,
    RecallResult,
    RevisionResult,
    SearchHit,
    StatusResult,
    UndoResult,
)
from memory_core.store.data_root import use_offline_embedder

if TYPE_CHECKING:  # the DataPoint classes, for a type checker (at run time they load on first use, below)
    from memory_core.store.models import Conclusion, Evidence, Hypothesis, InvestigationQuestion


def demo_investigation() -> str:
    """The path of the packaged demo investigation (Company X, the one ``--demo`` loads),
    for ``fx.load(memory_core.demo_investigation())`` from any directory."""
    from pathlib import Path

    return str(Path(__file__).resolve().parent / "shell" / "demo_data" / "company_x.json")


# cognee-backed names, imported on first use (cognee must be configured first)
_LAZY = {
    "InvestigationQuestion": "memory_core.store.models",
    "Hypothesis": "memory_core.store.models",
    "Evidence": "memory_core.store.models",
    "Conclusion": "memory_core.store.models",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'memory_core' has no attribute {name!r}")


__all__ = [
    "Falsify",
    "Opening",
    "FalsifyError",
    "InputError",
    "RootBusy",
    "EmbedderMismatch",
    "JudgeError",
    "HostConfigError",
    "FacadeClosed",
    "RootConflict",
    "State",
    "NodeKind",
    "EdgeKind",
    "RevisionResult",
    "LoadResult",
    "StatusResult",
    "ExplainResult",
    "RecallResult",
    "SearchHit",
    "UndoResult",
    "CheckResult",
    "InvestigationQuestion",
    "Hypothesis",
    "Evidence",
    "Conclusion",
    "revision_tasks",
    "recall_tasks",
    "use_offline_embedder",
    "demo_investigation",
]
