"""Gate 1: which stored evidence a new fact may refute (the candidates the judges see).

Retrievers rank the evidence for many facts at once (one call path for a single
revision and a batch); each implements :class:`Retriever`:

* :class:`VectorRetriever`: cosine distance to the claim's embedding. For fewer than
  :data:`BATCH_GATE1_MIN` facts, one nearest-neighbour search per fact; from that many
  on, the evidence collection's vectors are read once and every fact's distances are
  computed in memory (what LanceDB's unindexed search computes).
* :class:`LexicalRetriever`: full-text (BM25-style) score of the claim's words
  (``store.lexical``: LanceDB's own full-text index, PostgreSQL's full-text search).
* :class:`SubjectPredicateLookup` (unranked): evidence stored under the fact's
  normalised subject+predicate, for a fact given as a triple, however far it is.

Fusion rule (reciprocal rank fusion, Cormack, Clarke & Büttcher 2009): each live
piece of evidence scores ``sum over ranked retrievers of 1 / (RRF_K + rank)`` (rank
from 1 among that retriever's live hits); the fused ranking is by that score, ties
by cosine distance. Gate 1 keeps the top :data:`GATE1_K` of it (a bound on what the
judges are asked: each candidate costs judge work), optionally only those within a
distance floor, then adds the subject+predicate lookup's evidence. A fact scoped to one
question (``Query.question``, ``--inquiry``) sees only that question's evidence (but a timed
fact's subject+predicate lookup, which reads its slot's whole timeline), and its
retrievers' pools widen until they hold its top k (:func:`_widen_for_questions`). Every candidate
carries its cosine distance (lexical hits bring their row's vector), its lexical
score (None: not a lexical hit) and its fused rank (None: lookup only).

A new retriever is one more class with ``name``, ``ranked`` and ``retrieve``, listed
in :data:`RETRIEVERS`; nothing else changes.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Protocol, Sequence

import numpy as np

from memory_core.core.identity import KIND_BY_TYPE, collection
from memory_core.core.keys import sp_key
from memory_core.core.vocabulary import TEXT_FIELD
from memory_core.store import off_loop
from memory_core.store.belief_store import state_of

RRF_K = 60  # the constant of reciprocal rank fusion (the usual value; rank 1 scores 1/61)
GATE1_K = 8  # candidates kept from the fused ranking (see docs/judging.md, "Gate 1")
POOL_MIN = 32  # each ranked retriever returns at least this many rows before dead evidence is dropped
BATCH_GATE1_MIN = 8  # from this many facts, the vector retriever reads the evidence vectors once
BATCH_GATE1_MAX_ROWS = 200_000  # above this, per-fact searches are cheaper than holding the matrix

# evidence a new fact can contradict: alive, or disputed (a policy that picks a winner settles the dispute)
LIVE = ("alive", "disputed")


@dataclass
class Query:
    """One fact to find candidates for. ``vector``: its embedding, when already computed."""

    fact: str
    triple: Optional[tuple[str, str, str]] = None
    vector: Optional[list[float]] = None
    exclude: frozenset = frozenset()  # keys never to return (e.g. the batch's own new facts)
    # a timed fact: the subject+predicate lookup also returns the values already superseded in
    # time (with a valid_from): the fact takes its place in that whole timeline (core.validity)
    timeline: bool = False
    # the stored question the fact belongs to (``--inquiry``): only its evidence is a candidate,
    # ranked among itself, however much of the root's other evidence lies nearer
    question: Optional[str] = None


@dataclass
class Hit:
    node_id: str
    score: (
        float  # the retriever's own score: a distance (vector: lower is nearer) or a lexical score (higher)
    )
    vector: Optional[Sequence[float]] = None  # the row's vector, when the retriever read it
    props: Optional[dict] = None  # the node's properties, when the retriever read them


class Retriever(Protocol):
    """Ranks stored evidence for many facts: ``retrieve`` returns one list of hits per
    query, best first with equal scores in node-id order (``ranked``), or unordered extra
    evidence (not ``ranked``: joined to the candidates whatever the fused ranking says)."""

    name: str
    ranked: bool

    async def retrieve(self, store, queries: Sequence[Query], n: int) -> list[list[Hit]]: ...


def nearest_first(hits: list[Hit]) -> list[Hit]:
    """Hits by distance, equal distances in node-id order. An engine returns equal scores
    in any order (LanceDB's scan of several fragments does), and the fused ranking reads
    positions: the same fact asked twice must get the same candidates in the same order."""
    return sorted(hits, key=lambda h: (h.score, h.node_id))


def cosine_distance(a, b) -> float:
    """1 - cosine similarity of two vectors (1.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 1.0 - dot / (na * nb) if na and nb else 1.0


def _unit(rows) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float64)
    if m.ndim == 1:
        m = m[None, :]
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def _nearest_rows(vectors: list, ids: list[str], rows: list, n: int) -> list[list[Hit]]:
    """Each query vector's ``n`` nearest stored rows (cosine distance), nearest first."""
    distances = 1.0 - _unit(vectors) @ _unit(rows).T
    take = min(n, len(ids))
    # equal distances at the cut: the lower row first, every run
    return [nearest_first([Hit(ids[i], float(row[i])) for i in _k_smallest(row, take)]) for row in distances]


class VectorRetriever:
    name = "vector"
    ranked = True

    async def retrieve(self, store, queries: Sequence[Query], n: int) -> list[list[Hit]]:
        name = collection("evidence")
        if len(queries) >= BATCH_GATE1_MIN and all(q.vector is not None for q in queries):
            got = await store.all_vectors(name)
            if got is not None and len(got[0]) <= BATCH_GATE1_MAX_ROWS:
                ids, rows = got
                if not ids:
                    return [[] for _ in queries]
                # a matrix of queries x stored rows: in a worker thread (pure over its inputs)
                return await off_loop.run(
                    _nearest_rows, [q.vector for q in queries], ids, rows, n, size=len(queries) * len(ids)
                )
        out = []
        for q in queries:
            # twice the rows asked, cut in node-id order: an engine's own cut among equal
            # distances (which of them its limit keeps) differs from one search to the next
            hits = (
                await store.search_vector(name, q.vector, 2 * n)
                if q.vector is not None
                else await store.search(name, q.fact, 2 * n)
            )
            out.append(nearest_first([Hit(str(h.id), float(h.score)) for h in hits])[:n])
        return out


class LexicalRetriever:
    name = "lexical"
    ranked = True

    async def retrieve(self, store, queries: Sequence[Query], n: int) -> list[list[Hit]]:
        # twice the rows asked, cut in node-id order among equal scores (as the vector search)
        found = await store.lexical(collection("evidence"), [q.fact for q in queries], 2 * n)
        return [
            sorted((Hit(i, score, vector) for i, score, vector in rows), key=lambda h: (-h.score, h.node_id))[
                :n
            ]
            for rows in found
        ]


class SubjectPredicateLookup:
    name = "subject+predicate"
    ranked = False

    async def retrieve(self, store, queries: Sequence[Query], n: int) -> list[list[Hit]]:
        sps = {i: sp for i, q in enumerate(queries) if q.triple and (sp := sp_key(*q.triple[:2])) is not None}
        by_sp: dict[str, list[dict]] = {}
        for props in await store.nodes_by_sps(sps.values()):
            if (name := props.get("name")) is not None:
                by_sp.setdefault(name, []).append(props)
        return [
            [
                Hit(p["id"], 0.0, None, p)
                for p in sorted(by_sp.get(sps[i], []) if i in sps else [], key=lambda p: p["id"])
            ]
            for i in range(len(queries))
        ]


RETRIEVERS: tuple = (VectorRetriever(), LexicalRetriever(), SubjectPredicateLookup())


POOL_MAX = 1 << 16  # the widest pool a question-scoped query asks a retriever for


def wider(pool: int) -> Iterator[int]:
    """The pools a search that keeps only some rows asks for after ``pool`` (gate 1 scoped to a
    question, recall pinned to an inquiry or a date): x4 each time, up to :data:`POOL_MAX`."""
    while pool < POOL_MAX:
        pool = min(POOL_MAX, pool * 4)
        yield pool


async def _widen_for_questions(
    store,
    queries: Sequence[Query],
    k: int,
    pool: int,
    retrievers: Sequence[Retriever],
    results: list,
    read: dict,
) -> None:
    """A query scoped to one question (``Query.question``) sees only that question's evidence,
    which the root's other questions can push out of a ranked retriever's pool: its pool is
    widened (x4 each time, up to :data:`POOL_MAX`) until it holds ``k`` live pieces of the
    question's evidence or every ranked retriever returned fewer rows than asked (none left).
    ``results`` and ``read`` (node id -> properties) are updated in place."""

    def short(i: int, n: int) -> bool:
        question = queries[i].question
        own = {
            h.node_id
            for r, per in results
            if r.ranked
            for h in per[i]
            if (props := h.props if h.props is not None else read.get(h.node_id)) is not None
            and props.get("question_key") == question
            and state_of(props) in LIVE
        }
        full = any(r.ranked and len(per[i]) >= n for r, per in results)
        return len(own) < k and full

    todo = [i for i, q in enumerate(queries) if q.question is not None]
    for wide in wider(pool):
        todo = [i for i in todo if short(i, pool)]
        if not todo:
            return
        pool = wide
        more_rows = [await r.retrieve(store, [queries[i] for i in todo], pool) for r, _ in results]
        for (_, per), more in zip(results, more_rows):
            for i, hits in zip(todo, more):
                per[i] = hits
        want = {h.node_id for i in todo for _, per in results for h in per[i] if h.props is None}
        read.update(await store.raw_nodes(want - set(read)))


def _distances(qvec, hits: Sequence[Hit]) -> dict[str, float]:
    """Cosine distance from ``qvec`` of each hit that brought its row's vector, as one matrix."""
    with_vector = {h.node_id: h.vector for h in hits if h.vector is not None}
    if qvec is None or not with_vector:
        return {}
    return dict(zip(with_vector, (1.0 - _unit(list(with_vector.values())) @ qvec).tolist()))


def past(props: dict) -> bool:
    """Stored evidence superseded in time with a known start (a past value of a timeline)."""
    return state_of(props) == "superseded" and bool(props.get("valid_to")) and bool(props.get("valid_from"))


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion of ranked id lists: ``{id: sum 1/(k + rank)}`` (rank from 1)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking, 1):
            scores[i] = scores.get(i, 0.0) + 1.0 / (k + rank)
    return scores


