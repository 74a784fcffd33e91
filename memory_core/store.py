"""The belief store: a thin adapter between :mod:`memory_core.beliefs` views and
cognee's engines (graph: Ladybug via ``get_graph_engine``; vectors: LanceDB via
``get_vector_engine_async``). Every method works in batches.

Traps handled here (measured on cognee 1.6.5):
* ``add_data_points`` on an existing id rewrites the whole property blob (truth
  state cleared, weight back to 0.5): only ever add nodes that do not exist.
* ``delete_nodes`` leaves the vector rows: :meth:`delete` removes both.
* Ladybug's ``add_edge`` with a missing endpoint silently creates nothing:
  callers check endpoints first.
"""

from __future__ import annotations

import json
from typing import Iterable, Optional

from .beliefs import ALIVE, BeliefView, Edge, Node
from .edges import BELIEF_EDGES, DEPENDS_ON, REFUTES, SUPERSEDES, SUPPORTS
from .models import KIND_BY_TYPE, MODEL_BY_KIND, TEXT_FIELD, collection, node_id

KINDS = tuple(MODEL_BY_KIND)


def state_of(props: dict) -> str:
    alignment = props.get("truth_alignment") or []
    if isinstance(alignment, str):
        try:
            alignment = json.loads(alignment)
        except ValueError:
            alignment = [alignment]
    return alignment[0] if alignment else ALIVE


def to_node(props: dict) -> Optional[Node]:
    kind = KIND_BY_TYPE.get(props.get("type", ""))
    if kind is None or "key" not in props:
        return None
    epoch = props.get("truth_epoch")
    return Node(
        key=props["key"],
        kind=kind,
        state=state_of(props),
        weight=float(props.get("feedback_weight", 0.5) if props.get("feedback_weight") is not None else 0.5),
        confidence=props.get("confidence"),
        epoch=int(epoch) if epoch is not None else 0,
        question=props.get("question_key") if kind != "question" else props["key"],
        prior=props.get("prior"),
        text=props.get(TEXT_FIELD[kind], ""),
    )


def to_edge(rel: str, src_key: str, dst_key: str, props: dict) -> Edge:
    return Edge(
        rel,
        src_key,
        dst_key,
        critical=bool(props.get("critical", True)),
        group=props.get("group"),
        weight=float(props.get("weight", 1.0) if props.get("weight") is not None else 1.0),
        confidence=props.get("confidence"),
    )


def edge_props(edge: Edge) -> dict:
    if edge.kind == DEPENDS_ON:
        return {"critical": edge.critical, "group": edge.group}
    if edge.kind in (SUPPORTS, REFUTES):
        return {"weight": edge.weight}
    if edge.kind == SUPERSEDES:
        return {"confidence": edge.confidence}
    return {}


def edge_row(edge: Edge, kinds: dict[str, str]) -> tuple[str, str, str, dict]:
    return (node_id(kinds[edge.src], edge.src), node_id(kinds[edge.dst], edge.dst), edge.kind, edge_props(edge))


