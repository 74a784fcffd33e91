"""Belief at an earlier epoch: the graph as it stood after epoch N, rebuilt in memory.

The revision log embeds the intent of every write (loads, revisions, resolves,
undos, repairs), and undo reverts a change by applying its intent's inverse
(:func:`memory_core.store.journal.inverse`). The same inverses, applied newest
first to an in-memory copy of the present graph, give the graph after any
earlier epoch: every log entry after N is reverted, undone entries and undo
entries alike (an epoch is a position in the log, not a belief), and a repair by
``check --repair`` back to what the log said before it, never to the damage it
repaired (:func:`as_logged`). Nothing is written to either store and the root's
lock is not needed.

:class:`PastStore` answers the reads ``status``, the viewer's snapshot and
``recall`` make of a :class:`~memory_core.store.belief_store.BeliefStore`
from that graph, so the past is printed by the very code that prints the
present (same shapes). Vector search at an epoch ranks the nodes that existed
then by cosine distance, each by the vector of the text it had then: the vector store's
row of that text where one is stored (read once per call, by text: the model gives a text
the same vector whatever it is embedded with; the store keeps it as float32), else the
vector the model the stores use gives it (a node forgotten since has no row any more; one
forgotten and added again with another text, or whose text is stored under another node,
is searched by its text of then all the same). On a 9,006-node root the read replaced
embedding every past node's text on each search (28 s; bench/RESULTS.md).
"""

from __future__ import annotations

import asyncio

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional

from memory_core.core.beliefs import BeliefView
from memory_core.core.errors import FalsifyError, InputError
from memory_core.core.identity import KINDS, TYPE_BY_KIND, collection, node_id
from memory_core.core.results import StatusResult
from memory_core.core.vocabulary import TEXT_FIELD
from memory_core.store import off_loop
from memory_core.store.stores import Stores
from memory_core.store.belief_store import BeliefStore
from memory_core.store.journal import inverse
from memory_core.store.writer import patch


def parse_epoch(value, current: int) -> int:
    """``value`` as an epoch of this root (0 = before the first change, up to ``current``);
    anything else is an InputError (exit 2) naming the range."""
    epoch = None
    text = value.strip() if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        epoch = value
    elif text and text.isdigit() and text.isascii():
        epoch = int(text) if len(text) <= 20 else current + 1  # a longer number is past every epoch
    if epoch is None:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise InputError(
            f"the epoch must be a whole number from 0 to {current} (the current epoch), got {shown}",
            field="epoch",
        )
    if not 0 <= epoch <= current:
        # never str() a huge int: past 4,300 digits Python refuses (and the line would be that long)
        big = abs(epoch) >= 10**20 if isinstance(value, int) else len(text or "") > 20
        shown = "(a number with more than 20 digits)" if big else str(epoch)
        raise InputError(
            f"epoch {shown} does not exist in this data root (its epochs run from 0 to {current})",
            field="epoch",
        )
    return epoch


# ---- the pure fold ----------------------------------------------------------------


@dataclass
class Graph:
    """Node id -> stored properties; (source id, target id, relation) -> edge properties."""

    nodes: dict[str, dict] = field(default_factory=dict)
    edges: dict[tuple[str, str, str], dict] = field(default_factory=dict)

    def apply(self, intent: dict) -> None:
        """An intent's batches, in the order :func:`memory_core.store.writer.apply` writes them."""
        for node in intent.get("add_nodes", []):
            props = dict(node.get("props") or {})
            props.setdefault("type", TYPE_BY_KIND.get(node.get("kind"), props.get("type")))
            props.setdefault("key", node.get("key"))
            props.update(
                id=node["id"],
                truth_alignment=[node["state"]],
                truth_epoch=int(node.get("epoch") or 0),
                feedback_weight=float(node.get("weight", 0.5)),
            )
            self.nodes[node["id"]] = props
        for node in intent.get("add_nodes", []):
            for e in node.get("edges", []):
                self._add_edge(e)
        for e in intent.get("add_edges", []):
            self._add_edge(e)
        for update in intent.get("updates", []):
            props = self.nodes.get(update["id"])
            if props is not None:
                props.update(patch(update))
        for e in intent.get("del_edges", []):
            self.edges.pop(tuple(e[:3]), None)
        gone = {n["id"] for n in intent.get("del_nodes", [])}
        if gone:
            for ident in gone:
                self.nodes.pop(ident, None)
            for ident in [k for k in self.edges if k[0] in gone or k[1] in gone]:
                del self.edges[ident]

    def _add_edge(self, e) -> None:
        # an edge to a missing endpoint is not created (as in the graph store)
        if e[0] in self.nodes and e[1] in self.nodes:
            self.edges[(e[0], e[1], e[2])] = dict(e[3] if len(e) > 3 and e[3] else {})


