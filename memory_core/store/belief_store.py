"""The belief store: a thin adapter between :mod:`memory_core.core.beliefs` views and
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

import contextlib
import json
import os
from pathlib import Path
from typing import Iterable, Optional

from memory_core.core.beliefs import ALIVE, BeliefView, Edge, Node
from memory_core.core.vocabulary import BELIEF_EDGES, DEPENDS_ON, REFUTES, SUPERSEDES, SUPPORTS
from memory_core.core.identity import KIND_BY_TYPE, KINDS, collection, node_id
from memory_core.core.vocabulary import TEXT_FIELD

COMPACT_AT_FRAGMENTS = 16  # see BeliefStore.compact_vectors


def state_of(props: dict) -> str:
    alignment = props.get("truth_alignment") or []
    if isinstance(alignment, str):
        try:
            alignment = json.loads(alignment)
        except ValueError:
            alignment = [alignment]
    return alignment[0] if alignment else ALIVE


def node_props(node_id: str, name, type_, blob) -> dict:
    """A node row (id, name, type, JSON blob) as cognee's ``get_nodes`` returns it."""
    props = json.loads(blob) if isinstance(blob, str) and blob else dict(blob or {})
    return dict(props, id=node_id, name=name, type=type_)


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
    async def open(cls, repair_torn_checkpoint: bool = False, home: Optional[Path] = None) -> "BeliefStore":
        """``repair_torn_checkpoint``: only under the root's writer lock (see
        :func:`discard_torn_graph_checkpoint`). What was repaired is in ``.repaired``.
        ``home``: Ladybug creates ``$HOME/.lbdb/extension`` when its database opens;
        HOME points there for that moment only, then is restored."""
        from cognee.infrastructure.databases.graph import get_graph_engine
        from cognee.infrastructure.databases.vector import get_vector_engine_async

        repaired = discard_torn_graph_checkpoint() if repair_torn_checkpoint else None
        with _home(home):
            graph = await get_graph_engine()
        store = cls(graph, await get_vector_engine_async())
        store.repaired = repaired
        return store

    # ---- reading -------------------------------------------------------
    async def raw_nodes(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = [i for i in dict.fromkeys(ids) if i]
        if not ids:
            return {}
        # cognee's get_nodes (`WHERE n.id IN $ids`) measured 1.2 -> 5.3 ms for one id on a graph ten
        # times larger; this primary-key form 0.4 -> 0.9 ms (same columns, same parsing)
        rows = await self.graph.query(
            "UNWIND $ids AS x MATCH (n:Node {id: x}) RETURN n.id, n.name, n.type, n.properties", {"ids": ids})
        return {row[0]: node_props(*row) for row in rows}

    async def find_keys(self, keys: Iterable[str]) -> dict[str, dict]:
        """Existing nodes for these keys (any kind): ``{key: props}``."""
        wanted = {node_id(kind, key): key for key in keys for kind in KINDS}
        found = await self.raw_nodes(wanted)
        return {wanted[i]: props for i, props in found.items()}

    async def nodes_by_sp(self, sp: str) -> list[dict]:
        rows = await self.graph.query(
            "MATCH (n:Node) WHERE n.type = 'Evidence' AND n.name = $sp "
            "RETURN n.id, n.name, n.type, n.properties", {"sp": sp})
        return [node_props(*row) for row in rows]

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
        # `WHERE n.id IN $ids` is planned as a seek on the primary key; the `UNWIND $ids AS x
        # ... WHERE n.id = x` form was planned as a scan of every edge plus a hash join
        # (measured: 2.0 -> 11.6 ms on a graph ten times larger, against 1.2 -> 2.7 ms)
        out_rows = await self.graph.query(
            "MATCH (n:Node)-[r]->(m:Node) WHERE n.id IN $ids "
            "RETURN n.id, m.id, r.relationship_name, r.properties", {"ids": ids})
        in_rows = await self.graph.query(
            "MATCH (n:Node)-[r]->(m:Node) WHERE m.id IN $ids "
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
                    "MATCH (h:Node)-[r]->(q:Node) WHERE q.id IN $q AND h.type = 'Hypothesis' "
                    "AND r.relationship_name = 'part_of' RETURN h.id", {"q": [node_id("question", q)]})
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
        """Raw deletes, no checkpoint: the caller ends its write with :meth:`checkpoint`."""
        for src, dst, rel in rows:
            await self.graph.query(
                "MATCH (n:Node)-[r]->(m:Node) WHERE n.id = $s AND m.id = $d AND r.relationship_name = $r DELETE r",
                {"s": src, "d": dst, "r": rel})

    async def update_nodes(self, patches: dict[str, dict]) -> None:
        """Merge ``{node_id: {property: value}}`` into stored nodes in ONE query, no checkpoint.

        cognee's adapter has one call per property kind (``set_node_truth_state``,
        ``set_node_feedback_weights``, ``update_node`` per node), each a read, a write
        and a CHECKPOINT (~15 ms each). A revision changes state, epoch, weight and
        sometimes confidence of the same nodes, so this writes them together into
        the node's JSON property blob, where those calls keep them; the layout is
        guarded by tests/test_cognee_contract.py (cognee's own readers see it).
        Missing ids are skipped. The caller ends its write with :meth:`checkpoint`."""
        ids = [i for i in patches if patches[i]]
        if not ids:
            return
        rows = await self.graph.query("MATCH (n:Node) WHERE n.id IN $ids RETURN n.id, n.properties", {"ids": ids})
        items = []
        for i, raw in rows:
            blob = json.loads(raw) if raw else {}
            blob.update(patches[i])
            items.append({"node_id": i, "properties": json.dumps(blob)})
        if items:
            from datetime import datetime, timezone

            await self.graph.query(
                "UNWIND $items AS item MATCH (n:Node) WHERE n.id = item.node_id "
                "SET n.properties = item.properties, n.updated_at = TIMESTAMP($now)",
                {"items": items, "now": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")})

    async def checkpoint(self) -> None:
        """Flush Ladybug's WAL: every write of ours ends with one, before its journal
        commits (see :func:`discard_torn_graph_checkpoint`)."""
        await self.graph.checkpoint()

    async def set_states(self, states: dict[str, tuple[str, int]]) -> None:
        """``{node_id: (state, epoch)}``, durable on return."""
        await self.update_nodes({i: {"truth_alignment": [s], "truth_epoch": int(e)} for i, (s, e) in states.items()})
        await self.checkpoint()

    async def set_weights(self, weights: dict[str, float]) -> None:
        """``{node_id: weight}``, durable on return."""
        await self.update_nodes({i: {"feedback_weight": float(w)} for i, w in weights.items()})
        await self.checkpoint()

    async def delete(self, nodes: dict[str, str], checkpoint: bool = True) -> None:
        """Hard-delete ``{node_id: kind}`` from the graph AND the vector store."""
        if not nodes:
            return
        await self.graph.query("MATCH (n:Node) WHERE n.id IN $ids DETACH DELETE n", {"ids": list(nodes)})
        if checkpoint:
            await self.checkpoint()
        by_kind: dict[str, list[str]] = {}
        for i, kind in nodes.items():
            by_kind.setdefault(kind, []).append(i)
        for kind, ids in by_kind.items():
            await self.delete_vectors(collection(kind), ids)

    async def delete_vectors(self, name: str, ids: list[str]) -> None:
        from uuid import UUID

        if await self.vector.has_collection(name):
            await self.vector.delete_data_points(name, [UUID(i) for i in ids])

    async def compact_vectors(self, fragments: int = COMPACT_AT_FRAGMENTS) -> list[str]:
        """Compact each FALSIFY vector table that has ``fragments`` or more fragments.

        cognee writes every ``add_data_points`` batch as new LanceDB fragments (32 rows
        per fragment at load, one per revision) and every delete as a deletion file;
        nothing compacts them, and an unindexed LanceDB search, upsert or delete pays
        per fragment. Measured on the MQuAKE graph x10 (9,590 evidence rows in 300
        fragments): search 79 -> 41 ms, add_data_points of one node 164 -> 45 ms,
        delete 67 -> 36 ms after compaction. Uses LanceDB's ``optimize`` (compaction;
        versions older than its default 7 days are pruned). Returns the tables compacted."""
        conn = await self.vector.get_connection()
        done = []
        for kind in KINDS:
            name = collection(kind)
            if not await self.vector.has_collection(name):
                continue
            table = await conn.open_table(name)
            if (await table.stats())["fragment_stats"]["num_fragments"] >= fragments:
                await table.optimize()
                done.append(name)
        return done

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


@contextlib.contextmanager
def _home(home: Optional[Path]):
    if home is None:
        yield
        return
    before = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = before


async def warm_up(store: "BeliefStore") -> float:
    """Load the embedding model, create cognee's relational tables and start its pipeline
    runner once (the first pipeline run of a process costs ~1 s). Returns milliseconds."""
    import time

    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine
    from cognee.tasks.storage import add_data_points  # noqa: F401  (cognee imports the write path lazily)

    from memory_core.store.pipeline import noop_tasks, run_pipeline

    start = time.perf_counter()
    await run_pipeline(noop_tasks(), [{}], "falsify_warm_up")
    await get_embedding_engine().embed_text(["warm up"])  # loads the embedding model
    await store.search(collection("evidence"), "warm up", 1)  # opens the vector table
    return (time.perf_counter() - start) * 1000


def discard_torn_graph_checkpoint():
    """Clear the debris of a Ladybug checkpoint that was killed as it began.

    Ladybug (0.19) checkpoints by moving its WAL to ``<db>.wal.checkpoint`` and
    writing the dirty pages to ``<db>.shadow``, whose header carries the database
    id; only then are pages copied into ``<db>``. A SIGKILL between creating the
    shadow file and writing into it leaves an *empty* ``<db>.shadow``, and every
    later open fails with "Database ID for temporary file ... does not match the
    current database" -- the root is wedged (found by tests/test_fault_injection.py).
    An empty shadow means nothing of that checkpoint reached ``<db>``, which is
    as of the previous checkpoint. Every write of FALSIFY ends with a checkpoint
    before its journal commits (cognee's adapter checkpoints after each of its
    write calls; :func:`memory_core.store.writer.apply` after its raw writes), so the
    interrupted WAL holds only writes of a journal intent that had not committed,
    which :func:`memory_core.store.writer.recover`
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