class BeliefStore:
    def __init__(self, graph, vector):
        self.graph = graph
        self.vector = vector

    @classmethod
    async def open(cls, repair_torn_checkpoint: bool = False) -> "BeliefStore":
        """``repair_torn_checkpoint``: only under the root's writer lock (see
        :func:`discard_torn_graph_checkpoint`). What was repaired is in ``.repaired``."""
        from cognee.infrastructure.databases.graph import get_graph_engine
        from cognee.infrastructure.databases.vector import get_vector_engine_async

        repaired = discard_torn_graph_checkpoint() if repair_torn_checkpoint else None
        store = cls(await get_graph_engine(), await get_vector_engine_async())
        store.repaired = repaired
        return store

    # ---- reading -------------------------------------------------------
    async def raw_nodes(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = [i for i in dict.fromkeys(ids) if i]
        if not ids:
            return {}
        return {n["id"]: n for n in await self.graph.get_nodes(ids) if n and n.get("id")}

    async def find_keys(self, keys: Iterable[str]) -> dict[str, dict]:
        """Existing nodes for these keys (any kind): ``{key: props}``."""
        wanted = {node_id(kind, key): key for key in keys for kind in KINDS}
        found = await self.raw_nodes(wanted)
        return {wanted[i]: props for i, props in found.items()}

    async def nodes_by_sp(self, sp: str) -> list[dict]:
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.type = 'Evidence' AND n.name = $sp RETURN n.id", {"sp": sp}
        )
        return list((await self.raw_nodes(r[0] for r in rows)).values())

    async def investigation(self, question_key: str) -> tuple[list[dict], list[tuple[str, str, str, dict]]]:
        """One investigation's whole subgraph in one call (every node has a
        ``part_of`` edge to its question)."""
        qid = node_id("question", question_key)
        nodes, edges = await self.graph.get_neighborhood([qid], depth=1)
        return [dict(props, id=i) for i, props in nodes], edges

    async def question_keys(self) -> list[str]:
        rows = await self.graph.query("MATCH (n:Node) WHERE n.type = 'InvestigationQuestion' RETURN n.id")
        found = await self.raw_nodes(r[0] for r in rows)
        return sorted(p["key"] for p in found.values() if "key" in p)

    async def view_of_investigation(self, question_key: str) -> BeliefView:
        nodes, edges = await self.investigation(question_key)
        return self._view(nodes, edges)

    def _view(self, nodes: list[dict], edges) -> BeliefView:
        by_id = {n["id"]: to_node(n) for n in nodes}
        view = BeliefView()
        for node in by_id.values():
            if node is not None:
                view.add_node(node)
        for src, dst, rel, props in edges:
            if rel in BELIEF_EDGES and by_id.get(src) and by_id.get(dst):
                view.add_edge(to_edge(rel, by_id[src].key, by_id[dst].key, props or {}))
        return view

    async def all_edges_of(self, ids: list[str]) -> list[tuple[str, str, str, dict]]:
        """Every edge (part_of included) into or out of ``ids``."""
        return await self._edges_touching(ids, types=None)

    async def _edges_touching(self, ids: list[str], types=BELIEF_EDGES) -> list[tuple[str, str, str, dict]]:
        """Every belief edge into or out of ``ids`` (two indexed queries)."""
        if not ids:
            return []
        out_rows = await self.graph.query(
            "UNWIND $ids AS x MATCH (n:Node)-[r]->(m:Node) WHERE n.id = x "
            "RETURN n.id, m.id, r.relationship_name, r.properties", {"ids": ids})
        in_rows = await self.graph.query(
            "UNWIND $ids AS x MATCH (n:Node)-[r]->(m:Node) WHERE m.id = x "
            "RETURN n.id, m.id, r.relationship_name, r.properties", {"ids": ids})
        seen, result = set(), []
        for src, dst, rel, props in list(out_rows) + list(in_rows):
            if (types is not None and rel not in types) or (src, dst, rel) in seen:
                continue
            seen.add((src, dst, rel))
            result.append((src, dst, rel, json.loads(props) if isinstance(props, str) and props else (props or {})))
        return result

    async def affected_view(self, seed_ids: list[str]) -> BeliefView:
        """The part of the graph a revision of ``seed_ids`` can touch: the seeds'
        transitive dependents (through depends_on), the hypotheses they support,
        those hypotheses' rivals, and every node one edge away from any of them
        (antecedents, consumers, superseders). Cost follows the affected region,
        not the graph: one pair of edge queries per dependency level."""
        region: set[str] = set()
        frontier = list(dict.fromkeys(seed_ids))
        edges: dict[tuple, tuple] = {}
        hypotheses: set[str] = set()
        while frontier:
            region.update(frontier)
            found = await self._edges_touching(frontier)
            nxt = []
            for e in found:
                edges[e[:3]] = e
                src, dst, rel, _ = e
                if rel == DEPENDS_ON and dst in region and src not in region:
                    nxt.append(src)
                if rel == SUPPORTS and src in region:
                    hypotheses.add(dst)
            frontier = list(dict.fromkeys(nxt))
        # rivals: every hypothesis of the same questions, with their support edges
        extra = set(hypotheses)
        if hypotheses:
            props = await self.raw_nodes(hypotheses)
            questions = {p.get("question_key") for p in props.values()}
            for q in sorted(q for q in questions if q):
                rows = await self.graph.query(
                    "MATCH (h:Node)-[r]->(q:Node) WHERE q.id = $q AND h.type = 'Hypothesis' "
                    "AND r.relationship_name = 'part_of' RETURN h.id", {"q": node_id("question", q)})
                extra.update(r[0] for r in rows)
        fresh = sorted(extra - region)
        for e in await self._edges_touching(fresh):
            edges[e[:3]] = e
        ids = set(region) | extra
        for src, dst, _, _ in edges.values():
            ids.update((src, dst))
        nodes = await self.raw_nodes(ids)
        return self._view(list(nodes.values()), edges.values())

    # ---- writing -------------------------------------------------------
    async def add_points(self, points: list) -> None:
        """Write new DataPoints to graph + vector (never call on existing ids)."""
        if points:
            from cognee.tasks.storage import add_data_points

            await add_data_points(points)

    async def add_edges(self, edges: list[Edge], kinds: dict[str, str]) -> None:
        """Write belief edges; ``kinds`` maps every endpoint key to its node kind."""
        await self.add_raw_edges([edge_row(e, kinds) for e in edges])

    async def add_raw_edges(self, rows: list[tuple[str, str, str, dict]]) -> None:
        if rows:
            await self.graph.add_edges(rows)

    async def delete_edges(self, rows: list[tuple[str, str, str]]) -> None:
        for src, dst, rel in rows:
            await self.graph.query(
                "MATCH (n:Node)-[r]->(m:Node) WHERE n.id = $s AND m.id = $d AND r.relationship_name = $r DELETE r",
                {"s": src, "d": dst, "r": rel})
        if rows and hasattr(self.graph, "checkpoint"):
            # every write method of cognee's Ladybug adapter checkpoints; a raw query does not:
            # do it here, so no write of ours lives only in the WAL (see discard_torn_graph_checkpoint)
            await self.graph.checkpoint()

    async def set_states(self, states: dict[str, tuple[str, int]]) -> None:
        """``{node_id: (state, epoch)}`` via set_node_truth_state (one batch)."""
        if states:
            await self.graph.set_node_truth_state(
                {i: {"truth_alignment": [s], "truth_epoch": int(e)} for i, (s, e) in states.items()})

    async def set_weights(self, weights: dict[str, float]) -> None:
        if weights:
            await self.graph.set_node_feedback_weights({i: float(w) for i, w in weights.items()})

    async def set_properties(self, values: dict[str, dict]) -> None:
        for i, patch in values.items():
            await self.graph.update_node(i, patch)

    async def delete(self, nodes: dict[str, str]) -> None:
        """Hard-delete ``{node_id: kind}`` from the graph AND the vector store."""
        if not nodes:
            return
        await self.graph.delete_nodes(list(nodes))
        by_kind: dict[str, list[str]] = {}
        for i, kind in nodes.items():
            by_kind.setdefault(kind, []).append(i)
        for kind, ids in by_kind.items():
            await self.delete_vectors(collection(kind), ids)

    async def delete_vectors(self, name: str, ids: list[str]) -> None:
        from uuid import UUID

        if await self.vector.has_collection(name):
            await self.vector.delete_data_points(name, [UUID(i) for i in ids])

    async def search(self, name: str, text: str, limit: int) -> list:
        if not await self.vector.has_collection(name):
            return []
        return await self.vector.search(name, query_text=text, limit=limit, include_payload=True)

    async def vector_ids(self, name: str) -> set[str]:
        if not await self.vector.has_collection(name):
            return set()
        conn = await self.vector.get_connection()
        table = await conn.open_table(name)
        rows = await table.query().select(["id"]).to_list()
        return {str(r["id"]) for r in rows}