def lost_after(entries: Iterable[dict], epoch: int) -> list:
    """The spans of a lost log (recorded by ``check --repair``) later than ``epoch``: their
    changes cannot be reverted, so the graph before them cannot be rebuilt."""
    return read_log(entries, epoch)[0]


# ---- a repair restores what the log said: rewinding it never brings the damage back ----
#
# ``check --repair`` logs its writes as entries of kind ``repair``, each with an intent whose
# before-image is the state it found. Where that state was damage done behind FALSIFY's back
# (a node deleted from the stores, a valid_to or an epoch changed, a state set), the repair
# wrote back what the revision log already said: the inverse of its intent would put the
# damage back into every epoch before it. So rewinding a repair takes the graph back to what
# the log said before it, change by change:
#
# * a node it restored that the log held then (deleted behind FALSIFY's back) stays, as the
#   log wrote it ("restored X from the revision log"); a node it restored that the log had
#   forgotten (FALSIFY's own forgetting, which the forget rules say was wrong) is removed
#   before the repair again: FALSIFY's store really lacked it then;
# * each field an update changed (state, epoch, weight, confidence, valid_to) goes back to
#   the value the log held before the repair ("restored the logged valid_to of ...": the
#   logged one; "gave X epoch N in place of an epoch no log could hold": the epoch the log
#   wrote for it, not the absurd one nor the repair's). Where the before-image is FALSIFY's
#   own state -- "invalidated unfounded node(s)", "relabelled ... as the three-valued
#   labelling makes them" of a state a logged write left -- the log holds exactly that
#   before-image, so the repair is inverted as logged: the past really held that state, and
#   the epochs before the repair show it. A relabelled state that was set behind FALSIFY's
#   back reads, before the repair, as the log wrote it.
# * a node it forgot ("forgot orphan(s) the forget rule had missed") comes back before it, as
#   any forgetting is inverted: the stores really held it.
#
# The log knows nothing of a node written in a lost span of it: such a node's change is
# inverted as logged. Re-indexing a vector row is not logged at all (the graph is unchanged).

REPAIR = "repair"
# the fields a logged update writes (memory_core.store.writer.patch), as the log's image holds them
LOGGED_FIELDS = ("state", "epoch", "weight", "confidence", "valid_to")
# fields with no "none" value: a log image without one is not substituted
REQUIRED_FIELDS = ("state", "epoch", "weight")


def _image(node: dict) -> dict:
    """The logged fields of an intent's node entry (its ``add_nodes`` or a tombstone)."""
    props = node.get("props") or {}
    return {
        "state": node.get("state"),
        "epoch": node.get("epoch"),
        "weight": node.get("weight"),
        "confidence": props.get("confidence"),
        "valid_to": props.get("valid_to"),
    }


def _apply_update(image: dict, update: dict) -> None:
    """An update's after-image into a node's logged fields, by the rule of
    :meth:`memory_core.ops.check_log.Replay.apply` (what ``check`` compares the stores with)."""
    after, before = update.get("after") or {}, update.get("before") or {}
    for name in REQUIRED_FIELDS:
        if name in after:
            image[name] = after[name]
    for name in ("confidence", "valid_to"):
        if name in after and after.get(name) != before.get(name):
            image[name] = after[name]


