"""What every backend provides (:class:`Backend`), and the helpers both share.

A backend is one database FALSIFY keeps a data root's beliefs in: the embedded default
(:mod:`memory_core.store.backends.embedded`: cognee's Ladybug graph, LanceDB vectors,
FALSIFY's journal in files) or PostgreSQL + pgvector
(:mod:`memory_core.store.backends.postgres`: cognee's postgres graph and pgvector
adapters, FALSIFY's journal and writer lock in the same database). It is chosen once,
from the settings (:func:`memory_core.store.backends.choose`), and handed to whatever
needs it: ``Falsify.open`` asks it for the writer lock and the journal, the
:class:`~memory_core.store.belief_store.BeliefStore` holds it for its raw queries and
its housekeeping.

cognee's adapters cover adding nodes, edges and vectors, searching and
``get_neighborhood``; FALSIFY's key lookups, subgraph reads and batched property merges
are raw queries, which differ per database. Every query method works in batches and
returns rows in cognee's shapes: nodes ``{id: props}`` with ``id``/``name``/``type``
merged in, edges ``(source_id, target_id, relationship_name, props)``.

A backend with nothing to do for a step (a checkpoint on PostgreSQL, binding to the
running event loop on the embedded backend) implements it as a no-op: callers never
ask which backend they have.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Iterable, Optional

from memory_core.store import process, run_history
from memory_core.store.settings import Settings

log = logging.getLogger("falsify")


def node_props(node_id: str, name, type_, blob) -> dict:
    """A node row (id, name, type, JSON blob) as cognee's ``get_nodes`` returns it."""
    props = json.loads(blob) if isinstance(blob, str) and blob else dict(blob or {})
    return dict(props, id=node_id, name=name, type=type_)


def nodes_by_id(rows) -> dict[str, dict]:
    """Node rows (id, name, type, JSON blob) -> ``{id: props}`` (:func:`node_props`)."""
    return {row[0]: node_props(*row) for row in rows}


def node_list(rows) -> list[dict]:
    """Node rows (id, name, type, JSON blob) -> their props (:func:`node_props`), in order."""
    return [node_props(*row) for row in rows]


def _props(value) -> dict:
    return json.loads(value) if isinstance(value, str) and value else dict(value or {})


def unique_edges(rows, types) -> list[tuple[str, str, str, dict]]:
    """Edge rows of the relationship ``types`` (None: all), each (source, target, name) once."""
    seen, result = set(), []
    for src, dst, rel, props in rows:
        if (types is not None and rel not in types) or (src, dst, rel) in seen:
            continue
        seen.add((src, dst, rel))
        result.append((src, dst, rel, _props(props)))
    return result


# ---- after-commit housekeeping: counters of this process ------------------------
# Process-wide (one process may open its stores several times, e.g. tests/support/cli_batch.py):
# "every N commits" counts the commits of the process, whichever store made them.
RUN_HISTORY_EVERY = 50  # commits between two prunes of cognee's pipeline-run rows

_commits = 0
_stats = {
    "graph_reopens": 0,
    "graph_reopen_ms": 0.0,
    "vector_prunes": 0,
    "vector_prune_ms": 0.0,
    "vector_reconnects": 0,
    "trimmed_mb": 0.0,
    "run_rows_pruned": 0,
    "run_history_ms": 0.0,
    "graph_compactions": 0,
    "graph_compacted_mb": 0.0,
    "graph_compact_ms": 0.0,
    "idle_trims": 0,
}
# seconds without a commit after which what the engines freed goes back to the OS: a change frees
# what its queries, embeddings and Arrow batches held (on the MQuAKE root about 13 MB a revise and
# its undo, up to 90 MB between two reopens), which malloc keeps otherwise; trimming after every
# commit cost 5-10 % of a revision (the freed pages are faulted in again), trimming once a burst of
# commits is over costs it nothing
IDLE_TRIM_S = 1.0
_idle_trim: "asyncio.TimerHandle | None" = None


def count(name: str, amount: float = 1) -> None:
    """Add to one of the housekeeping counters :func:`stats` reports."""
    _stats[name] += amount


def stats() -> dict:
    """What the housekeeping did in this process (commits, reopens, compactions, prunes,
    memory trimmed) and the allocator settings applied (``process``)."""
    return dict(_stats, commits=_commits, process=process.stats())


