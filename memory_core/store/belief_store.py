"""The belief store: a thin adapter between :mod:`memory_core.core.beliefs` views and
cognee's engines (graph via ``get_graph_engine``, vectors via ``get_vector_engine_async``:
Ladybug + LanceDB, or PostgreSQL + pgvector), with the raw queries of the backend it holds
(:mod:`memory_core.store.backends`). Every method works in batches.

Traps handled here (measured on cognee 1.6.5):
* ``add_data_points`` on an existing id rewrites the whole property blob (truth
  state cleared, weight back to 0.5): only ever add nodes that do not exist.
* ``delete_nodes`` leaves the vector rows: :meth:`delete` removes both.
* Ladybug's ``add_edge`` with a missing endpoint silently creates nothing:
  callers check endpoints first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Optional

from memory_core.core.beliefs import ALIVE, BeliefView, Edge, Node
from memory_core.core.cardinality import stored_predicates
from memory_core.core.vocabulary import BELIEF_EDGES, DEPENDS_ON, DISPUTES, REFUTES, SUPERSEDES, SUPPORTS
from memory_core.core.identity import KIND_BY_TYPE, KINDS, TYPE_BY_KIND, collection, node_id
from memory_core.core.keys import normalise_term
from memory_core.core.vocabulary import TEXT_FIELD
from memory_core.store import embedder, off_loop, settings as config
from memory_core.store.backends.base import Backend, node_props, trim_native_heap  # noqa: F401  (node_props re-exported)
from memory_core.store.backends.housekeeping import ladybug_home
from memory_core.store.embedder import reuse_vectors
from memory_core.store.environment import holding_cognee_records

COMPACT_AT_FRAGMENTS = 16  # see BeliefStore.compact_vectors
POINTS_A_CALL = 256
REUSABLE_VECTORS_MAX = 50_000  # texts whose vectors embed() keeps for the next write (see BeliefStore.embed)


def state_of(props: dict) -> str:
    alignment = props.get("truth_alignment") or []
    if isinstance(alignment, str):
        try:
            alignment = json.loads(alignment)
        except ValueError:
            alignment = [alignment]
    return alignment[0] if alignment else ALIVE


def _ids_of_keys(keys: list[str]) -> dict[str, str]:
    return {node_id(kind, key): key for key in keys for kind in KINDS}


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
        valid_from=props.get("valid_from"),
        valid_to=props.get("valid_to"),
        # stored before the stated end was kept: its valid_to is taken as what it stated
        stated_to=props["stated_to"] if "stated_to" in props else props.get("valid_to"),
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
        groups=_groups(props.get("groups")),
    )


def _groups(value) -> Optional[tuple]:
    """A depends_on edge's ``groups`` property (several justifications share the antecedent)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return tuple(value) if isinstance(value, (list, tuple)) and len(value) > 1 else None


def edge_props(edge: Edge) -> dict:
    if edge.kind == DEPENDS_ON:
        if edge.groups:
            return {"critical": edge.critical, "group": edge.groups[0], "groups": list(edge.groups)}
        return {"critical": edge.critical, "group": edge.group}
    if edge.kind in (SUPPORTS, REFUTES):
        return {"weight": edge.weight}
    if edge.kind in (SUPERSEDES, DISPUTES):
        return {"confidence": edge.confidence}
    return {}


def edge_row(edge: Edge, kinds: dict[str, str]) -> tuple[str, str, str, dict]:
    return (
        node_id(kinds[edge.src], edge.src),
        node_id(kinds[edge.dst], edge.dst),
        edge.kind,
        edge_props(edge),
    )


def damaged(error: BaseException) -> None:
    """A graph database file cut short (Ladybug: its metadata points past the file's end)
    is damage, not a checkpoint in progress: say so in one line (FalsifyError, exit 1)."""
    text = " ".join(str(error).split())
    if "outside the database file" in text or "Cannot read checkpoint" in text:
        from memory_core.core.errors import FalsifyError

        raise FalsifyError(
            "the graph database file of this root is damaged (shorter than its own metadata says: "
            f"{text.split('. The database may be checkpointing')[0][:200]}); no FALSIFY process is checkpointing "
            "it (this one holds the root's lock). Restore the root from a backup, or rebuild it: move the root "
            "aside and load the investigation again"
        ) from None