def read_log(entries: Iterable[dict], epoch: int) -> tuple[list, dict[int, dict[str, Optional[dict]]]]:
    """The revision log, oldest first, read once for :func:`rewind` to ``epoch``: the lost
    spans after ``epoch`` (:func:`lost_after`), and what the log said before each change of
    every repair after ``epoch`` (by repair epoch: node id -> its logged fields then, None
    where the log held no such node; the fields of :data:`LOGGED_FIELDS`)."""
    lost: list = []
    before_repairs: dict[int, dict[str, Optional[dict]]] = {}
    nodes: dict[str, dict] = {}  # id -> the logged fields of every node the log holds
    for entry in entries:
        for span in entry.get("lost_epochs") or []:
            if span and int(span[-1]) > epoch:
                lost.append(span)
        intent = entry.get("intent")
        if not isinstance(intent, dict):
            continue
        at = entry.get("epoch")
        said: Optional[dict[str, Optional[dict]]] = None
        if entry.get("kind") == REPAIR and isinstance(at, int) and at > epoch:
            said = {}
        added = [n for n in intent.get("add_nodes") or [] if isinstance(n, dict) and "id" in n]
        if said is not None:
            for node in added:
                held = nodes.get(node["id"])
                said.setdefault(node["id"], dict(held) if held is not None else None)
        for node in added:
            nodes[node["id"]] = _image(node)
        for update in intent.get("updates") or []:
            if not isinstance(update, dict):
                continue
            image = nodes.get(update.get("id"))
            if said is not None:
                said.setdefault(update.get("id"), dict(image) if image is not None else None)
            if image is not None:
                _apply_update(image, update)
        for node in intent.get("del_nodes") or []:
            if isinstance(node, dict):
                nodes.pop(node.get("id"), None)
        if said:
            before_repairs[at] = said
    return lost, before_repairs


def as_logged(intent: dict, said: dict[str, Optional[dict]]) -> dict:
    """A repair's ``intent`` with its before-image replaced by what the log said before it
    (``said``: :func:`read_log`'s, for this repair), so that its inverse takes the graph back
    to the log's state, not to the damage the repair found (see the comment above
    :data:`REPAIR`). A node the log held before it is not removed by the inverse; each field an
    update changed goes back to the log's value (the before-image itself when the log agrees
    with it: FALSIFY's own state)."""
    out = dict(intent)
    if intent.get("add_nodes"):
        out["add_nodes"] = [n for n in intent["add_nodes"] if said.get(n.get("id")) is None]
    fixed = []
    for update in intent.get("updates") or []:
        image = said.get(update.get("id"))
        before, after = update.get("before") or {}, update.get("after") or {}
        if image is not None:
            before = dict(before)
            for name in LOGGED_FIELDS:
                if name not in before or before.get(name) == after.get(name):
                    continue  # not changed by the repair: the inverse leaves it as it is
                if image.get(name) is None and name in REQUIRED_FIELDS:
                    continue
                before[name] = image.get(name)
            update = dict(update, before=before)
        fixed.append(update)
    out["updates"] = fixed
    return out


def rewind(
    graph: Graph,
    newest_first: Iterable[dict],
    epoch: int,
    before_repairs: dict[int, dict[str, Optional[dict]]],
) -> Graph:
    """``graph`` (the present) taken back to how it stood after ``epoch``: the inverse of
    every logged intent after it, newest first (what undo does, once per entry); a repair's
    inverse takes the graph back to what the log said before it (``before_repairs``:
    :func:`read_log`'s; see :func:`as_logged`), never to the damage it repaired."""
    for entry in newest_first:
        if int(entry.get("epoch", 0)) <= epoch:
            break
        intent = entry.get("intent")
        if isinstance(intent, dict):
            if entry.get("kind") == REPAIR:
                intent = as_logged(intent, before_repairs.get(entry.get("epoch"), {}))
            graph.apply(inverse(dict(intent, epoch=entry.get("epoch"))))
    return graph


# ---- reading the past through the store's read interface --------------------------


_ATOMS = (str, int, float, bool, type(None))


def _copied(props: dict) -> dict:
    """A node's properties, copied so a caller's changes never reach the past graph: a
    ``copy.deepcopy`` of each value that is not a plain scalar (a 9,006-node investigation
    copied whole took 0.36 s of CPU; the values are JSON's, nearly all scalars)."""
    return {k: v if type(v) in _ATOMS else copy.deepcopy(v) for k, v in props.items()}