@dataclass
class Found:
    """One fact's gate-1 result: candidate node ids in fused order with what ranked them."""

    ids: list[str] = field(default_factory=list)
    distance: dict[str, Optional[float]] = field(default_factory=dict)
    lexical: dict[str, float] = field(default_factory=dict)
    rank: dict[str, int] = field(default_factory=dict)  # fused rank, from 1 (absent: lookup only)
    props: dict[str, dict] = field(default_factory=dict)  # node id -> stored properties


async def gate1_many(
    store,
    queries: Sequence[Query],
    k: Optional[int] = None,
    floor: Optional[float] = None,
    retrievers: Sequence[Retriever] = RETRIEVERS,
) -> list[Found]:
    """Every query's candidates: the top ``k`` of the fused ranking of live evidence (within
    cosine distance ``floor`` when given), then the unranked retrievers' live evidence.
    ``k`` defaults to the store's ``FALSIFY_GATE1_K`` (8 unless set)."""
    k = store.settings.gate1_k if k is None else k
    pool = max(POOL_MIN, 4 * k)
    results = [(r, await r.retrieve(store, queries, pool)) for r in retrievers]
    want = {h.node_id for _, per in results for hits in per for h in hits if h.props is None}
    read = await store.raw_nodes(want)
    await _widen_for_questions(store, queries, k, pool, retrievers, results, read)
    # the fusion is pure over what was read: in a worker thread for a batch's many queries
    return await off_loop.run(_fused, queries, results, read, k, floor, size=len(queries))