def _ends_of(ids: set[str], edges: list[tuple]) -> set[str]:
    """``ids`` and both ends of every edge."""
    ids = set(ids)
    for src, dst, _, _ in edges:
        ids.update((src, dst))
    return ids


def _dead_ring(ids: set[str], nodes: dict[str, dict]) -> list[str]:
    """The ids among ``ids`` of stored nodes that are not alive, sorted."""
    return sorted(i for i in ids if i in nodes and state_of(nodes[i]) != ALIVE)


def ids_in(view: BeliefView) -> dict[str, str]:
    """Node id -> key of every node of ``view`` (a uuid5 each: ~20 us)."""
    return {node_id(n.kind, k): k for k, n in view.nodes.items()}


async def view_ids(view: BeliefView) -> dict[str, str]:
    """:func:`ids_in`, in a worker thread for a large view (a revision's view on a 9,000-node root
    holds 6,000 nodes: 0.1-0.2 s of the event loop each time)."""
    return await off_loop.run(ids_in, view, size=len(view.nodes))


def _with_ids(nodes: list[tuple[str, dict]], edges: list) -> tuple[list[dict], list]:
    return [dict(props, id=i) for i, props in nodes], edges


def _completed(view: BeliefView, known: dict[str, str], edges: list, found: dict[str, dict]) -> set[str]:
    """:meth:`BeliefStore.complete`'s part on the rows read: the nodes ``found`` (id -> stored
    properties) and the ``edges`` among the view's nodes (``known``: id -> key) added to ``view``.
    Returns the keys of the nodes added."""
    added: set[str] = set()
    for i, props in found.items():
        node = to_node(props)
        if node is not None and node.key not in view.nodes:
            view.add_node(node)
            known[i] = node.key
            added.add(node.key)
    have = {(e.kind, e.src, e.dst) for e in view.edges}
    for src, dst, rel, props in edges:
        if src in known and dst in known and (rel, known[src], known[dst]) not in have:
            view.add_edge(to_edge(rel, known[src], known[dst], props or {}))
            have.add((rel, known[src], known[dst]))
    return added