@dataclass
class Hit:
    """A vector-search row, shaped as cognee's ScoredResult."""

    id: str
    score: float
    payload: dict


class PastStore:
    """The reads of :class:`BeliefStore` that status, snapshot and recall make, over a
    rebuilt :class:`Graph` (the embedding engine of ``live`` ranks vector searches). Each read
    that scans or copies the graph runs in a worker thread (:mod:`memory_core.store.off_loop`):
    the graph is only read, by the call that rebuilt it."""

    def __init__(self, graph: Graph, live: BeliefStore):
        self.g = graph
        self.live = live
        self._vectors: dict[str, PastVectors] = {}  # by collection: read once, then only read
        self._reading: dict[str, asyncio.Lock] = {}

    @property
    def settings(self):
        """The live store's settings (the past is read with the settings of now)."""
        return self.live.settings

    async def raw_nodes(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = list(dict.fromkeys(ids))
        return await off_loop.run(self._raw_nodes, ids, size=len(ids))

    def _raw_nodes(self, ids: list[str]) -> dict[str, dict]:
        return {i: _copied(self.g.nodes[i]) for i in ids if i in self.g.nodes}

    async def find_keys(self, keys: Iterable[str]) -> dict[str, dict]:
        wanted = {node_id(kind, key): key for key in keys for kind in KINDS}
        return {wanted[i]: props for i, props in (await self.raw_nodes(wanted)).items()}

    async def ids_of_kind(self, kind: str) -> list[str]:
        return await off_loop.run(self._ids_of_kind, kind, size=len(self.g.nodes))

    def _ids_of_kind(self, kind: str) -> list[str]:
        return [i for i, p in self.g.nodes.items() if p.get("type") == TYPE_BY_KIND[kind]]

    async def question_keys(self) -> list[str]:
        found = await self.raw_nodes(await self.ids_of_kind("question"))
        return sorted(p["key"] for p in found.values() if "key" in p)

    async def investigation(self, question_key: str) -> tuple[list[dict], list[tuple[str, str, str, dict]]]:
        """The question's neighbourhood (one edge away, either direction) and every edge
        among those nodes, as the graph engine's ``get_neighborhood(depth=1)`` returns it."""
        return await off_loop.run(self._investigation, question_key, size=len(self.g.edges))

    def _investigation(self, question_key: str) -> tuple[list[dict], list[tuple[str, str, str, dict]]]:
        qid = node_id("question", question_key)
        if qid not in self.g.nodes:
            return [], []
        ids = {qid}
        for src, dst, _ in self.g.edges:
            if src == qid:
                ids.add(dst)
            elif dst == qid:
                ids.add(src)
        nodes = [dict(_copied(self.g.nodes[i]), id=i) for i in ids if i in self.g.nodes]
        edges = [(s, d, r, dict(p)) for (s, d, r), p in self.g.edges.items() if s in ids and d in ids]
        return nodes, edges

    async def view_of_investigation(self, question_key: str) -> BeliefView:
        nodes, edges = await self.investigation(question_key)
        return await off_loop.run(BeliefStore._view, self, nodes, edges, size=len(nodes) + len(edges))

    async def all_edges_of(self, ids: list[str]) -> list[tuple[str, str, str, dict]]:
        return await off_loop.run(self._all_edges_of, ids, size=len(self.g.edges))

    def _all_edges_of(self, ids: list[str]) -> list[tuple[str, str, str, dict]]:
        wanted = set(ids)
        return [(s, d, r, dict(p)) for (s, d, r), p in self.g.edges.items() if s in wanted or d in wanted]

    def _rows(self, name: str) -> list[tuple[str, str]]:
        """(id, text) of every node then of the kind whose vector collection is ``name``."""
        kind = next((k for k in KINDS if collection(k) == name), None)
        if kind is None:
            return []
        return [
            (i, p.get(TEXT_FIELD[kind]) or "")
            for i, p in self.g.nodes.items()
            if p.get("type") == TYPE_BY_KIND[kind]
        ]

    async def search(self, name: str, text: str, limit: int) -> list:
        if not text:
            return []
        (query,) = await self.live.embed([text])
        return await self.search_vector(name, query, limit)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.live.embed(texts)

    async def search_vector(self, name: str, vector: list[float], limit: int) -> list:
        past = await self.vectors(name)
        if not past.rows:
            return []
        return await off_loop.run(_nearest, vector, past.rows, past.matrix, limit, size=len(past.rows))

    async def vectors(self, name: str) -> "PastVectors":
        """The nodes then of the collection ``name`` and their vectors (see the module's
        docstring), made once per past store: its graph never changes."""
        lock = self._reading.setdefault(name, asyncio.Lock())
        async with lock:  # the collections' searches run at once; each collection is read once
            if name not in self._vectors:
                self._vectors[name] = await self._read_vectors(name)
            return self._vectors[name]

    async def _read_vectors(self, name: str) -> "PastVectors":
        rows = await off_loop.run(self._rows, name, size=len(self.g.nodes))
        if not rows:
            return PastVectors([], None, {})
        stored = await self.live.text_vectors(name)  # None: the backend cannot give them (all embedded)
        texts, matrix = stored if stored is not None else ([], None)
        found, missing = await off_loop.run(_stored_rows, rows, texts, matrix, size=len(rows) + len(texts))
        fresh: dict[str, list[float]] = {}
        for start in range(0, len(missing), EMBED_BATCH):  # the model in a worker thread (embed)
            batch = missing[start : start + EMBED_BATCH]
            fresh.update(zip(batch, await self.live.embed(batch)))
        return await off_loop.run(_past_vectors, rows, texts, matrix, found, fresh, size=len(rows))

    async def lexical(self, name: str, texts: list[str], limit: int) -> list[list[tuple]]:
        """Okapi BM25 (k1 1.2, b 0.75) of each text's words over the texts of the nodes then,
        in memory (the past has no full-text index); each row carries its node's vector then,
        but a row of the very text searched for (the caller embeds it: the query's own vector,
        as :func:`_nearest` ranks it)."""
        found = await off_loop.run(self._lexical, name, texts, limit, size=len(self.g.nodes))
        if not any(found):
            return found
        past = await self.vectors(name)
        return [
            [(i, score, None if past.text(i) == text else past.vector(i)) for i, score, _ in rows]
            for text, rows in zip(texts, found)
        ]

    def _lexical(self, name: str, texts: list[str], limit: int) -> list[list[tuple]]:
        import re

        from memory_core.store.lexical import query_words

        rows = [(i, re.findall(r"[^\W_]+", t.lower())) for i, t in self._rows(name)]
        if not rows:
            return [[] for _ in texts]
        average = sum(len(words) for _, words in rows) / len(rows) or 1.0
        frequency: dict[str, int] = {}
        for _, words in rows:
            for word in set(words):
                frequency[word] = frequency.get(word, 0) + 1
        out = []
        for text in texts:
            wanted = query_words(text)
            scored = []
            for i, words in rows:
                score = 0.0
                for word in wanted:
                    tf = words.count(word)
                    if tf:
                        idf = math.log(1 + (len(rows) - frequency[word] + 0.5) / (frequency[word] + 0.5))
                        score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(words) / average))
                if score > 0:
                    scored.append((i, score, None))
            scored.sort(key=lambda r: (-r[1], r[0]))
            out.append(scored[:limit])
        return out

    async def nodes_by_sps(self, sps: Iterable[str]) -> list[dict]:
        """Evidence then stored under any of these normalised subject|predicate keys."""
        return await off_loop.run(self._nodes_by_sps, list(sps), size=len(self.g.nodes))

    def _nodes_by_sps(self, sps: list[str]) -> list[dict]:
        from memory_core.core.keys import sp_key

        wanted = set(sps)
        return [
            dict(_copied(p), id=i)
            for i, p in self.g.nodes.items()
            if p.get("type") == TYPE_BY_KIND["evidence"]
            and (p.get("name") or sp_key(p.get("subject"), p.get("predicate"))) in wanted
        ]

    async def nodes_by_subjects(self, subjects: Iterable[str]) -> list[dict]:
        """Evidence then stored under any of these subjects, whatever its predicate."""
        return await off_loop.run(self._nodes_by_subjects, list(subjects), size=len(self.g.nodes))

    def _nodes_by_subjects(self, subjects: list[str]) -> list[dict]:
        from memory_core.core.keys import normalise_term

        wanted = {normalise_term(s) for s in subjects if s}
        return [
            dict(_copied(p), id=i)
            for i, p in self.g.nodes.items()
            if p.get("type") == TYPE_BY_KIND["evidence"] and normalise_term(p.get("subject") or "") in wanted
        ]

    async def declared_predicates(self, props: Iterable[dict]) -> dict[str, dict[str, str]]:
        return await BeliefStore.declared_predicates(self, props)