def _fused(
    queries: Sequence[Query], results: list, read: dict, k: int, floor: Optional[float]
) -> list[Found]:
    """Each query's :class:`Found`: its retrievers' live hits fused (see :func:`gate1_many`)."""
    found = []
    for qi, query in enumerate(queries):
        qvec = _unit(query.vector)[0] if query.vector is not None else None
        near = _distances(qvec, [h for r, per in results if r.name != "vector" for h in per[qi]])
        live: dict[str, dict] = {}
        distance: dict[str, float] = {}
        lexical: dict[str, float] = {}
        rankings, extra = [], []
        for retriever, per in results:
            ranking = []
            for hit in per[qi]:
                props = hit.props if hit.props is not None else read.get(hit.node_id)
                if props is None or props.get("key") in query.exclude:
                    continue
                # a timed fact's subject+predicate lookup reads its slot's whole timeline, every
                # question's values: valid time orders them with the fact whatever the inquiry
                # (the revision keeps from another question only what time orders with it)
                if (
                    query.question is not None
                    and props.get("question_key") != query.question
                    and not (query.timeline and not retriever.ranked)
                ):
                    continue
                if state_of(props) not in LIVE and not (
                    query.timeline and not retriever.ranked and past(props)
                ):
                    continue
                live[hit.node_id] = props
                if not retriever.ranked:
                    extra.append(hit.node_id)
                    continue
                ranking.append(hit.node_id)
                if retriever.name == "vector":
                    distance[hit.node_id] = hit.score
                else:
                    lexical.setdefault(hit.node_id, hit.score)
                    if hit.node_id not in distance and hit.node_id in near:
                        distance[hit.node_id] = near[hit.node_id]
            rankings.append(ranking)
        scores = rrf(rankings)
        ordered = sorted(scores, key=lambda i: (-scores[i], distance.get(i, 2.0), i))
        if floor is not None:
            ordered = [i for i in ordered if i in distance and distance[i] < floor]
        out = Found()
        for rank, i in enumerate(ordered[:k], 1):
            out.ids.append(i)
            out.rank[i] = rank
        for i in dict.fromkeys(extra):
            if i not in out.rank:
                out.ids.append(i)
        # the lookup's evidence has no gate-1 distance (it was not chosen for being near)
        out.distance = {i: distance.get(i) if i in out.rank else None for i in out.ids}
        out.lexical = {i: lexical[i] for i in out.ids if i in lexical}
        out.props = {i: live[i] for i in out.ids}
        found.append(out)
    return found