def trim_native_heap() -> bool:
    """:func:`memory_core.store.process.trim_native_heap`, counting what it gave back."""
    before = process.rss_mb()
    done = process.trim_native_heap()
    _stats["trimmed_mb"] += max(0.0, before - process.rss_mb())
    return done


def _trim_when_idle() -> None:
    count("idle_trims")
    trim_native_heap()


def trim_when_idle(delay: float = IDLE_TRIM_S) -> None:
    """Give freed native memory back once no commit has come for ``delay`` seconds (a server
    between two requests; a command that exits sooner gives everything back anyway): each call
    puts the trim off again."""
    global _idle_trim
    if _idle_trim is not None:
        _idle_trim.cancel()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no event loop: nothing to wait with
        _idle_trim = None
        return
    _idle_trim = loop.call_later(delay, _trim_when_idle)


async def prune_run_history(settings: Settings) -> None:
    """cognee's rows of FALSIFY's own pipeline runs beyond the newest ``FALSIFY_RUN_HISTORY_KEEP``
    go (``store.run_history``): on both backends, since cognee's relational database is the
    root's own SQLite either way."""
    start = time.perf_counter()
    try:
        _stats["run_rows_pruned"] += await run_history.prune_run_history(settings.run_history_keep)
    except Exception as error:  # noqa: BLE001
        log.warning("pruning cognee's pipeline-run history failed (no data changed): %s", error)
    _stats["run_history_ms"] += (time.perf_counter() - start) * 1000