EMBED_BATCH = 512  # texts of the past no stored row holds, embedded this many at a time
NEAR_MARGIN = 1e-9  # far above the rounding of a cosine over 384 or 3,072 dimensions (~1e-13)


@dataclass
class PastVectors:
    """The nodes then of one collection, ``(id, text)``, and their vectors as the rows of a
    float64 matrix (a stored vector's float32 values, or the model's own); ``index``: id -> row."""

    rows: list[tuple[str, str]]
    matrix: Any  # numpy.ndarray, or None without rows
    index: dict[str, int]

    def vector(self, ident: str) -> Optional[list[float]]:
        row = self.index.get(ident)
        return None if row is None else self.matrix[row].tolist()

    def text(self, ident: str) -> Optional[str]:
        row = self.index.get(ident)
        return None if row is None else self.rows[row][1]


def _stored_rows(rows: list[tuple[str, str]], texts: list[str], matrix) -> tuple[list[int], list[str]]:
    """For each past row, the stored row whose text is its text then (-1: none); the distinct
    texts no stored row holds (to embed)."""
    where: dict[str, int] = {}
    if matrix is not None:
        for n, text in enumerate(texts):
            where.setdefault(text, n)
    found = [where.get(t, -1) for _, t in rows]
    missing = list(dict.fromkeys(t for (_, t), n in zip(rows, found) if n < 0))
    return found, missing


