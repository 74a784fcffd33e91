"""The raw reads and writes of :class:`~memory_core.store.belief_store.BeliefStore`, per backend.

cognee's adapters cover adding nodes, edges and vectors, searching and
``get_neighborhood``; FALSIFY's key lookups, subgraph reads and batched property
merges are raw queries, which differ per database:

* :class:`LadybugBackend` (the embedded default): Cypher on cognee's Ladybug
  connection, a CHECKPOINT after each write, LanceDB compaction as vector housekeeping.
* :class:`PostgresBackend` (``FALSIFY_BACKEND=postgres``): SQL on the tables of cognee's
  postgres graph adapter (``graph_node``/``graph_edge``, properties as JSONB) through the
  adapter's own SQLAlchemy engine; writes take the adapter's graph-write advisory lock so
  they serialise with cognee's; the checkpoint is a no-op (each statement commits);
  housekeeping is an HNSW index (cosine) on each FALSIFY pgvector collection.

Every method works in batches and returns rows in cognee's shapes:
nodes ``{id: props}`` with ``id``/``name``/``type`` merged in, edges
``(source_id, target_id, relationship_name, props)``.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Optional, Iterable


def node_props(node_id: str, name, type_, blob) -> dict:
    """A node row (id, name, type, JSON blob) as cognee's ``get_nodes`` returns it."""
    props = json.loads(blob) if isinstance(blob, str) and blob else dict(blob or {})
    return dict(props, id=node_id, name=name, type=type_)


def _props(value) -> dict:
    return json.loads(value) if isinstance(value, str) and value else dict(value or {})


def _unique_edges(rows, types) -> list[tuple[str, str, str, dict]]:
    seen, result = set(), []
    for src, dst, rel, props in rows:
        if (types is not None and rel not in types) or (src, dst, rel) in seen:
            continue
        seen.add((src, dst, rel))
        result.append((src, dst, rel, _props(props)))
    return result