# ---- recall: the same hybrid ranking over alive beliefs of every kind -------------------

BELIEF_KINDS = ("question", "hypothesis", "evidence", "conclusion")  # what recall searches


@dataclass
class BeliefHit:
    """One stored belief near a question: its cosine distance (every hit has one: lexical
    hits bring their row's vector), its lexical score (None: not a lexical hit), and once
    fused, its reciprocal-rank-fusion score and place (from 1)."""

    node_id: str
    kind: str  # question | hypothesis | evidence | conclusion
    props: dict
    distance: Optional[float] = None
    lexical: Optional[float] = None
    score: float = 0.0
    rank: int = 0


@dataclass
class BeliefSearch:
    """The two rankings of one question over several collections (node ids, best first,
    every kind merged: vector by cosine distance, lexical by score) and each hit."""

    vector: list[str] = field(default_factory=list)
    lexical: list[str] = field(default_factory=list)
    hits: dict[str, BeliefHit] = field(default_factory=dict)
    # every vector row as the vector store returned it: (distance, row id, kind, its text), nearest
    # first, rows whose node is gone included (what a search without truth state sees)
    rows: list[tuple[float, str, str, str]] = field(default_factory=list)
    # every collection's searches returned fewer rows than asked: a wider search finds no more
    exhausted: bool = True


async def search_beliefs_within(
    store, text: str, keep: Callable[[dict], bool], want: int, kinds: Sequence[str] = BELIEF_KINDS
) -> BeliefSearch:
    """:func:`search_beliefs` for a caller that keeps only some beliefs (one inquiry's): the
    root's other beliefs can fill the searches' rows, so the search is widened (x4 each time,
    up to :data:`POOL_MAX` rows) until ``want`` of the hits pass ``keep`` (their properties)
    or no collection has more rows."""
    found = await search_beliefs(store, text, kinds, want)
    for n in wider(want):
        if found.exhausted or sum(1 for h in found.hits.values() if keep(h.props)) >= want:
            break
        found = await search_beliefs(store, text, kinds, n)
    return found