def _past_vectors(rows, texts, matrix, found: list[int], fresh: dict) -> PastVectors:
    """:class:`PastVectors` of ``rows``: the stored vector where ``found`` has one, else the
    model's (``fresh``, by text)."""
    import numpy as np

    if matrix is not None and all(n >= 0 for n in found):
        out = np.asarray(matrix, dtype=np.float64)[found]
    else:
        width = matrix.shape[1] if matrix is not None else len(next(iter(fresh.values())))
        out = np.empty((len(rows), width), dtype=np.float64)
        for k, ((_, text), n) in enumerate(zip(rows, found)):
            out[k] = matrix[n] if n >= 0 else np.asarray(fresh[text], dtype=np.float64)
    return PastVectors(rows, out, {i: k for k, (i, _) in enumerate(rows)})


def _nearest(vector: list[float], rows: list[tuple[str, str]], matrix, limit: int) -> list[Hit]:
    """The ``limit`` rows nearest ``vector`` by cosine distance (ties by id): the rows within
    :data:`NEAR_MARGIN` of the ``limit``-th nearest found with numpy over the matrix, their
    distances then computed as :func:`memory_core.judging.retrieval.cosine_distance` does. A
    stored row that is ``vector`` rounded to float32 (a node whose text is the text searched
    for) is ranked by ``vector`` itself, the model's vector of its text, as when every past
    text was embedded again."""
    import numpy as np

    from memory_core.judging.retrieval import cosine_distance

    query = np.asarray(vector, dtype=np.float64)
    own = set(np.flatnonzero((matrix == query.astype(np.float32)).all(axis=1)).tolist())
    candidates: Iterable[int] = range(len(rows))
    if len(rows) > limit > 0:
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
        with np.errstate(divide="ignore", invalid="ignore"):
            approx = np.where(norms > 0, 1.0 - (matrix @ query) / norms, 1.0)
        cut = np.partition(approx, limit - 1)[limit - 1]
        candidates = sorted(own.union(np.flatnonzero(approx <= cut + NEAR_MARGIN).tolist()))
    hits = [
        Hit(
            rows[k][0],
            cosine_distance(vector, vector if k in own else matrix[k].tolist()),
            {"id": rows[k][0], "text": rows[k][1]},
        )
        for k in candidates
    ]
    hits.sort(key=lambda h: (h.score, h.id))
    return hits[:limit]


