"""The embedded backend (the default): cognee's Ladybug graph and LanceDB vectors in the
data root, FALSIFY's journal in files beside them (:class:`~memory_core.store.journal.FileJournal`),
one writer per root by an ``flock`` (:class:`~memory_core.store.lock.WriterLock`).

Raw queries are Cypher on cognee's Ladybug connection; a write of the writer's (edges, node
updates, deletes) has no CHECKPOINT of its own: the writer ends its raw writes with one
(:meth:`checkpoint`), before the journal commits. cognee's SQLite database keeps its connections
in a pool while a facade is open (:data:`SQLITE_POOL`). The vector housekeeping is LanceDB
compaction. At open, a Ladybug checkpoint torn as it began is cleared
(:func:`discard_torn_graph_checkpoint`); after commits the graph database is reopened or
compacted and old LanceDB versions are pruned (:mod:`memory_core.store.backends.housekeeping`).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional

from memory_core.core.identity import KINDS, collection
from memory_core.store import lexical, off_loop
from memory_core.store.backends.base import (
    Backend,
    count,
    log,
    node_list,
    nodes_by_id,
    trim_native_heap,
    unique_edges,
)
from memory_core.store.backends import neighborhood
from memory_core.store.backends.housekeeping import (
    compact_graph,
    graph_needs_compacting,
    prune_vector_versions,
    reconnect_vector,
    reopen_graph,
)
from memory_core.store.journal import FileJournal
from memory_core.store.lock import WriterLock


# cognee's SQLite database (its users, datasets and pipeline runs) through a pool of connections kept
# open while a facade is, instead of cognee's default NullPool: each pipeline run (one per revision)
# opened about ten connections, each with a thread of its own and its PRAGMAs (a run of no task took
# 120 ms of CPU, 45 with the pool, measured). cognee's POOL_ARGS setting; the pool is emptied when
# the last facade closes (memory_core.store.engines.release).
SQLITE_POOL = {"pool_size": 5, "max_overflow": 10}
EDGE_CHUNK = 2000  # edges per write query (cognee's own chunk)


class EmbeddedBackend(Backend):
    name = "ladybug"
    beliefs_in_root = True

    def cognee_defaults(self) -> dict[str, str]:
        return {"POOL_ARGS": json.dumps(SQLITE_POOL)}

    # ---- the data root ------------------------------------------------------
    def writer_lock(self, path: Path, purpose: str = "falsify") -> WriterLock:
        return WriterLock(path, purpose, timeout=self.settings.lock_timeout)

    def open_journal(self, root: Path) -> FileJournal:
        return FileJournal(root)

    def repair_at_open(self, repair_torn_checkpoint: bool) -> Optional[str]:
        return discard_torn_graph_checkpoint() if repair_torn_checkpoint else None

    def repair_refused_open(self, error: BaseException, repair_torn_checkpoint: bool) -> Optional[str]:
        return discard_checkpointed_wal(error) if repair_torn_checkpoint else None

    # ---- raw reads ----------------------------------------------------------
    # cognee's adapter runs each query in its own executor and returns the property blobs as JSON
    # text; a large answer is decoded in a worker thread (memory_core.store.off_loop), not on the
    # caller's event loop (9,006 nodes: ~0.7 s of json.loads)
    async def raw_nodes(self, ids: list[str]) -> dict[str, dict]:
        # cognee's get_nodes (`WHERE n.id IN $ids`) measured 1.2 -> 5.3 ms for one id on a graph ten
        # times larger; this primary-key form 0.4 -> 0.9 ms (same columns, same parsing)
        rows = await self.graph.query(
            "UNWIND $ids AS x MATCH (n:Node {id: x}) RETURN n.id, n.name, n.type, n.properties", {"ids": ids}
        )
        return await off_loop.run(nodes_by_id, rows, size=len(rows))

    async def nodes_by_type_name(self, type_: str, name: str) -> list[dict]:
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.type = $t AND n.name = $name RETURN n.id, n.name, n.type, n.properties",
            {"t": type_, "name": name},
        )
        return await off_loop.run(node_list, rows, size=len(rows))

    async def nodes_by_type_names(self, type_: str, names: list[str]) -> list[dict]:
        """One query for all the names."""
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.type = $t AND n.name IN $names RETURN n.id, n.name, n.type, n.properties",
            {"t": type_, "names": list(names)},
        )
        return await off_loop.run(node_list, rows, size=len(rows))

    async def nodes_by_type_name_prefixes(self, type_: str, prefixes: list[str]) -> list[dict]:
        """One query for all the prefixes (a scan of the type's nodes: no index orders names)."""
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.type = $t AND any(p IN $prefixes WHERE starts_with(n.name, p)) "
            "RETURN n.id, n.name, n.type, n.properties",
            {"t": type_, "prefixes": list(prefixes)},
        )
        return await off_loop.run(node_list, rows, size=len(rows))

    async def neighborhood(
        self, ids: list[str]
    ) -> tuple[list[tuple[str, dict]], list[tuple[str, str, str, dict]]]:
        """cognee's ``get_neighborhood(ids, depth=1)``, decoded off the event loop when large
        (:func:`memory_core.store.backends.neighborhood.ladybug`)."""
        return await neighborhood.ladybug(self.graph, ids)

    async def ids_of_type(self, type_: str) -> list[str]:
        rows = await self.graph.query("MATCH (n:Node) WHERE n.type = $t RETURN n.id", {"t": type_})
        return [r[0] for r in rows]

    async def edges_touching(self, ids: list[str], types=None) -> list[tuple[str, str, str, dict]]:
        # `WHERE n.id IN $ids` is planned as a seek on the primary key; the `UNWIND $ids AS x
        # ... WHERE n.id = x` form was planned as a scan of every edge plus a hash join
        # (measured: 2.0 -> 11.6 ms on a graph ten times larger, against 1.2 -> 2.7 ms).
        # The edges out and the edges in, one seek each, in one query (as on PostgreSQL): one
        # round trip through cognee's adapter, not two (a hypothesis with 500 supporters: 1.8 ms
        # against 2.0). An undirected match read for its direction (the rel's _SRC against
        # id(n)) was no faster, and slower with 5,000 supporters (16 ms against 12)
        rows = list(
            await self.graph.query(
                "MATCH (n:Node)-[r]->(m:Node) WHERE n.id IN $ids "
                "RETURN n.id, m.id, r.relationship_name, r.properties "
                "UNION ALL "
                "MATCH (n:Node)-[r]->(m:Node) WHERE m.id IN $ids "
                "RETURN n.id, m.id, r.relationship_name, r.properties",
                {"ids": ids},
            )
        )
        return await off_loop.run(unique_edges, rows, types, size=len(rows))

    async def members_of(self, question_ids: list[str], type_: str) -> list[str]:
        rows = await self.graph.query(
            "MATCH (h:Node)-[r]->(q:Node) WHERE q.id IN $q AND h.type = $t "
            "AND r.relationship_name = 'part_of' RETURN h.id",
            {"q": question_ids, "t": type_},
        )
        return [r[0] for r in rows]

    async def vector_ids(self, name: str) -> set[str]:
        if not await self.vector.has_collection(name):
            return set()
        conn = await self.vector.get_connection()
        table = await conn.open_table(name)
        # LanceDB's to_list() is to_arrow().to_pylist(): the Arrow table comes from its own runtime,
        # the Python objects are made in a worker thread (a second on a 9,000-row table)
        rows = await table.query().select(["id"]).to_arrow()
        return await off_loop.run(_ids_of_rows, rows, size=rows.num_rows)

    async def all_vectors(self, name: str) -> Optional[tuple[list[str], list]]:
        """None when the table cannot be read this way (e.g. a remote table)."""
        if not await self.vector.has_collection(name):
            return [], []
        conn = await self.vector.get_connection()
        table = await conn.open_table(name)
        if not hasattr(table, "query"):  # a remote LanceDB table, not a capability of ours
            return None
        rows = await table.query().select(["id", "vector"]).to_arrow()  # to Python in a worker thread
        return await off_loop.run(_ids_and_vectors, rows, size=rows.num_rows)

    async def text_vectors(self, name: str):
        """(texts, vectors): each row's indexed text (cognee's ``payload.text``, what its vector
        was computed from) and its vector, a float32 matrix row; None for a remote table."""
        if not await self.vector.has_collection(name):
            return [], None
        conn = await self.vector.get_connection()
        table = await conn.open_table(name)
        if not hasattr(table, "query"):  # a remote LanceDB table, not a capability of ours
            return None
        rows = await table.query().select({"text": lexical.TEXT_COLUMN, "vector": "vector"}).to_arrow()
        return await off_loop.run(_texts_and_vectors, rows, size=rows.num_rows)

    async def vector_dimensions(self, names: list[str]) -> Optional[int]:
        """From the LanceDB tables' schema (a fixed-size list column ``vector``)."""
        conn = await self.vector.get_connection()
        for name in names:
            if not await self.vector.has_collection(name):
                continue
            table = await conn.open_table(name)
            schema = await table.schema() if callable(getattr(table, "schema", None)) else table.schema
            field = schema.field("vector") if "vector" in schema.names else None
            size = getattr(getattr(field, "type", None), "list_size", None)
            if isinstance(size, int) and size > 0:
                return size
        return None

    async def lexical(self, name: str, texts: list[str], limit: int) -> list[list[tuple]]:
        return await lexical.search_lancedb(self.vector, name, texts, limit)

    # ---- raw writes -----------------------------------------------------------
    async def update_nodes(self, patches: dict[str, dict]) -> None:
        ids = list(patches)
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.id IN $ids RETURN n.id, n.properties", {"ids": ids}
        )
        items = []
        for i, raw in rows:
            blob = json.loads(raw) if raw else {}
            blob.update(patches[i])
            items.append({"node_id": i, "properties": json.dumps(blob)})
        if items:
            await self.graph.query(
                "UNWIND $items AS item MATCH (n:Node) WHERE n.id = item.node_id "
                "SET n.properties = item.properties, n.updated_at = TIMESTAMP($now)",
                {"items": items, "now": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")},
            )

    async def add_edges(self, rows: list[tuple[str, str, str, dict]]) -> None:
        """cognee's own edge write (``LadybugAdapter.add_edges``: a MERGE per edge on the two node
        ids and ``relationship_name``, its created/updated times and JSON properties, in chunks;
        tests/integration/test_cognee_contract.py checks the rows are the ones cognee writes)
        without the CHECKPOINT cognee's call ends with: the writer checkpoints once, after its
        last raw write (each of those cost 20-30 ms a revision)."""
        from cognee.modules.storage.utils import JSONEncoder

        now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
        edges = [
            {
                "from_id": str(src),
                "to_id": str(dst),
                "relationship_name": rel,
                "properties": json.dumps(props or {}, cls=JSONEncoder),
                "now": now,
            }
            for src, dst, rel, props in rows
        ]
        for start in range(0, len(edges), EDGE_CHUNK):
            await self.graph.query(
                "UNWIND $edges AS edge "
                "MATCH (from:Node {id: edge.from_id}), (to:Node {id: edge.to_id}) "
                "MERGE (from)-[r:EDGE {relationship_name: edge.relationship_name}]->(to) "
                "ON CREATE SET r.created_at = TIMESTAMP(edge.now), r.updated_at = TIMESTAMP(edge.now), "
                "r.properties = edge.properties "
                "ON MATCH SET r.updated_at = TIMESTAMP(edge.now), r.properties = edge.properties",
                {"edges": edges[start : start + EDGE_CHUNK]},
            )

    async def delete_edges(self, rows: list[tuple[str, str, str]]) -> None:
        for src, dst, rel in rows:
            await self.graph.query(
                "MATCH (n:Node)-[r]->(m:Node) WHERE n.id = $s AND m.id = $d AND r.relationship_name = $r DELETE r",
                {"s": src, "d": dst, "r": rel},
            )

    async def delete_nodes(self, ids: list[str]) -> None:
        await self.graph.query("MATCH (n:Node) WHERE n.id IN $ids DETACH DELETE n", {"ids": ids})

    async def checkpoint(self) -> None:
        """Flush Ladybug's WAL (see :func:`discard_torn_graph_checkpoint`)."""
        await self.graph.checkpoint()

    # ---- housekeeping ---------------------------------------------------------
    async def vector_housekeeping(self, names: Iterable[str], fragments: int) -> list[str]:
        """LanceDB: compact each table with ``fragments`` or more fragments (see
        :meth:`BeliefStore.compact_vectors`)."""
        conn = await self.vector.get_connection()
        done = []
        for name in names:
            if not await self.vector.has_collection(name):
                continue
            table = await conn.open_table(name)
            if (await table.stats())["fragment_stats"]["num_fragments"] >= fragments:
                await table.optimize()
                done.append(name)
        return done

    async def maintain(self, commits: int) -> None:
        """Every ``FALSIFY_VECTOR_PRUNE_EVERY`` commits: prune old LanceDB versions and drop
        cognee's LanceDB connection; every ``FALSIFY_GRAPH_REOPEN_EVERY``: compact the graph
        file if it has grown past ``FALSIFY_GRAPH_COMPACT_RATIO``, else reopen the graph
        database; after either, give freed native memory back to the OS."""
        s = self.settings
        reopen, prune = s.graph_reopen_every, s.vector_prune_every
        if prune and commits % prune == 0:
            start = time.perf_counter()
            try:
                if await prune_vector_versions(
                    self.vector, [collection(k) for k in KINDS], s.vector_prune_age_s
                ):
                    count("vector_prunes")
                if s.vector_reconnect and await reconnect_vector(self.vector):
                    count("vector_reconnects")
            except Exception as error:  # noqa: BLE001
                log.warning("pruning old vector versions failed (no data changed): %s", error)
            count("vector_prune_ms", (time.perf_counter() - start) * 1000)
        if reopen and commits % reopen == 0:
            start = time.perf_counter()
            compacted = None
            try:
                if graph_needs_compacting(self.graph, s.graph_compact_ratio):
                    # a compaction reopens too
                    compacted = await compact_graph(self.graph, self.home, s.fault_at)
                    if compacted:
                        count("graph_compactions")
                        count("graph_compacted_mb", (compacted[0] - compacted[1]) / 2**20)
            except Exception as error:  # noqa: BLE001
                log.warning("compacting the graph database failed (the old file is kept): %s", error)
            count("graph_compact_ms", (time.perf_counter() - start) * 1000 if compacted else 0.0)
            start = time.perf_counter()
            try:
                if not compacted and await reopen_graph(self.graph, self.home):
                    count("graph_reopens")
            except Exception as error:  # noqa: BLE001
                log.warning("reopening the graph database failed: %s", error)
            count("graph_reopen_ms", (time.perf_counter() - start) * 1000)
        if (reopen and commits % reopen == 0) or (prune and commits % prune == 0):
            trim_native_heap()  # what the engines freed goes back to the OS (measured: ~40% of the growth)


def _ids_of_rows(rows) -> set[str]:
    """The ``id`` column of a LanceDB answer (an Arrow table), as strings."""
    return {str(r["id"]) for r in rows.to_pylist()}


def _texts_and_vectors(rows):
    """(texts, float32 matrix) of a LanceDB answer of ``text`` and ``vector`` columns (the
    vectors read from Arrow as one array, never as Python floats)."""
    texts = [str(t) for t in rows.column("text").to_pylist()]
    if not texts:
        return texts, None
    column = rows.column("vector").combine_chunks()
    return texts, column.flatten().to_numpy(zero_copy_only=False).reshape(len(texts), -1)


def _ids_and_vectors(rows) -> tuple[list[str], list]:
    """(ids, vectors) of a LanceDB answer (an Arrow table): what ``to_list()`` gives, by column."""
    rows = rows.to_pylist()
    return [str(r["id"]) for r in rows], [r["vector"] for r in rows]


def graph_database_path() -> Optional[Path]:
    """The Ladybug database file cognee's graph configuration names (None for another provider)."""
    from cognee.infrastructure.databases.graph.config import get_graph_config

    config = get_graph_config()
    if str(config.graph_database_provider).lower() not in ("ladybug", "kuzu") or not config.graph_file_path:
        return None
    return Path(config.graph_file_path)


def discard_torn_graph_checkpoint(db: Optional[Path] = None) -> Optional[str]:
    """Clear the debris of a Ladybug checkpoint that was killed as it began.

    Ladybug (0.19) checkpoints by moving its WAL to ``<db>.wal.checkpoint`` and
    writing the dirty pages to ``<db>.shadow``, whose header carries the database
    id; only then are pages copied into ``<db>``. A SIGKILL between creating the
    shadow file and writing into it leaves an *empty* ``<db>.shadow``, and every
    later open fails with "Database ID for temporary file ... does not match the
    current database" -- the root is wedged (found by tests/system/test_fault_injection.py).
    An empty shadow means nothing of that checkpoint reached ``<db>``, which is
    as of the previous checkpoint. Every write of FALSIFY ends with a checkpoint
    before its journal commits (cognee's adapter checkpoints after each of its
    write calls; :func:`memory_core.store.writer.apply` after its raw writes), so the
    interrupted WAL holds only writes of a journal intent that had not committed,
    which :func:`memory_core.store.writer.recover`
    then rolls back or finishes. So the two files are dropped and the database
    opens as of its last checkpoint. A non-empty shadow is left to Ladybug, which
    replays it. Call only while holding the root's writer lock. ``db``: the database
    file (default: the one cognee's configuration names).
    """
    db = db or graph_database_path()
    if db is None:
        return None
    shadow, wal = db.with_name(db.name + ".shadow"), db.with_name(db.name + ".wal.checkpoint")
    if not (shadow.is_file() and shadow.stat().st_size == 0 and wal.is_file()):
        return None
    wal.unlink()
    shadow.unlink()
    return (
        f"discarded a graph checkpoint interrupted as it began ({shadow.name} empty); "
        "the graph reopened as of its previous checkpoint"
    )


def discard_checkpointed_wal(error: BaseException, db: Optional[Path] = None) -> Optional[str]:
    """Clear the WAL of a Ladybug checkpoint that was killed as it ended, after Ladybug refused
    to open the database (``error``); None when that is not what ``error`` is.

    A checkpoint ends by applying the shadow pages to ``<db>``, deleting ``<db>.shadow`` and
    then clearing the WAL, whose last record marks the checkpoint. A SIGKILL between the last two
    steps leaves that WAL without its shadow file, and every later open fails with "Cannot open
    file <db>.shadow: No such file or directory" -- the root is wedged (found by
    tests/system/test_fault_injection.py: a recovering process killed while it checkpointed the
    WAL of a killed undo). The shadow is deleted only once all its pages are in ``<db>``, so
    the database file already holds that checkpoint; and, as for
    :func:`discard_torn_graph_checkpoint`, anything else a WAL can hold belongs to a journal
    intent that had not committed, which recovery rolls back or finishes. So the WAL is dropped
    and the database opens as of that checkpoint. Acts only on that refusal, with no shadow
    file and no ``<db>.wal.checkpoint`` beside the WAL; only under the root's writer lock.
    """
    db = db or graph_database_path()
    if db is None:
        return None
    shadow = db.with_name(db.name + ".shadow")
    wal, frozen = db.with_name(db.name + ".wal"), db.with_name(db.name + ".wal.checkpoint")
    text = str(error)
    if not (
        "Cannot open file" in text
        and str(shadow) in text
        and "No such file" in text
        and wal.is_file()
        and not shadow.exists()
        and not frozen.exists()
    ):
        return None
    wal.unlink()
    return (
        f"discarded the write-ahead log of a graph checkpoint interrupted as it ended ({shadow.name} "
        "already applied and deleted); the graph reopened as of that checkpoint"
    )
