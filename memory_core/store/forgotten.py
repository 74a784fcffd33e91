"""The forgotten index: what the revision log says is forgotten now, followed entry by entry.

A node forgotten by a revision is deleted from both stores; its tombstone (properties,
state, weight, epoch, edges) stays in the log's intent. :class:`ForgottenIndex` folds the
log into the tombstones of every node forgotten now (forgotten, and neither brought back
by an undo nor restored by a reinstatement since), the log's :class:`Memory` and the
sources registered with ``--trust``; an edge between two forgotten nodes is in both their
tombstones (:meth:`ForgottenIndex._linked`). :func:`forgotten_index` keeps one index per journal
object for as long as that journal lives (stores sharing a journal share it) and feeds
it only the entries appended since it last looked, so a long-lived process does not
re-read the log for every revision. The journal itself is not touched.
"""

from __future__ import annotations

import weakref
from typing import Iterable, Optional

from memory_core.core.keys import normalise_key
from memory_core.core.tms import Memory
from memory_core.core.vocabulary import DEPENDS_ON
from memory_core.store.journal import log_identity


class ForgottenIndex:
    """Normalised key -> the tombstone of every node forgotten now (forgotten, and
    neither brought back by an undo nor restored by a reinstatement since), kept up
    to date from the revision log: built once per journal object, then fed only the
    entries appended since (read from the end of the log), so a long-lived process
    does not re-read the log for every revision. It also keeps the log's Memory and the
    sources registered with ``--trust`` (:meth:`registered_sources`)."""

    def __init__(self) -> None:
        self.epoch = -1
        self._seen: Optional[tuple] = None  # the log file's identity when last caught up (log_identity)
        self.gone: dict[str, dict] = {}
        self.memory = Memory()  # the log's changes folded in order (= memory_of(every entry))
        self._consumers: Optional[dict[str, set[str]]] = None
        self._key_of: dict[str, str] = {}  # a forgotten node's id -> its key in gone
        self._touching: dict[str, set[str]] = {}  # a node's id -> keys of tombstones with an edge of it
        self._registrations: list[tuple[object, str, float]] = []  # (epoch, source, trust), in log order
        self._undone: set = set()  # epochs an undo reverted

    def _put(self, key: str, tomb: dict, link: bool = True) -> None:
        """Forget ``key`` with ``tomb``; ``link``: share its edges with the other forgotten nodes
        (:meth:`_linked`)."""
        self._drop(key)
        if link:
            tomb = self._linked(key, tomb)
        self.gone[key] = tomb
        tid = tomb.get("id")
        if tid:
            self._key_of[tid] = key
        for other in _ends(tomb):
            self._touching.setdefault(other, set()).add(key)
        if self._consumers is not None:
            for src in _consumer_ids(tomb):
                self._consumers.setdefault(src, set()).add(key)

    def _linked(self, key: str, tomb: dict) -> dict:
        """An edge between two forgotten nodes belongs in both tombstones. A node's tombstone
        is written from the stores when it is forgotten, and an edge to a node forgotten before
        it was deleted with that node: only the earlier tombstone holds it. So the new tombstone
        takes the edges the others hold with it, and gives them the edges it holds with them;
        whichever of the two comes back first, the other's tombstone still has the edge (C,
        forgotten after R it rests on, comes back with R, or after it, resting on it again)."""
        tid = tomb.get("id") or ""
        edges = [list(e) for e in tomb.get("edges", [])]
        have = {tuple(e[:3]) for e in edges}
        for other in sorted(self._touching.get(tid, ())):
            if other == key:
                continue
            for e in self.gone[other].get("edges", []):
                if tid in e[:2] and tuple(e[:3]) not in have:
                    edges.append(list(e))
                    have.add(tuple(e[:3]))
        for e in edges:
            okey = self._key_of.get(e[1] if e[0] == tid else e[0])
            if okey is None or okey == key:
                continue
            otomb = self.gone[okey]
            if all(tuple(x[:3]) != tuple(e[:3]) for x in otomb.get("edges", [])):
                self._put(okey, dict(otomb, edges=[*otomb.get("edges", []), list(e)]), link=False)
        return dict(tomb, edges=edges) if len(edges) != len(tomb.get("edges", [])) else tomb

    def _drop(self, key: str) -> None:
        tomb = self.gone.pop(key, None)
        if tomb is None:
            return
        tid = tomb.get("id") or ""
        if self._key_of.get(tid) == key:
            del self._key_of[tid]
        for other in _ends(tomb):
            keys = self._touching.get(other)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._touching[other]
        if self._consumers is not None:
            for src in _consumer_ids(tomb):
                keys = self._consumers.get(src)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._consumers[src]

    def feed(self, entry: dict, undone_entry) -> None:
        """Apply one log entry; ``undone_entry(epoch)`` returns the entry an undo reverts."""
        self.memory.add(entry.get("changes", []))
        if entry.get("kind") == "undo":
            self._undone.add(entry.get("undoes"))
        for sid, trust in (entry.get("registered_sources") or {}).items():
            self._registrations.append((entry.get("epoch"), sid, float(trust)))
        intent = entry.get("intent") or {}
        if entry.get("kind") == "undo":
            undone = undone_entry(entry.get("undoes")) or {}
            undone_intent = undone.get("intent") or {}
            self._rests(undone.get("rests_on_forgotten") or [], remove=True)
            for node in undone_intent.get("del_nodes", []):
                self._drop(normalise_key(node.get("key", "")))
            restored = {normalise_key(k) for k in undone.get("restored", [])}
            for node in undone_intent.get("add_nodes", []):
                if normalise_key(node.get("key", "")) in restored:
                    self._put(normalise_key(node["key"]), _restored_tombstone(undone, node))
        else:
            for node in intent.get("del_nodes", []):
                self._put(normalise_key(node.get("key", "")), node)
            for key in entry.get("restored", []):
                self._drop(normalise_key(key))
            self._rests(entry.get("rests_on_forgotten") or [])
        try:
            self.epoch = max(self.epoch, int(entry.get("epoch", self.epoch)))
        except (TypeError, ValueError):
            pass

    def _rests(self, rows: list, remove: bool = False) -> None:
        """Edges a load rested on forgotten nodes (the log keeps them: their targets are gone
        from the stores) join those nodes' tombstones, or leave them when that load is undone."""
        by_id = {t.get("id"): k for k, t in self.gone.items()}
        for row in rows:
            key = by_id.get(row[1])
            if key is None:
                continue
            tomb = self.gone[key]
            edges = [list(e) for e in tomb.get("edges", [])]
            same = [e for e in edges if e[:3] == list(row[:3])]
            if remove:
                edges = [e for e in edges if e[:3] != list(row[:3])]
            elif not same:
                edges.append(list(row))
            self._put(key, dict(tomb, edges=edges), link=False)

    def rebuild(self, entries: Iterable[dict]) -> "ForgottenIndex":
        self.epoch, self.gone, self.memory, self._consumers = -1, {}, Memory(), None
        self._key_of, self._touching = {}, {}
        self._registrations, self._undone = [], set()
        by_epoch: dict = {}
        for entry in entries:
            by_epoch[entry.get("epoch")] = entry
            self.feed(entry, by_epoch.get)
        return self

    def refresh(self, journal) -> "ForgottenIndex":
        """Catch up with ``journal``: the entries newer than the last one seen (a log
        whose newest epoch went backwards was rewritten: read it again). A log file unchanged
        since the last call is not read at all."""
        seen = log_identity(journal)
        if seen is not None and seen == self._seen and self.epoch >= 0:
            return self
        self._seen = seen
        if self.epoch < 0:
            return self.rebuild(journal.entries())
        newer: list[dict] = []
        for entry in journal.entries_backwards():
            epoch = int(entry.get("epoch", -1))
            if epoch <= self.epoch:
                if not newer and epoch < self.epoch:
                    return self.rebuild(journal.entries())
                break
            newer.append(entry)
        else:
            if self.epoch > 0 and not newer:
                return self.rebuild(journal.entries())
        if newer:
            newer_by_epoch = {e.get("epoch"): e for e in newer}

            def undone_entry(epoch):
                if epoch in newer_by_epoch:
                    return newer_by_epoch[epoch]
                return next((e for e in journal.entries_backwards() if e.get("epoch") == epoch), None)

            for entry in reversed(newer):
                self.feed(entry, undone_entry)
        return self

    def registered_sources(self) -> dict[str, float]:
        """Sources earlier revisions registered with ``--trust`` (undone ones excluded; the
        first registration of a source wins) = :func:`registered_sources` of the whole log."""
        found: dict[str, float] = {}
        for epoch, sid, trust in self._registrations:
            if epoch not in self._undone:
                found.setdefault(sid, trust)
        return found

    def antecedents_of(self, ids: Iterable[str]) -> dict[str, dict]:
        """The tombstones of forgotten nodes that a node in ``ids`` rests on
        (its depends_on edge went with the forgotten node): key -> tombstone. The map from
        consumer to forgotten antecedents is built on first use, then kept up to date by
        every entry fed (not rebuilt: its cost does not grow with the log)."""
        if self._consumers is None:
            self._consumers = {}
            for key, tomb in self.gone.items():
                for src in _consumer_ids(tomb):
                    self._consumers.setdefault(src, set()).add(key)
        found: dict[str, dict] = {}
        for i in ids:
            for key in self._consumers.get(i, ()):
                found[self.gone[key].get("key", key)] = self.gone[key]
        return found


