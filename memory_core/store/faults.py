"""Fault injection for crash tests (unset in normal use).

``FALSIFY_FAULT_AT=step[:n]`` kills the process with SIGKILL when it reaches ``step`` for
the n-th time. The journalled write's steps (journalled, nodes, node_edges, edges, updates,
del_edges, del_nodes, committed) go through the hook the opened stores carry
(:func:`fault_hook`, made by ``api``); housekeeping that runs without the stores object
(the graph file's compaction: compact_exported, compact_imported, compact_swapped) calls
:func:`point` with the settings' value, one hook per process.
"""

from __future__ import annotations

import os
import signal
from typing import Callable, Optional


def fault_hook(spec: Optional[str]) -> Optional[Callable[[str], None]]:
    """A hook killing this process at the n-th time it is called with ``step`` (None: no ``spec``)."""
    return _hook(spec) if spec else None


def _hook(spec: str) -> Callable[[str], None]:
    step, _, nth = spec.partition(":")
    count = {"n": 0}
    target = int(nth or 1)

    def hook(name: str) -> None:
        if name == step:
            count["n"] += 1
            if count["n"] == target:
                os.kill(os.getpid(), signal.SIGKILL)

    return hook


_process_hooks: dict[str, Callable[[str], None]] = {}


def point(name: str, spec: Optional[str]) -> None:
    """A fault point of code that has no stores object; ``spec``: the stores' settings'
    ``FALSIFY_FAULT_AT`` (its count runs over the whole process)."""
    if spec:
        hook = _process_hooks.get(spec) or _process_hooks.setdefault(spec, _hook(spec))
        hook(name)