async def search_beliefs(
    store, text: str, kinds: Sequence[str] = BELIEF_KINDS, n: int = POOL_MIN
) -> BeliefSearch:
    """Gate 1's two ranked retrievers run for a question over the collections of ``kinds``:
    up to ``n`` rows of each by cosine distance and up to ``n`` by lexical score, every row
    read with its node's stored properties (rows whose node is gone are dropped). Nothing is
    filtered by truth state here: :func:`fuse_beliefs` keeps what the caller counts as alive."""
    out = BeliefSearch()
    if not text or not text.strip():
        return out
    (qvec,) = await store.embed([text])
    # the collections' searches at once (each engine call waits on the database's own threads)
    found_vector = await asyncio.gather(*(store.search_vector(collection(kind), qvec, n) for kind in kinds))
    found_lexical = await asyncio.gather(*(store.lexical(collection(kind), [text], n) for kind in kinds))
    out.exhausted = all(len(hits) < n for hits in found_vector) and all(
        len(found) < n for (found,) in found_lexical
    )
    rows: list[tuple[float, str]] = []
    for kind, hits in zip(kinds, found_vector):
        rows += [(float(h.score), str(h.id)) for h in hits]
        out.rows += [(float(h.score), str(h.id), kind, (h.payload or {}).get("text", "")) for h in hits]
    out.rows.sort(key=lambda r: (r[0], r[1]))
    lexical_rows: list[tuple[float, str, Optional[list]]] = []
    for (found,) in found_lexical:
        lexical_rows += [(float(score), str(i), vector) for i, score, vector in found]
    props = await store.raw_nodes([i for _, i in rows] + [i for _, i, _ in lexical_rows])
    distance: dict[str, float] = {}
    for d, i in rows:
        distance[i] = min(d, distance.get(i, d))
    unit_q = _unit(qvec)[0]
    missing = []
    for _, i, vector in lexical_rows:
        if i not in distance:
            if vector is not None:
                distance[i] = float(1.0 - _unit(vector)[0] @ unit_q)
            else:
                missing.append(i)
    texts = {i: props[i].get(_text_field(props[i])) or "" for i in missing if i in props}
    if texts:  # a lexical hit without its vector: embed its text (the same model)
        for i, vector in zip(texts, await store.embed(list(texts.values()))):
            distance[i] = float(1.0 - _unit(vector)[0] @ unit_q)

    def hit(i: str) -> Optional[BeliefHit]:
        if i not in props:
            return None  # a vector row without its node (check reports it)
        if i not in out.hits:
            kind = KIND_BY_TYPE.get(props[i].get("type", ""))
            if kind is None:
                return None
            out.hits[i] = BeliefHit(i, str(kind.value), props[i], distance.get(i))
        return out.hits[i]

    for d, i in sorted(rows):
        if hit(i) is not None and i not in out.vector:
            out.vector.append(i)
    for score, i, _ in sorted(lexical_rows, key=lambda r: (-r[0], r[1])):
        found_hit = hit(i)
        if found_hit is not None and i not in out.lexical:
            found_hit.lexical = score
            out.lexical.append(i)
    return out


def _text_field(props: dict) -> str:
    kind = KIND_BY_TYPE.get(props.get("type", ""))
    return TEXT_FIELD[kind] if kind is not None else "text"


def fuse_beliefs(search: BeliefSearch, keep=lambda hit: True) -> list[BeliefHit]:
    """The hits ``keep`` accepts, ranked by reciprocal rank fusion of the two rankings (each
    ranked among the kept hits only, as gate 1 ranks live evidence), ties by cosine distance."""
    kept = {i for i, h in search.hits.items() if keep(h)}
    scores = rrf([[i for i in search.vector if i in kept], [i for i in search.lexical if i in kept]])
    ordered = sorted(
        scores,
        key=lambda i: (
            -scores[i],
            search.hits[i].distance if search.hits[i].distance is not None else 2.0,
            i,
        ),
    )
    result = []
    for rank, i in enumerate(ordered, 1):
        found = search.hits[i]
        found.score, found.rank = scores[i], rank
        result.append(found)
    return result