def _ends(tomb: dict) -> set[str]:
    """The ids of the other nodes the tombstone's edges touch."""
    tid = tomb.get("id")
    return {i for e in tomb.get("edges", []) for i in e[:2] if i != tid}


def _consumer_ids(tomb: dict) -> set[str]:
    """The ids of the nodes whose depends_on edge pointed at this forgotten node."""
    return {src for src, dst, rel, _ in tomb.get("edges", []) if rel == DEPENDS_ON and dst == tomb.get("id")}


# journal -> the index following its log (dropped with the journal)
_following: "weakref.WeakKeyDictionary[object, ForgottenIndex]" = weakref.WeakKeyDictionary()


def forgotten_index(journal) -> ForgottenIndex:
    """The :class:`ForgottenIndex` following ``journal``, caught up with its log (the same
    object for the same journal, as long as the journal lives)."""
    try:
        index = _following.get(journal)
    except TypeError:  # a journal that cannot be referenced weakly: rebuilt each time
        return ForgottenIndex().refresh(journal)
    if index is None:
        index = _following[journal] = ForgottenIndex()
    return index.refresh(journal)


def not_stored(journal, key: str, argument: str, wanted: str = "node") -> str:
    """Why ``key`` (given as ``argument``, for a ``wanted`` node) names no stored node: a node
    forgotten now, or none."""
    tomb = forgotten_index(journal).gone.get(normalise_key(key))
    if tomb is not None:
        kind = tomb.get("kind") or "node"
        return (
            f"{argument} {key!r} names a forgotten {kind} (explain {tomb.get('key', key)} says when and "
            "why): a forgotten node is no longer stored, nothing can contradict or resolve it"
        )
    return f"{argument} {key!r}: no {wanted} with that key in this data root"