class Backend(ABC):
    """One database's raw queries, journal, writer lock, open-time repair and housekeeping.

    Made by :func:`memory_core.store.backends.choose` before the engines exist (the lock
    and the journal are needed first); :meth:`use_engines` gives it cognee's graph and
    vector engines once they are open."""

    name: str = ""
    #: whether the beliefs live in the local data root (the embedded backend) or in a
    #: database any data root may read (PostgreSQL: a new local root reads a shared one)
    beliefs_in_root: bool = True

    def __init__(self, settings: Settings):
        self.settings = settings
        self.graph = None
        self.vector = None
        self.home: Optional[Path] = None  # Ladybug's HOME while its database (re)opens

    def use_engines(self, graph, vector) -> None:
        self.graph = graph
        self.vector = vector

    # ---- what the process and the data root need --------------------------
    def cognee_environment(self) -> dict[str, str]:
        """cognee's settings for this backend's engines (set before cognee is imported)."""
        return {}

    async def add_edges(self, rows: list[tuple[str, str, str, dict]]) -> None:
        """Write ``(source id, target id, relationship, properties)`` edges (cognee's graph adapter;
        a backend may write them raw). The writer makes them durable with :meth:`checkpoint`."""
        await self.graph.add_edges(rows)

    def reach(self) -> None:
        """Make sure the backend's database answers, before anything is made on disk for the
        data root (nothing to reach where the data root holds the stores)."""

    def cognee_defaults(self) -> dict[str, str]:
        """cognee's settings this backend works best with, set before cognee is imported where
        the environment does not set them already (the user's own value wins)."""
        return {}

    @abstractmethod
    def writer_lock(self, path: Path, purpose: str = "falsify"):
        """The one-writer lock (``acquire``/``acquire_async``/``release``) of a data root
        whose lock file is ``path``."""

    @abstractmethod
    def open_journal(self, root: Path):
        """The journal (:class:`memory_core.store.journal.Journal`) of the data root ``root``."""

    def check_embedder(self, mine: dict) -> None:
        """Refuse (EmbedderMismatch) an embedder other than the one this backend's shared
        data were built with; nothing to check where the data root records it alone."""

    def repair_at_open(self, repair_torn_checkpoint: bool) -> Optional[str]:
        """Make the database openable before cognee connects to it; says what it repaired.
        ``repair_torn_checkpoint``: only under the root's writer lock."""
        return None

    def repair_refused_open(self, error: BaseException, repair_torn_checkpoint: bool) -> Optional[str]:
        """After the database refused to open (``error``): make it openable if that refusal is a
        known, repairable state; says what it repaired (None: nothing, the error stands).
        ``repair_torn_checkpoint``: only under the root's writer lock."""
        return None

    async def bind_to_running_loop(self) -> None:
        """Make the engines usable from the running event loop (a no-op where they are)."""

    # ---- raw reads ----------------------------------------------------------
    @abstractmethod
    async def raw_nodes(self, ids: list[str]) -> dict[str, dict]: ...

    @abstractmethod
    async def nodes_by_type_name(self, type_: str, name: str) -> list[dict]: ...

    @abstractmethod
    async def nodes_by_type_names(self, type_: str, names: list[str]) -> list[dict]:
        """Nodes of a type whose ``name`` is any of ``names``."""

    @abstractmethod
    async def nodes_by_type_name_prefixes(self, type_: str, prefixes: list[str]) -> list[dict]:
        """Nodes of a type whose ``name`` starts with any of ``prefixes`` (taken literally)."""

    @abstractmethod
    async def ids_of_type(self, type_: str) -> list[str]: ...

    @abstractmethod
    async def edges_touching(self, ids: list[str], types=None) -> list[tuple[str, str, str, dict]]: ...

    @abstractmethod
    async def members_of(self, question_ids: list[str], type_: str) -> list[str]: ...

    async def neighborhood(
        self, ids: list[str]
    ) -> tuple[list[tuple[str, dict]], list[tuple[str, str, str, dict]]]:
        """What cognee's ``get_neighborhood(ids, depth=1)`` returns: ``ids`` and every node one
        edge away, ``(id, props)``, and every edge among them. A backend reads the same rows
        itself where cognee would decode a large answer on the caller's event loop."""
        return await self.graph.get_neighborhood(ids, depth=1)

    @abstractmethod
    async def vector_ids(self, name: str) -> set[str]: ...

    @abstractmethod
    async def all_vectors(self, name: str) -> Optional[tuple[list[str], list]]:
        """Every row of a vector collection as (ids, vectors), for a batch's in-memory gate 1;
        None where the collection cannot be read so (gate 1 then searches fact by fact)."""

    async def text_vectors(self, name: str):
        """(texts, vectors) of every row of a vector collection: the text each vector was computed
        from and the vectors as rows of a float32 matrix (None when there are no rows), for reading a
        past epoch without embedding again what is stored; None where the rows cannot be read so
        (a past epoch then embeds every text)."""
        return None

    async def vector_dimensions(self, names: list[str]) -> Optional[int]:
        """The dimensions of the vectors stored in these collections (None: none stored, or
        this backend keeps the embedder record itself): a lost ``falsify.json`` is rebuilt
        only for the embedder that made them."""
        return None

    @abstractmethod
    async def lexical(self, name: str, texts: list[str], limit: int) -> list[list[tuple]]:
        """Full-text ranking of a collection's rows for each text (:mod:`memory_core.store.lexical`)."""

    # ---- raw writes -----------------------------------------------------------
    @abstractmethod
    async def update_nodes(self, patches: dict[str, dict]) -> None: ...

    @abstractmethod
    async def delete_edges(self, rows: list[tuple[str, str, str]]) -> None: ...

    @abstractmethod
    async def delete_nodes(self, ids: list[str]) -> None: ...

    @abstractmethod
    async def checkpoint(self) -> None:
        """Make the raw writes so far durable (every write of ours ends with one)."""

    # ---- housekeeping after a commit ---------------------------------------
    @abstractmethod
    async def vector_housekeeping(self, names: Iterable[str], fragments: int) -> list[str]:
        """Keep the vector collections ``names`` fast to search and write; returns the ones
        worked on now (see :meth:`BeliefStore.compact_vectors`)."""

    async def after_commit(self) -> None:
        """Housekeeping after each committed change: cognee's run history pruned every
        :data:`RUN_HISTORY_EVERY` commits, then this backend's own (:meth:`maintain`), and
        freed memory given back once commits stop coming (:func:`trim_when_idle`).
        A failure changes no data: each step logs its own and never fails the change."""
        global _commits
        _commits += 1
        if _commits % RUN_HISTORY_EVERY == 0:
            await prune_run_history(self.settings)
        await self.maintain(_commits)
        trim_when_idle()

    @abstractmethod
    async def maintain(self, commits: int) -> None:
        """This backend's housekeeping after the process's ``commits``-th commit."""