# one fact of a batch for EarlierFacts: (key, fact, triple or None, already recorded)
EarlierFact = tuple[str, str, Optional[tuple[str, str, str]], bool]


def _k_smallest(row, k: int) -> list[int]:
    """The indices of the ``k`` smallest values of ``row``, smallest first, the lower index first
    among equal values (as a stable sort's first ``k``), in time linear in ``row``'s length
    (a batch asks this for each of its facts over all the earlier ones)."""
    if k <= 0:
        return []
    within = np.arange(len(row))
    if k < len(row):
        kth = np.partition(row, k - 1)[k - 1]
        if not np.isnan(kth):  # NaN sorts last: with one among the first k, sort them all
            (within,) = np.nonzero(row <= kth)  # every index the first k of a stable sort can hold
    return within[np.argsort(row[within], kind="stable")][:k].tolist()


class EarlierFacts:
    """A batch's own facts as candidates for the facts after them (as if already stored):
    for fact *i*, the ``k`` nearest of the facts before it (within the distance floor when
    one is set) and those given under the same subject+predicate. ``facts``: one
    ``(key, fact, triple or None, skip)`` per fact in order (``skip``: already recorded);
    ``vectors``: index -> embedding. Each fact's distances to the facts before it are computed
    when asked (one row at a time: a batch of tens of thousands of facts never holds an N x N
    matrix)."""

    def __init__(self, facts: Sequence[EarlierFact], vectors: dict):
        self.facts = list(facts)
        self.units: Optional[np.ndarray] = None
        if vectors and all(i in vectors for i in range(len(self.facts))):
            self.units = _unit([vectors[i] for i in range(len(self.facts))])
        self._block: Optional[tuple[int, np.ndarray]] = None  # (first index, its block's products)
        self.by_sp: dict[str, list[int]] = {}
        for i, (_, _, triple, _) in enumerate(self.facts):
            if triple and (sp := sp_key(*triple[:2])) is not None:
                self.by_sp.setdefault(sp, []).append(i)

    BLOCK = 128  # facts whose products with the facts before them are computed together

    def _products(self, index: int) -> np.ndarray:
        """Fact ``index``'s dot products with the facts before it. Computed a block of facts at
        a time, one matrix product per block (the facts are asked about in order): a product
        per fact read every earlier vector again for each one (memory-bound: 8 of a 3,000-fact
        batch's 57 s), while a block's product reads them once for ``BLOCK`` facts; a block
        holds ``BLOCK`` x N doubles, never an N x N matrix."""
        assert self.units is not None
        start = index - index % self.BLOCK
        if self._block is None or self._block[0] != start:
            end = min(start + self.BLOCK, len(self.units))
            self._block = (start, self.units[start:end] @ self.units[:end].T)
        return self._block[1][index - start, :index]

    def near(self, index: int, k: int, floor: Optional[float] = None) -> list[tuple[int, Optional[float]]]:
        """``(earlier index, distance or None)``: None when found by subject+predicate only."""
        if index == 0:
            return []
        near: dict[int, float] = {}  # the k nearest earlier facts (within the floor): their distances
        if self.units is not None:
            row = 1.0 - self._products(index)
            near = {i: float(row[i]) for i in _k_smallest(row, k) if floor is None or row[i] < floor}
        triple = self.facts[index][2]
        sp = sp_key(*triple[:2]) if triple else None
        same = {i for i in self.by_sp.get(sp, ()) if i < index} if sp is not None else set()
        return [(i, near.get(i)) for i in sorted(near.keys() | same) if not self.facts[i][3]]


__all__ = [
    "Retriever",
    "EarlierFacts",
    "BELIEF_KINDS",
    "BeliefHit",
    "BeliefSearch",
    "search_beliefs",
    "fuse_beliefs",
    "Query",
    "Hit",
    "Found",
    "VectorRetriever",
    "LexicalRetriever",
    "SubjectPredicateLookup",
    "RETRIEVERS",
    "rrf",
    "gate1_many",
    "GATE1_K",
    "RRF_K",
    "LIVE",
    "BATCH_GATE1_MIN",
]