class PastJournal:
    """The revision log as it stood after ``epoch`` (read-only)."""

    def __init__(self, journal, epoch: int):
        self.journal = journal
        self.at = epoch
        self.log_path = journal.log_path  # the log file it reads (its size and time stand for its content)

    def epoch(self) -> int:
        return self.at

    def meta(self) -> dict:
        return self.journal.meta()

    def entries(self) -> Iterator[dict]:
        for entry in self.journal.entries():
            if int(entry.get("epoch", 0)) > self.at:
                break
            yield entry

    def entries_backwards(self) -> Iterator[dict]:
        for entry in self.journal.entries_backwards():
            if int(entry.get("epoch", 0)) <= self.at:
                yield entry

    def last_entry(self) -> Optional[dict]:
        return next(self.entries_backwards(), None)


async def present_graph(store: BeliefStore) -> Graph:
    """Every stored node and edge, as status reads them: the investigations' subgraphs read at
    once (the questions' neighbourhood: their nodes, and every edge among those, between
    investigations too), then the nodes outside any, with their edges. Read on the event loop,
    put together in a worker thread. (Each investigation read alone, then the edges of every
    node again for those between investigations: 21,002 edges read twice on the 9,006-node root,
    0.5 s of CPU.)"""
    questions = [node_id("question", key) for key in await store.question_keys()]
    nodes, edges = await store.backend.neighborhood(questions) if questions else ([], [])
    graph = await off_loop.run(_neighborhood_graph, nodes, edges, size=len(nodes) + len(edges))
    ids = []
    for kind in KINDS:
        ids += await store.ids_of_kind(kind)
    missing = await off_loop.run(lambda: [i for i in ids if i not in graph.nodes], size=len(ids))
    found = await store.raw_nodes(missing)
    edges = await store.all_edges_of(list(found)) if found else []
    return await off_loop.run(_completed_graph, graph, found, edges, size=len(found) + len(edges))


def _neighborhood_graph(nodes: list[tuple[str, dict]], edges: list) -> Graph:
    graph = Graph()
    for i, props in nodes:
        graph.nodes.setdefault(i, dict(props, id=i))
    for src, dst, rel, props in edges:
        graph.edges.setdefault((src, dst, rel), dict(props or {}))
    return graph


def _completed_graph(graph: Graph, found: dict[str, dict], edges: list) -> Graph:
    for i, props in found.items():
        graph.nodes[i] = dict(props, id=i)
    for src, dst, rel, props in edges:
        if src in graph.nodes and dst in graph.nodes:
            graph.edges.setdefault((src, dst, rel), dict(props or {}))
    return graph


async def stores_at(stores: Stores, epoch) -> Stores:
    """Read-only stores showing the root as it stood after ``epoch`` (validated: an epoch
    that does not exist is an InputError, nothing read or written)."""
    # journal.epoch() parses the log's last entry: a large batch's is megabytes (off the event loop)
    current = await asyncio.to_thread(stores.journal.epoch)
    epoch = parse_epoch(epoch, current)
    if epoch == current:
        return Stores(stores.store, stores.journal, stores.paths)
    # the log is read and replayed in a worker thread: on a large root it takes seconds, and the
    # caller's event loop keeps running meanwhile (the revision lock the caller holds keeps writers out)
    # one pass: the lost spans after it, and what the log said before each repair after it
    lost, before_repairs = await asyncio.to_thread(lambda: read_log(stores.journal.entries(), epoch))
    if lost:
        raise FalsifyError(
            f"epoch {epoch} cannot be rebuilt: the revision log of epoch(s) "
            f"{', '.join(str(s[0]) if s[0] == s[-1] else f'{s[0]}-{s[-1]}' for s in lost)} after it is lost"
        )
    store = stores.store
    if isinstance(store, PastStore):  # a past epoch's stores asked for an earlier one (recall's "before")
        present = await off_loop.run(_copied_graph, store.g, size=len(store.g.nodes))
        live = store.live
    else:
        present = await present_graph(store)
        live = store
    graph = await asyncio.to_thread(
        lambda: rewind(present, stores.journal.entries_backwards(), epoch, before_repairs)
    )
    return Stores(PastStore(graph, live), PastJournal(stores.journal, epoch), stores.paths)