def current_tombstones(entries: Iterable[dict]) -> dict[str, dict]:
    """Normalised key -> the tombstone of every node forgotten now (see :class:`ForgottenIndex`)."""
    return ForgottenIndex().rebuild(entries).gone


def _restored_tombstone(entry: dict, added: dict) -> dict:
    """An undone reinstatement's node is forgotten again, in the state it had before, with
    its edges to the nodes that stayed forgotten (the log kept those, not its add_nodes entry)."""
    kept = [list(r) for r in entry.get("rests_on_forgotten") or [] if r[0] == added.get("id")]
    if kept:
        added = dict(added, edges=[*added.get("edges", []), *kept])
    before = next((c["before"] for c in entry.get("changes", []) if c["key"] == added["key"]), None)
    if before is None:
        return added
    return dict(added, state=before["state"], weight=before["weight"])


def memory_of(entries: Iterable[dict]) -> Memory:
    changes = []
    for entry in entries:
        changes += entry.get("changes", [])
    return Memory.from_changes(changes)


def registered_sources(entries: Iterable[dict]) -> dict[str, float]:
    """Sources earlier revisions registered with ``--trust`` (undone ones excluded)."""
    entries = list(entries)
    undone = {e.get("undoes") for e in entries if e.get("kind") == "undo"}
    found: dict[str, float] = {}
    for entry in entries:
        if entry.get("epoch") in undone:
            continue
        for sid, trust in (entry.get("registered_sources") or {}).items():
            found.setdefault(sid, float(trust))
    return found


__all__ = ["ForgottenIndex", "current_tombstones", "forgotten_index", "memory_of", "registered_sources"]