def discard_torn_graph_checkpoint():
    """Clear the debris of a Ladybug checkpoint that was killed as it began.

    Ladybug (0.19) checkpoints by moving its WAL to ``<db>.wal.checkpoint`` and
    writing the dirty pages to ``<db>.shadow``, whose header carries the database
    id; only then are pages copied into ``<db>``. A SIGKILL between creating the
    shadow file and writing into it leaves an *empty* ``<db>.shadow``, and every
    later open fails with "Database ID for temporary file ... does not match the
    current database" -- the root is wedged (found by tests/test_fault_injection.py).
    An empty shadow means nothing of that checkpoint reached ``<db>``, which is
    as of the previous checkpoint. cognee's adapter checkpoints after every
    write call (and :meth:`BeliefStore.delete_edges` after its raw deletes), so
    the interrupted WAL holds only the one write call in flight -- part of a
    journal intent that had not committed, which :func:`memory_core.writer.recover`
    then rolls back or finishes. So the two files are dropped and the database
    opens as of its last checkpoint. A non-empty shadow is left to Ladybug, which
    replays it. Call only while holding the root's writer lock.
    """
    from pathlib import Path

    from cognee.infrastructure.databases.graph.config import get_graph_config

    config = get_graph_config()
    if str(config.graph_database_provider).lower() not in ("ladybug", "kuzu") or not config.graph_file_path:
        return None
    db = Path(config.graph_file_path)
    shadow, wal = db.with_name(db.name + ".shadow"), db.with_name(db.name + ".wal.checkpoint")
    if not (shadow.is_file() and shadow.stat().st_size == 0 and wal.is_file()):
        return None
    wal.unlink()
    shadow.unlink()
    return (f"discarded a graph checkpoint interrupted as it began ({shadow.name} empty); "
            "the graph reopened as of its previous checkpoint")
