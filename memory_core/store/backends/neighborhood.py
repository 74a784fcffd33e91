"""cognee's ``get_neighborhood(ids, depth=1)``, read with cognee's own queries and shaped as cognee
shapes it (cognee 1.6.5), but with the rows decoded in a worker thread when there are many
(:mod:`memory_core.store.off_loop`): cognee's adapters decode them on the caller's event loop
after their queries (an investigation of 9,006 nodes and ~21,000 edges held it ~0.5 s), and on
PostgreSQL the driver decodes the JSONB there too, so FALSIFY reads it as text.

The cognee internals leaned on are here and only here: the queries of ``LadybugAdapter`` and
``PostgresAdapter.get_neighborhood`` (and the latter's ``_fetch_nodes_by_id`` /
``_fetch_edges_within``) and how each shapes its answer. ``tests/integration/test_cognee_contract.py``
(``test_neighborhood_reads_what_cognees_get_neighborhood_returns``, on both backends) checks that
what these return is exactly what cognee's ``get_neighborhood`` returns; if cognee changes either,
that test fails.
"""

from __future__ import annotations

import json
import logging
from typing import Awaitable, Callable

from memory_core.store import off_loop

log = logging.getLogger("falsify")

Nodes = list[tuple[str, dict]]
Edges = list[tuple[str, str, str, dict]]


async def ladybug(graph, ids: list[str]) -> tuple[Nodes, Edges]:
    """``LadybugAdapter.get_neighborhood(ids, depth=1)`` without ``edge_types``: its three queries
    through the adapter's ``query`` (run in its executor; properties come back as JSON text)."""
    if not ids:
        return [], []
    rows = await graph.query(
        "MATCH (seed:Node)-[r*1..1]-(neighbor:Node) WHERE seed.id IN $node_ids RETURN DISTINCT neighbor.id",
        {"node_ids": ids},
    )
    every = list(set(ids) | {row[0] for row in rows if row[0]})
    node_rows = await graph.query(
        "UNWIND $ids AS wanted MATCH (n:Node) WHERE n.id = wanted RETURN n.id, n.name, n.type, n.properties",
        {"ids": every},
    )
    if not any(row[0] for row in node_rows):
        return [], []
    edge_rows = await graph.query(
        "UNWIND $ids AS wanted MATCH (n:Node)-[r]->(m:Node) WHERE n.id = wanted "
        "RETURN n.id, m.id, r.relationship_name, r.properties",
        {"ids": every},
    )
    return await off_loop.run(
        _ladybug_shaped, node_rows, edge_rows, set(every), size=len(node_rows) + len(edge_rows)
    )


def _ladybug_shaped(node_rows, edge_rows, kept: set) -> tuple[Nodes, Edges]:
    """A node ``(id, {name, type} + its decoded blob)`` (a blob that is not JSON stays as
    ``properties``, as does an empty one); an edge ``(source, target, relationship, decoded props
    or {})``, only those whose target is among ``kept``."""
    nodes = []
    for node_id, name, type_, blob in node_rows:
        if not node_id:
            continue
        props = {"name": name, "type": type_, "properties": blob}
        if blob:
            try:
                props.update(json.loads(blob))
                del props["properties"]
            except json.JSONDecodeError:
                log.warning("Failed to parse properties JSON for node %s", node_id)
        nodes.append((str(node_id), props))
    if not nodes:
        return [], []
    edges = []
    for row in edge_rows:
        if not row or len(row) < 3:
            continue
        source, target = str(row[0]), str(row[1])
        if target not in kept:
            continue
        props = {}
        if len(row) > 3 and row[3]:
            try:
                props = json.loads(row[3])
            except (json.JSONDecodeError, TypeError):
                log.warning("Failed to parse edge properties for %s->%s", source, target)
        edges.append((source, target, str(row[2]), props))
    return nodes, edges


async def postgres(read: Callable[[str, dict], Awaitable[list]], ids: list[str]) -> tuple[Nodes, Edges]:
    """``PostgresAdapter.get_neighborhood(ids, depth=1)`` without ``edge_types``: one hop over the
    edges touching ``ids``, then the nodes reached and the edges among them, with ``read`` (a
    query on cognee's engine: :meth:`PostgresBackend._read`) and the JSONB read as text."""
    if not ids:
        return [], []
    reached = {str(i) for i in ids}
    hop = await read(
        "SELECT source_id, target_id FROM graph_edge WHERE source_id = ANY(:ids) OR target_id = ANY(:ids)",
        {"ids": list(reached)},
    )
    reached.update(end for row in hop for end in row)
    every = list(reached)
    node_rows = await read(
        "SELECT id, name, type, properties::text FROM graph_node WHERE id = ANY(:ids)", {"ids": every}
    )
    edge_rows = await read(
        "SELECT source_id, target_id, relationship_name, properties::text FROM graph_edge "
        "WHERE source_id = ANY(:ids) AND target_id = ANY(:ids)",
        {"ids": every},
    )
    return await off_loop.run(_postgres_shaped, node_rows, edge_rows, size=len(node_rows) + len(edge_rows))


def _postgres_shaped(node_rows, edge_rows) -> tuple[Nodes, Edges]:
    """``(id, {name, type} + the decoded properties)`` and ``(source, target, relationship,
    decoded properties or {})``: ``_fetch_nodes_by_id`` / ``_fetch_edges_within``."""
    nodes = [(i, {"name": name, "type": type_, **_decoded(blob)}) for i, name, type_, blob in node_rows]
    edges = [(s, d, r, _decoded(blob)) for s, d, r, blob in edge_rows]
    return nodes, edges


def _decoded(blob) -> dict:
    """cognee's ``_decode_properties`` of a JSONB value read as text."""
    if not blob:
        return {}
    value = json.loads(blob) if isinstance(blob, str) else blob
    return dict(value) if value else {}


__all__ = ["ladybug", "postgres"]