class LadybugBackend:
    name = "ladybug"

    def __init__(self, graph, vector):
        self.graph = graph
        self.vector = vector

    async def raw_nodes(self, ids: list[str]) -> dict[str, dict]:
        # cognee's get_nodes (`WHERE n.id IN $ids`) measured 1.2 -> 5.3 ms for one id on a graph ten
        # times larger; this primary-key form 0.4 -> 0.9 ms (same columns, same parsing)
        rows = await self.graph.query(
            "UNWIND $ids AS x MATCH (n:Node {id: x}) RETURN n.id, n.name, n.type, n.properties", {"ids": ids})
        return {row[0]: node_props(*row) for row in rows}

    async def nodes_by_type_name(self, type_: str, name: str) -> list[dict]:
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.type = $t AND n.name = $name "
            "RETURN n.id, n.name, n.type, n.properties", {"t": type_, "name": name})
        return [node_props(*row) for row in rows]

    async def ids_of_type(self, type_: str) -> list[str]:
        rows = await self.graph.query("MATCH (n:Node) WHERE n.type = $t RETURN n.id", {"t": type_})
        return [r[0] for r in rows]

    async def edges_touching(self, ids: list[str], types=None) -> list[tuple[str, str, str, dict]]:
        # `WHERE n.id IN $ids` is planned as a seek on the primary key; the `UNWIND $ids AS x
        # ... WHERE n.id = x` form was planned as a scan of every edge plus a hash join
        # (measured: 2.0 -> 11.6 ms on a graph ten times larger, against 1.2 -> 2.7 ms)
        out_rows = await self.graph.query(
            "MATCH (n:Node)-[r]->(m:Node) WHERE n.id IN $ids "
            "RETURN n.id, m.id, r.relationship_name, r.properties", {"ids": ids})
        in_rows = await self.graph.query(
            "MATCH (n:Node)-[r]->(m:Node) WHERE m.id IN $ids "
            "RETURN n.id, m.id, r.relationship_name, r.properties", {"ids": ids})
        return _unique_edges(list(out_rows) + list(in_rows), types)

    async def members_of(self, question_ids: list[str], type_: str) -> list[str]:
        rows = await self.graph.query(
            "MATCH (h:Node)-[r]->(q:Node) WHERE q.id IN $q AND h.type = $t "
            "AND r.relationship_name = 'part_of' RETURN h.id", {"q": question_ids, "t": type_})
        return [r[0] for r in rows]

    async def update_nodes(self, patches: dict[str, dict]) -> None:
        ids = list(patches)
        rows = await self.graph.query("MATCH (n:Node) WHERE n.id IN $ids RETURN n.id, n.properties", {"ids": ids})
        items = []
        for i, raw in rows:
            blob = json.loads(raw) if raw else {}
            blob.update(patches[i])
            items.append({"node_id": i, "properties": json.dumps(blob)})
        if items:
            await self.graph.query(
                "UNWIND $items AS item MATCH (n:Node) WHERE n.id = item.node_id "
                "SET n.properties = item.properties, n.updated_at = TIMESTAMP($now)",
                {"items": items, "now": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")})

    async def delete_edges(self, rows: list[tuple[str, str, str]]) -> None:
        for src, dst, rel in rows:
            await self.graph.query(
                "MATCH (n:Node)-[r]->(m:Node) WHERE n.id = $s AND m.id = $d AND r.relationship_name = $r DELETE r",
                {"s": src, "d": dst, "r": rel})

    async def delete_nodes(self, ids: list[str]) -> None:
        await self.graph.query("MATCH (n:Node) WHERE n.id IN $ids DETACH DELETE n", {"ids": ids})

    async def checkpoint(self) -> None:
        await self.graph.checkpoint()

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

    async def vector_ids(self, name: str) -> set[str]:
        if not await self.vector.has_collection(name):
            return set()
        conn = await self.vector.get_connection()
        table = await conn.open_table(name)
        rows = await table.query().select(["id"]).to_list()
        return {str(r["id"]) for r in rows}

    async def nodes_by_type_names(self, type_: str, names: list[str]) -> list[dict]:
        """Nodes of a type whose ``name`` is any of ``names`` (one query)."""
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.type = $t AND n.name IN $names "
            "RETURN n.id, n.name, n.type, n.properties", {"t": type_, "names": list(names)})
        return [node_props(*row) for row in rows]

    async def all_vectors(self, name: str) -> Optional[tuple[list[str], list]]:
        """Every row of a LanceDB collection as (ids, vectors), for a batch's in-memory
        gate 1; None when the table cannot be read this way (e.g. a remote table)."""
        if not await self.vector.has_collection(name):
            return [], []
        conn = await self.vector.get_connection()
        table = await conn.open_table(name)
        if not hasattr(table, "query"):
            return None
        rows = await table.query().select(["id", "vector"]).to_list()
        return [str(r["id"]) for r in rows], [r["vector"] for r in rows]


# cognee's postgres graph adapter serialises its writes with this transaction-level
# advisory lock (cognee.infrastructure.databases.graph.postgres_demo.adapter._GRAPH_WRITE_LOCK_KEY);
# ours take it too, so a raw write never interleaves with one of cognee's.
GRAPH_WRITE_LOCK_KEY = 5522063


def hnsw_index_name(collection: str) -> str:
    return f"{collection}_falsify_hnsw"


_engines_loop: dict[int, object] = {}


class PostgresBackend:
    name = "postgres"

    def __init__(self, graph, vector):
        self.graph = graph
        self.vector = vector
        self._indexed: set[str] = set()
        self._graph_indexed = False

    async def bind_to_running_loop(self) -> None:
        """cognee caches its adapters (and their asyncpg pools) per process; a process that
        opens the stores again under a new event loop (one ``asyncio.run`` per CLI command,
        as tests/cli_batch.py and the benchmark's children do) would get pooled connections
        of the dead loop ("attached to a different loop"). Drop those pools (without closing
        the connections: their loop is gone) so new ones are made on this loop."""
        import asyncio

        loop = asyncio.get_running_loop()
        for engine in (self.graph.engine, self.vector.engine):
            seen = _engines_loop.get(id(engine))
            if seen is not None and seen is not loop:
                await engine.dispose(close=False)
            _engines_loop[id(engine)] = loop

    async def _read(self, sql: str, params: dict | None = None) -> list:
        from sqlalchemy import text

        await self.graph.initialize()
        async with self.graph.engine.connect() as conn:
            return list((await conn.execute(text(sql), params or {})).all())

    async def _write(self, *statements: tuple[str, dict]) -> None:
        """Statements in ONE transaction, behind cognee's graph-write lock."""
        from sqlalchemy import text

        await self.graph.initialize()
        async with self.graph.engine.begin() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": GRAPH_WRITE_LOCK_KEY})
            for sql, params in statements:
                await conn.execute(text(sql), params)

    async def raw_nodes(self, ids: list[str]) -> dict[str, dict]:
        rows = await self._read("SELECT id, name, type, properties FROM graph_node WHERE id = ANY(:ids)",
                                {"ids": ids})
        return {row[0]: node_props(*row) for row in rows}

    async def nodes_by_type_name(self, type_: str, name: str) -> list[dict]:
        rows = await self._read("SELECT id, name, type, properties FROM graph_node WHERE type = :t AND name = :name",
                                {"t": type_, "name": name})
        return [node_props(*row) for row in rows]

    async def ids_of_type(self, type_: str) -> list[str]:
        return [r[0] for r in await self._read("SELECT id FROM graph_node WHERE type = :t", {"t": type_})]

    async def edges_touching(self, ids: list[str], types=None) -> list[tuple[str, str, str, dict]]:
        # two index scans (cognee's idx_edge_source / idx_edge_target)
        rows = await self._read(
            "SELECT source_id, target_id, relationship_name, properties FROM graph_edge WHERE source_id = ANY(:ids) "
            "UNION ALL "
            "SELECT source_id, target_id, relationship_name, properties FROM graph_edge WHERE target_id = ANY(:ids)",
            {"ids": ids})
        return _unique_edges(rows, types)

    async def members_of(self, question_ids: list[str], type_: str) -> list[str]:
        rows = await self._read(
            "SELECT e.source_id FROM graph_edge e JOIN graph_node n ON n.id = e.source_id "
            "WHERE e.target_id = ANY(:q) AND e.relationship_name = 'part_of' AND n.type = :t",
            {"q": question_ids, "t": type_})
        return [r[0] for r in rows]

    async def update_nodes(self, patches: dict[str, dict]) -> None:
        """ONE statement: a JSONB merge (``properties || patch``) per node, where cognee's
        own ``get_nodes``/``get_neighborhood`` read them. Missing ids match no row."""
        items = json.dumps([{"id": i, "patch": p} for i, p in patches.items()])
        await self._write((
            "UPDATE graph_node AS n SET properties = COALESCE(n.properties, '{}'::jsonb) || p.patch, "
            "updated_at = now() FROM jsonb_to_recordset(CAST(:items AS jsonb)) AS p(id text, patch jsonb) "
            "WHERE n.id = p.id", {"items": items}))

    async def delete_edges(self, rows: list[tuple[str, str, str]]) -> None:
        items = json.dumps([{"s": s, "d": d, "r": r} for s, d, r in rows])
        await self._write((
            "DELETE FROM graph_edge AS e USING jsonb_to_recordset(CAST(:items AS jsonb)) AS x(s text, d text, r text) "
            "WHERE e.source_id = x.s AND e.target_id = x.d AND e.relationship_name = x.r", {"items": items}))

    async def delete_nodes(self, ids: list[str]) -> None:
        # graph_edge's foreign keys cascade: the node's edges go with it
        await self._write(("DELETE FROM graph_node WHERE id = ANY(:ids)", {"ids": ids}))

    async def checkpoint(self) -> None:
        """Nothing to flush: every write above committed its own transaction."""

    async def vector_housekeeping(self, names: Iterable[str], fragments: int) -> list[str]:
        """An HNSW index (cosine, what cognee's search orders by) on each FALSIFY collection
        that exists and has none yet; cognee creates no approximate-nearest-neighbour index.
        Returns the collections indexed now."""
        from sqlalchemy import text

        if not self._graph_indexed:
            # the subject-predicate lookup's index (memory_core.store.postgres.index_graph): made at
            # open when graph_node exists, else here after the first commit created it. Without it
            # each lookup was a scan of graph_node (18 ms on the MQuAKE x10 graph, EXPLAIN ANALYZE).
            async with self.graph.engine.begin() as conn:
                if (await conn.execute(text("SELECT to_regclass('graph_node') IS NOT NULL"))).scalar():
                    await conn.execute(text("CREATE INDEX IF NOT EXISTS falsify_node_type_name ON graph_node (type, name)"))
                    self._graph_indexed = True
        done = []
        for name in names:
            if name in self._indexed or not await self.vector.has_collection(name):
                continue
            from memory_core.store.lexical import postgres_fts_index_sql

            async with self.vector.engine.begin() as conn:
                await conn.execute(text(
                    f'CREATE INDEX IF NOT EXISTS "{hnsw_index_name(name)}" ON "{name}" '
                    "USING hnsw (vector vector_cosine_ops)"))
                await conn.execute(text(postgres_fts_index_sql(name)))  # gate 1's lexical search
            self._indexed.add(name)
            done.append(name)
        return done

    async def vector_ids(self, name: str) -> set[str]:
        from sqlalchemy import text

        if not await self.vector.has_collection(name):
            return set()
        async with self.vector.engine.connect() as conn:
            return {str(r[0]) for r in (await conn.execute(text(f'SELECT id FROM "{name}"'))).all()}


def for_engines(graph, vector):
    from memory_core.store import settings

    return PostgresBackend(graph, vector) if settings.backend() == "postgres" else LadybugBackend(graph, vector)