def _copied_graph(graph: Graph) -> Graph:
    """A copy of a rebuilt graph that rewinding it further cannot change."""
    return Graph(
        nodes={i: _copied(props) for i, props in graph.nodes.items()},
        edges={key: dict(props) for key, props in graph.edges.items()},
    )


async def status_at(stores: Stores, epoch) -> StatusResult:
    """``status`` as it would have printed after ``epoch``, plus ``"epoch": N``."""
    from memory_core.ops import status as status_op

    past = await stores_at(stores, epoch)
    status = await status_op.status(past.store)
    return dict(status, epoch=await asyncio.to_thread(past.journal.epoch))  # the live log's: parsed


async def snapshot_at(stores: Stores, epoch) -> dict:
    """The viewer's graph after ``epoch`` (its ``epoch`` field is N; ``current`` the root's)."""
    from memory_core.ops import status as status_op

    past = await stores_at(stores, epoch)
    snapshot = await status_op.snapshot(past)
    return dict(snapshot, current=await asyncio.to_thread(stores.journal.epoch))


TIMELINE_FIELDS = (
    "epoch",
    "kind",
    "at",
    "fact",
    "new_evidence",
    "judge",
    "question",
    "undoes",
    "undoes_kind",
)


def change_row(change: dict) -> dict:
    """One logged change as a timeline row's change: key, rule, state ``from``/``to``, and, for
    a change that keeps the state (a promotion, a decay, a validity ending earlier), each of
    weight, confidence and valid_to that it changed as ``[before, after]``."""
    before, after = change.get("before") or {}, change.get("after") or {}
    row = {
        "key": change.get("key"),
        "rule": change.get("rule"),
        "from": before.get("state"),
        "to": after.get("state"),
    }
    if row["from"] != row["to"]:
        return row
    for name in ("weight", "confidence", "valid_to"):
        if name in after and after.get(name) != before.get(name):
            row[name] = [before.get(name), after.get(name)]
    return row


def timeline(entries: Iterable[dict]) -> list[dict]:
    """The revision log as one row per epoch (the viewer's timeline): what happened (kind,
    fact, judge), what it added (loaded nodes, the evidence a revision recorded), what it
    changed (each change of state, weight, confidence or valid_to, with its rule), what it
    forgot, restored or removed, and whether a later undo reverted it (``undone_at``)."""
    rows: list[dict] = []
    by_epoch: dict = {}
    for entry in entries:
        row = {k: entry[k] for k in TIMELINE_FIELDS if entry.get(k) is not None}
        facts = [f.get("fact") for f in entry.get("facts") or [] if isinstance(f, dict) and f.get("fact")]
        if facts and "fact" not in row:
            row["fact"] = facts[0] if len(facts) == 1 else f"{len(facts)} facts: " + " / ".join(facts)
        row["changes"] = [change_row(c) for c in entry.get("changes", [])]
        for name in ("added", "forgotten", "restored", "removed"):
            if entry.get(name):
                row[name] = list(entry[name])
        if entry.get("kind") == "revise":  # the evidence a revision recorded is what it added
            recorded = [f.get("new_evidence") for f in entry.get("facts") or [] if isinstance(f, dict)]
            recorded = [k for k in recorded or [entry.get("new_evidence")] if k]
            if recorded:
                row["added"] = list(dict.fromkeys(list(row.get("added", [])) + recorded))
        if entry.get("kind") == "undo" and entry.get("undoes") in by_epoch:
            by_epoch[entry["undoes"]]["undone_at"] = entry.get("epoch")
        rows.append(row)
        by_epoch[entry.get("epoch")] = row
    return rows
