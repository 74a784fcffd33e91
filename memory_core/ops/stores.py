"""The opened stores every operation works on.

An operation is a function taking a :class:`Stores` (never the facade): the
belief store (cognee's graph and vector engines), the journal (intents and the
revision log) and, where it has one, the data root's paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from memory_core.store.belief_store import BeliefStore
from memory_core.store.journal import Journal


@dataclass
class Stores:
    store: BeliefStore
    journal: Journal
    paths: Any = None  # memory_core.store.settings.Paths (None when attached to a host's cognee)
    hook: Optional[Callable[[str], None]] = None  # fault injection / progress: called with a step name
    recovered: Optional[str] = None  # what opening the root recovered, if anything

    @property
    def settings(self):
        """The settings the opened stores go by (memory_core.store.config.Settings)."""
        return self.store.settings

    def default_question(self) -> Optional[str]:
        return self.journal.meta().get("default_question")