class BeliefStore:
    def __init__(self, graph, vector, backend: Backend):
        self.graph = graph
        self.vector = vector
        # the database's raw queries, journal, lock and housekeeping (memory_core.store.backends),
        # chosen from the settings once, by whoever opened the stores
        self.backend = backend
        self.backend.use_engines(graph, vector)
        self.repaired: Optional[str] = None

    @property
    def settings(self) -> config.Settings:
        """The settings this store and everything working on it go by (read once: store/settings.py)."""
        return self.backend.settings

    @classmethod
    async def open(
        cls,
        repair_torn_checkpoint: bool = False,
        home: Optional[Path] = None,
        *,
        backend: Backend,
        warm: bool = True,
    ) -> "BeliefStore":
        """``backend``: the one the caller chose from its settings (``backends.choose``).
        ``repair_torn_checkpoint``: only under the root's writer lock (see
        :meth:`Backend.repair_at_open`). What was repaired is in ``.repaired``.
        ``home``: Ladybug creates ``$HOME/.lbdb/extension`` when its database opens;
        HOME points there for that moment only, then is restored. The engines are built in
        a worker thread (:func:`memory_core.store.engines.start`): opening never blocks the
        caller's event loop. ``warm=False``: the vector store, the embedding model and the
        modules a write imports are left to their first use (:func:`memory_core.store.engines.start`)."""
        import asyncio

        from cognee.infrastructure.databases.graph import get_graph_engine
        from cognee.infrastructure.databases.vector import get_vector_engine_async

        from memory_core.store import engines

        repaired = backend.repair_at_open(repair_torn_checkpoint)
        # cognee logs the refusal as an error before raising it; when FALSIFY repairs what was refused,
        # the repair's notice replaces that line, else it is printed as it came
        with holding_cognee_records() as refusal:
            try:  # the graph database opened, the vector store connected, the model loaded: off the event loop
                await asyncio.to_thread(engines.start, home, warm)
                error = None
            except RuntimeError as refused:
                error = refused
                again = backend.repair_refused_open(error, repair_torn_checkpoint)
                if again is None:
                    refusal.release()
                    damaged(error)
                    raise
                refusal.records.clear()
        if error is not None:
            repaired = "; ".join(filter(None, [repaired, again]))
            try:  # once more, after the repair
                await asyncio.to_thread(engines.start, home, warm)
            except RuntimeError as error_again:
                damaged(error_again)
                raise
        with ladybug_home(home):
            try:
                graph = await get_graph_engine()
            except RuntimeError as error:
                damaged(error)
                raise
        backend.home = home  # for reopening the graph database (store/backends/housekeeping.py)
        store = cls(graph, await get_vector_engine_async(), backend)
        await backend.bind_to_running_loop()
        store.repaired = repaired
        return store

    # ---- reading -------------------------------------------------------
    async def raw_nodes(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = [i for i in dict.fromkeys(ids) if i]
        if not ids:
            return {}
        return await self.backend.raw_nodes(ids)

    async def find_keys(self, keys: Iterable[str]) -> dict[str, dict]:
        """Existing nodes for these keys (any kind): ``{key: props}``."""
        keys = list(keys)
        # a node id per key and kind (uuid5): a batch's thousands of keys in a worker thread
        wanted = await off_loop.run(_ids_of_keys, keys, size=len(keys))
        found = await self.raw_nodes(wanted)
        return {wanted[i]: props for i, props in found.items()}

    async def declared_predicates(self, props: Iterable[dict]) -> dict[str, dict[str, str]]:
        """Question key -> its predicate cardinality declarations, for the questions these
        nodes' props belong to (questions that declare nothing are left out)."""
        wanted = sorted({p.get("question_key") for p in props if p and p.get("question_key")})
        if not wanted:
            return {}
        found = await self.raw_nodes(node_id("question", q) for q in wanted)
        result = {}
        for q_props in found.values():
            declared = stored_predicates(q_props.get("predicates"))
            if declared and q_props.get("key"):
                result[q_props["key"]] = declared
        return result

    async def nodes_by_sp(self, sp: str) -> list[dict]:
        return await self.backend.nodes_by_type_name("Evidence", sp)

    async def nodes_by_sps(self, sps: Iterable[str]) -> list[dict]:
        """Evidence stored under any of these subject|predicate keys (one query where the
        backend has one, else one per key)."""
        sps = sorted(set(sps))
        if not sps:
            return []
        return await self.backend.nodes_by_type_names("Evidence", sps)

    async def nodes_by_subjects(self, subjects: Iterable[str]) -> list[dict]:
        """Evidence stored under any of these subjects, whatever its predicate (its ``name`` is
        the normalised ``subject|predicate``)."""
        prefixes = sorted({normalise_term(s) + "|" for s in subjects if s and normalise_term(s)})
        if not prefixes:
            return []
        return await self.backend.nodes_by_type_name_prefixes("Evidence", prefixes)

    async def all_vectors(self, name: str):
        """(ids, vectors) of a whole vector collection, or None where the backend cannot
        give them (then gate 1 searches fact by fact)."""
        return await self.backend.all_vectors(name)

    async def text_vectors(self, name: str):
        """(texts, float32 matrix) of a whole vector collection (each row's text and the vector
        computed from it), or None where the backend cannot give them (:meth:`Backend.text_vectors`)."""
        return await self.backend.text_vectors(name)

    async def investigation(self, question_key: str) -> tuple[list[dict], list[tuple[str, str, str, dict]]]:
        """One investigation's whole subgraph (every node has a ``part_of`` edge to its
        question): cognee's ``get_neighborhood`` of the question, read by the backend so that
        a large one is decoded off the event loop (:meth:`Backend.neighborhood`)."""
        qid = node_id("question", question_key)
        nodes, edges = await self.backend.neighborhood([qid])
        return await off_loop.run(_with_ids, nodes, edges, size=len(nodes))

    async def question_keys(self) -> list[str]:
        found = await self.raw_nodes(await self.ids_of_kind("question"))
        return sorted(p["key"] for p in found.values() if "key" in p)

    async def ids_of_kind(self, kind: str) -> list[str]:
        """Every stored node id of one kind (``question``, ``hypothesis``, ...)."""
        return await self.backend.ids_of_type(TYPE_BY_KIND[kind])

    async def truth_states(self, ids: Iterable[str]) -> dict[str, dict]:
        """``{id: {"truth_alignment": [...], "truth_epoch": n}}`` as cognee's Ladybug
        ``get_node_truth_state`` returns it, on every backend (cognee's postgres adapter
        has no truth-state API; the values live in the same property blob)."""
        return {
            i: {"truth_alignment": p.get("truth_alignment"), "truth_epoch": p.get("truth_epoch")}
            for i, p in (await self.raw_nodes(ids)).items()
        }

    async def view_of_investigation(self, question_key: str) -> BeliefView:
        nodes, edges = await self.investigation(question_key)
        return await self.view_of(nodes, edges)

    async def view_of(self, nodes: list[dict], edges) -> BeliefView:
        """:meth:`_view`, in a worker thread when the rows are many (:mod:`memory_core.store.off_loop`)."""
        edges = edges if isinstance(edges, list) else list(edges)
        return await off_loop.run(self._view, nodes, edges, size=len(nodes) + len(edges))

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
        """Every belief edge into or out of ``ids`` (one query: an index seek each way)."""
        if not ids:
            return []
        return await self.backend.edges_touching(list(ids), types)

    async def affected_view(self, seed_ids: list[str], hypotheses: Iterable[str] = ()) -> BeliefView:
        """The part of the graph a revision of ``seed_ids`` can touch: the seeds'
        transitive dependents (through depends_on), the hypotheses they support,
        those hypotheses' rivals, and every node one edge away from any of them
        (antecedents, consumers, superseders), and every edge of the dead ones among
        those (their forget status is decided with all their consumers and
        superseders in view). Cost follows the affected region, not the graph: one
        edge query (out and in) per dependency level, plus one for that ring. ``hypotheses``:
        more hypothesis ids to read as the seeds' supported ones are (with their rivals)."""
        region: set[str] = set()
        frontier = list(dict.fromkeys(seed_ids))
        edges: dict[tuple, tuple] = {}
        hypotheses: set[str] = set(hypotheses)
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
                extra.update(await self.backend.members_of([node_id("question", q)], "Hypothesis"))
        fresh = sorted(extra - region)
        for e in await self._edges_touching(fresh):
            edges[e[:3]] = e
        ids = await off_loop.run(_ends_of, region | extra, list(edges.values()), size=len(edges))
        nodes = await self.raw_nodes(ids)
        # the forget rule decides the dead nodes of this ring (antecedents, superseded and
        # supporting evidence one edge away): each must be seen with ALL its consumers and
        # superseders, or a consumer/superseder outside the view goes unseen (a
        # refuted node whose superseder was not read was forgotten). One more edge query.
        ring = await off_loop.run(_dead_ring, ids - region - extra, nodes, size=len(ids))
        if ring:
            more = [e for e in await self._edges_touching(ring) if e[:3] not in edges]
            for e in more:
                edges[e[:3]] = e
            beyond = {i for e in more for i in e[:2]} - set(nodes)
            if beyond:
                nodes.update(await self.raw_nodes(beyond))
        return await self.view_of(list(nodes.values()), list(edges.values()))

    async def complete(self, view: BeliefView, keys: Iterable[str]) -> set[str]:
        """Give the view's ``keys`` every belief edge they have, with the nodes at the other
        ends (a node read alone, e.g. as an antecedent, lacks its own justifications; one
        relabelled must have them all). Returns the keys of the nodes this added."""
        known = await view_ids(view)
        wanted = set(keys)
        ids = [i for i, k in known.items() if k in wanted]
        if not ids:
            return set()
        edges = await self._edges_touching(ids)
        missing = {i for e in edges for i in e[:2]} - set(known)
        found = await self.raw_nodes(sorted(missing)) if missing else {}
        # node by node: in a worker thread when they are many (a hypothesis with a hundred supporters)
        return await off_loop.run(_completed, view, known, edges, found, size=len(found) + len(edges))

    # ---- writing -------------------------------------------------------
    async def add_points(self, points: list) -> None:
        """Write new DataPoints to graph + vector (never call on existing ids)."""
        if points:
            from cognee.tasks.storage import add_data_points

            # one call per node type: cognee indexes the types of one call concurrently under
            # LanceDB's VECTOR_DB_LOCK, an asyncio.Lock bound to the event loop that first waited
            # on it, so a process running several loops (tests/support/cli_batch.py) fails on the second
            # loop that adds two types at once (found by a reinstatement adding Conclusion + Evidence)
            by_type: dict[type, list] = {}
            for point in points:
                by_type.setdefault(type(point), []).append(point)
            reusable = self.__dict__.pop("_reusable_vectors", None) or {}
            with reuse_vectors(self.vector, reusable):
                for group in by_type.values():
                    # cognee deep-copies each point and builds its graph on the loop: a few
                    # hundred a call, the loop running between the calls
                    for start in range(0, len(group), POINTS_A_CALL):
                        await add_data_points(group[start : start + POINTS_A_CALL])

    async def add_edges(self, edges: list[Edge], kinds: dict[str, str]) -> None:
        """Write belief edges; ``kinds`` maps every endpoint key to its node kind."""
        await self.add_raw_edges([edge_row(e, kinds) for e in edges])

    async def add_raw_edges(self, rows: list[tuple[str, str, str, dict]]) -> None:
        """Edges by node id, no checkpoint: the caller ends its write with :meth:`checkpoint`."""
        if rows:
            await self.backend.add_edges(rows)

    async def delete_edges(self, rows: list[tuple[str, str, str]]) -> None:
        """Raw deletes, no checkpoint: the caller ends its write with :meth:`checkpoint`."""
        if rows:
            await self.backend.delete_edges(list(rows))

    async def update_nodes(self, patches: dict[str, dict]) -> None:
        """Merge ``{node_id: {property: value}}`` into stored nodes in ONE query, no checkpoint.

        cognee's adapter has one call per property kind (``set_node_truth_state``,
        ``set_node_feedback_weights``, ``update_node`` per node), each a read, a write
        and a CHECKPOINT (~15 ms each). A revision changes state, epoch, weight and
        sometimes confidence of the same nodes, so this writes them together into
        the node's JSON property blob, where those calls keep them; the layout is
        guarded by tests/integration/test_cognee_contract.py (cognee's own readers see it).
        Missing ids are skipped. The caller ends its write with :meth:`checkpoint`."""
        patches = {i: p for i, p in patches.items() if p}
        if patches:
            await self.backend.update_nodes(patches)

    async def checkpoint(self) -> None:
        """Flush Ladybug's WAL: every write of ours ends with one, before its journal
        commits (see :func:`memory_core.store.backends.embedded.discard_torn_graph_checkpoint`).
        A no-op on PostgreSQL."""
        await self.backend.checkpoint()

    async def set_states(self, states: dict[str, tuple[str, int]]) -> None:
        """``{node_id: (state, epoch)}``, durable on return."""
        await self.update_nodes(
            {i: {"truth_alignment": [s], "truth_epoch": int(e)} for i, (s, e) in states.items()}
        )
        await self.checkpoint()

    async def set_weights(self, weights: dict[str, float]) -> None:
        """``{node_id: weight}``, durable on return."""
        await self.update_nodes({i: {"feedback_weight": float(w)} for i, w in weights.items()})
        await self.checkpoint()

    async def delete(self, nodes: dict[str, str], checkpoint: bool = True) -> None:
        """Hard-delete ``{node_id: kind}`` from the graph AND the vector store."""
        if not nodes:
            return
        await self.backend.delete_nodes(list(nodes))
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
        versions older than its default 7 days are pruned). Returns the tables compacted.

        On PostgreSQL the housekeeping is an HNSW index per FALSIFY collection (created
        once; cognee creates none): returns the collections indexed by this call."""
        return await self.backend.vector_housekeeping([collection(kind) for kind in KINDS], fragments)

    async def after_commit(self) -> list[str]:
        """Housekeeping after each committed change (:func:`memory_core.store.writer.housekeeping`):
        the vector tables compacted (:meth:`compact_vectors`), then the backend's own
        (:meth:`Backend.after_commit`: cognee's run history pruned; on the embedded backend the
        graph database reopened or its file compacted, old LanceDB versions pruned) for flat
        memory and bounded disk. Returns what :meth:`compact_vectors` worked on."""
        done = await self.compact_vectors()
        await self.backend.after_commit()
        return done

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts`` from cognee's embedding engine (the model the stores use),
        each distinct text embedded once. They are kept until the next write, which
        reuses them for the nodes it adds with the same text instead of embedding
        them again (a batch's facts are embedded for detection, then written)."""
        from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

        from memory_core.store.embedder import embed_text

        distinct = list(dict.fromkeys(texts))
        got = await embed_text(get_embedding_engine(), distinct) if distinct else []
        vectors = {t: list(v) for t, v in zip(distinct, got)}
        reusable = self.__dict__.setdefault("_reusable_vectors", {})
        if len(reusable) > REUSABLE_VECTORS_MAX:
            reusable.clear()
        reusable.update(vectors)
        return [vectors[t] for t in texts]

    async def search(self, name: str, text: str, limit: int) -> list:
        if not await self.vector.has_collection(name):
            return []
        [vector] = await self.embed([text])  # the model off the event loop (embed)
        return await self.vector.search(name, query_vector=vector, limit=limit, include_payload=True)

    async def vector_ids(self, name: str) -> set[str]:
        return await self.backend.vector_ids(name)

    async def lexical(self, name: str, texts: list[str], limit: int) -> list[list[tuple]]:
        """Full-text ranking of a collection's rows for each text: ``[(id, score, vector), ...]``
        best first (:mod:`memory_core.store.lexical`)."""
        return await self.backend.lexical(name, texts, limit)

    async def search_vector(self, name: str, vector: list[float], limit: int) -> list:
        """Nearest rows to an already computed vector (cosine distance in ``score``)."""
        if not await self.vector.has_collection(name):
            return []
        return await self.vector.search(name, query_vector=vector, limit=limit, include_payload=True)


async def warm_up(store: "BeliefStore") -> float:
    """Load the embedding model, create cognee's relational tables and start its pipeline
    runner once (the first pipeline run of a process costs ~1 s). Returns milliseconds."""
    import time

    from cognee.tasks.storage import add_data_points  # noqa: F401  (cognee imports the write path lazily)

    from memory_core.store.pipeline import set_up

    start = time.perf_counter()
    await set_up()
    await embedder.embedding_engine().embed_text(["warm up"])  # loads the embedding model
    await store.search(collection("evidence"), "warm up", 1)  # opens the vector table
    # what the imports, the model's load and the opening freed goes back to the OS (a process that
    # warms up lives long: on the 1,389-node MQuAKE root, about 60 MB freed but held)
    trim_native_heap()
    return (time.perf_counter() - start) * 1000
