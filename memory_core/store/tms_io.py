"""What the three-valued labelling (:mod:`memory_core.core.tms`) reads beyond the
affected view, and how its results are written.

* :func:`extend_view`: when a node whose label may change supersedes or disputes
  another, the other side and *its* dependents are read too (their labels can
  flip: reinstatement, a dispute ending), and so are the forgotten nodes that
  rested on them: *ghosts*, rebuilt from their tombstones in the revision log
  (properties, state, weight, epoch, edges). The log is read only then.
  Always: the forgotten nodes a node of the view still rests on (forgetting a
  node deletes its edges, so a kept consumer's justification through it would
  look whole) come back as dead ghosts, from :class:`ForgottenIndex`, which
  follows the log incrementally instead of re-reading it.
* :func:`memory_of`: the log's changes as a :class:`Memory` (weights before a
  death, promotions made because of it), so what comes back gets them back.
* :func:`restored_entries`: the add_nodes entries that bring reinstated ghosts
  back into both stores (re-embedded: found again by vector search).
* :func:`policy_context` / :func:`decisions_for`: the question's policy and
  sources, the stored evidence's dates and trust, and who wins each verdict.
"""

from __future__ import annotations

import time
from typing import Iterable, Optional

from memory_core.core.beliefs import ALIVE, BeliefView, Edge, Node
from memory_core.core.identity import node_id
from memory_core.core.keys import normalise_key
from memory_core.core.policy import DEFAULT_POLICY, TRUST_RANKED, Claim, Decision, decide as decide_policy, source_trust
from memory_core.core.tms import Memory, downstream
from memory_core.core.vocabulary import DEPENDS_ON, DISPUTES, PART_OF, REFUTES, SUPERSEDES, SUPPORTS
from memory_core.store.belief_store import to_edge, to_node

TMS_EDGES = (SUPERSEDES, DISPUTES)


def _merge(view: BeliefView, other: BeliefView) -> None:
    for key, node in other.nodes.items():
        if key not in view.nodes:
            view.add_node(node)
    have = {(e.kind, e.src, e.dst) for e in view.edges}
    for edge in other.edges:
        if (edge.kind, edge.src, edge.dst) not in have and edge.src in view.nodes and edge.dst in view.nodes:
            view.add_edge(edge)
            have.add((edge.kind, edge.src, edge.dst))


def _contested(view: BeliefView, region: set[str]) -> set[str]:
    """Nodes another node in ``region`` supersedes or disputes (their label may flip)."""
    found = set()
    for key in region:
        for edge in view.out_edges(key):
            if edge.kind in TMS_EDGES:
                found.add(edge.dst)
        for edge in view.in_edges(key, DISPUTES):
            found.add(edge.src)
    return found


class ForgottenIndex:
    """Normalised key -> the tombstone of every node forgotten now (forgotten, and
    neither brought back by an undo nor restored by a reinstatement since), kept up
    to date from the revision log: built once per journal object, then fed only the
    entries appended since (read from the end of the log), so a long-lived process
    does not re-read the log for every revision. It also keeps the log's Memory and the
    sources registered with ``--trust`` (:meth:`registered_sources`)."""

    def __init__(self) -> None:
        self.epoch = -1
        self.gone: dict[str, dict] = {}
        self.memory = Memory()  # the log's changes folded in order (= memory_of(every entry))
        self._consumers: Optional[dict[str, set[str]]] = None
        self._registrations: list[tuple[object, str, float]] = []  # (epoch, source, trust), in log order
        self._undone: set = set()  # epochs an undo reverted

    def _put(self, key: str, tomb: dict) -> None:
        self._drop(key)
        self.gone[key] = tomb
        if self._consumers is not None:
            for src in _consumer_ids(tomb):
                self._consumers.setdefault(src, set()).add(key)

    def _drop(self, key: str) -> None:
        tomb = self.gone.pop(key, None)
        if tomb is not None and self._consumers is not None:
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
            self._put(key, dict(tomb, edges=edges))

    def rebuild(self, entries: Iterable[dict]) -> "ForgottenIndex":
        self.epoch, self.gone, self.memory, self._consumers = -1, {}, Memory(), None
        self._registrations, self._undone = [], set()
        by_epoch: dict = {}
        for entry in entries:
            by_epoch[entry.get("epoch")] = entry
            self.feed(entry, by_epoch.get)
        return self

    def refresh(self, journal) -> "ForgottenIndex":
        """Catch up with ``journal``: the entries newer than the last one seen (a log
        whose newest epoch went backwards was rewritten: read it again)."""
        if self.epoch < 0:
            return self.rebuild(journal.entries())
        newer = []
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
            seen = {e.get("epoch"): e for e in newer}

            def undone_entry(epoch):
                if epoch in seen:
                    return seen[epoch]
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


def _consumer_ids(tomb: dict) -> set[str]:
    """The ids of the nodes whose depends_on edge pointed at this forgotten node."""
    return {src for src, dst, rel, _ in tomb.get("edges", []) if rel == DEPENDS_ON and dst == tomb.get("id")}


def forgotten_index(journal) -> ForgottenIndex:
    """The journal's :class:`ForgottenIndex`, caught up with its log."""
    index = getattr(journal, "_falsify_forgotten_index", None)
    if index is None:
        index = ForgottenIndex()
        try:
            journal._falsify_forgotten_index = index
        except AttributeError:  # a journal without a __dict__: rebuilt each time
            pass
    return index.refresh(journal)


def current_tombstones(entries: Iterable[dict]) -> dict[str, dict]:
    """Normalised key -> the tombstone of every node forgotten now (see :class:`ForgottenIndex`)."""
    return ForgottenIndex().rebuild(entries).gone


def add_antecedent_ghosts(view: BeliefView, index: ForgottenIndex, ghosts: dict[str, dict]) -> None:
    """Forgotten nodes that a node of ``view`` still rests on. Forgetting a node deletes
    its edges, so a kept (dead) consumer's justification through it would look whole
    without it: each comes back as a dead ghost with only its edges from the view's
    nodes (a dead premise: it cannot come back in this relabelling)."""
    ids = {node_id(n.kind, k): k for k, n in view.nodes.items()}
    for key, tomb in sorted(index.antecedents_of(list(ids)).items()):
        if key in view.nodes:
            continue
        node = ghost_node(tomb)
        if node is None:
            continue
        view.add_node(node)
        ghosts[node.key] = tomb
        for src, dst, rel, props in tomb.get("edges", []):
            if rel == DEPENDS_ON and dst == tomb.get("id") and src in ids:
                view.add_edge(to_edge(rel, ids[src], node.key, props or {}))


def _restored_tombstone(entry: dict, added: dict) -> dict:
    """An undone reinstatement's node is forgotten again, in the state it had before."""
    before = next((c["before"] for c in entry.get("changes", []) if c["key"] == added["key"]), None)
    if before is None:
        return added
    return dict(added, state=before["state"], weight=before["weight"])


def memory_of(entries: Iterable[dict]) -> Memory:
    changes = []
    for entry in entries:
        changes += entry.get("changes", [])
    return Memory.from_changes(changes)


def ghost_node(tomb: dict) -> Optional[Node]:
    props = dict(tomb.get("props") or {}, truth_alignment=[tomb["state"]], truth_epoch=tomb.get("epoch", 0),
                 feedback_weight=tomb.get("weight", 0.0))
    props.setdefault("type", {"evidence": "Evidence", "conclusion": "Conclusion", "hypothesis": "Hypothesis",
                              "question": "InvestigationQuestion"}.get(tomb.get("kind"), ""))
    props.setdefault("key", tomb.get("key"))
    return to_node(props)


async def extend_view(stores, view: BeliefView, seeds: Iterable[str], force: bool = False,
                      max_rounds: int = 64) -> tuple[dict[str, dict], Memory, set[str]]:
    """Read what relabelling downstream of ``seeds`` needs beyond ``view`` (see the
    module docstring). Returns (ghost tombstones by key, the log's Memory, the ids of
    every node forgotten now). When nothing the seeds reach supersedes or disputes
    anything (the common case) nothing can come back: the ghosts are only the dead
    forgotten antecedents of the view's nodes and the Memory is empty. The log is
    followed through :class:`ForgottenIndex` (only new entries are read). ``force``:
    relabel as if contested (resolve)."""
    store = stores.store
    expanded: set[str] = set()
    seeds = [k for k in seeds if k in view.nodes]
    contested_any = force
    for _ in range(max_rounds):
        region = downstream(view, seeds)
        fresh = sorted(k for k in _contested(view, region) if k not in expanded)
        if not fresh:
            break
        contested_any = True
        expanded.update(fresh)
        more = await store.affected_view([node_id(view.nodes[k].kind, k) for k in fresh if k in view.nodes])
        _merge(view, more)
    index = forgotten_index(stores.journal)
    if not contested_any:
        # nothing can come back (only attackers were added): the labels can only fall,
        # but a kept node resting on a forgotten one must see that antecedent dead
        ghosts: dict[str, dict] = {}
        add_antecedent_ghosts(view, index, ghosts)
        return ghosts, Memory(), {t["id"] for t in index.gone.values() if t.get("id")}
    tombs = index.gone
    ghosts = {}
    ids = {node_id(n.kind, k): k for k, n in view.nodes.items()}
    by_id = {t["id"]: t for t in tombs.values() if t.get("id")}
    region = downstream(view, seeds)
    wanted = {node_id(view.nodes[k].kind, k) for k in region}
    for _ in range(max_rounds):
        grew = True
        while grew:
            grew = False
            for tid, tomb in by_id.items():
                key = tomb.get("key")
                if key in ghosts or key in view.nodes:
                    continue
                if any(e[2] == DEPENDS_ON and e[0] == tid and e[1] in wanted for e in tomb.get("edges", [])):
                    node = ghost_node(tomb)
                    if node is None:
                        continue
                    ghosts[key] = tomb
                    view.add_node(node)
                    ids[tid] = key
                    wanted.add(tid)
                    grew = True
        # stored nodes resting on those ghosts (their edge went with the ghost; only its tombstone
        # keeps it): they come back with a ghost that comes back, so they and what rests on them
        # are read too, and the ghosts that rest on those, until nothing new is reached
        consumers = sorted({src for t in ghosts.values() for src, dst, rel, _ in t.get("edges", [])
                            if rel == DEPENDS_ON and dst == t.get("id") and src not in ids and src not in by_id})
        # and the hypotheses they support or refute, with their rivals (a superseded hypothesis
        # holds again when a supporter comes back; a rival promoted over it is demoted)
        hypotheses = sorted({dst for t in ghosts.values() for src, dst, rel, _ in t.get("edges", [])
                             if rel in (SUPPORTS, REFUTES) and src == t.get("id") and dst not in ids})
        if not consumers and not hypotheses:
            break
        _merge(view, await store.affected_view(consumers, hypotheses=hypotheses))
        ids.update({node_id(n.kind, k): k for k, n in view.nodes.items()})
        _ghost_edges(view, ghosts, ids)
        wanted |= {node_id(view.nodes[k].kind, k) for k in downstream(view, seeds)}
    # what those ghosts rest on but the view lacks: a node forgotten with them (a ghost too, dead and
    # outside the relabelled region: it keeps its tombstone state) or a stored node outside the view
    missing = {e[1] for t in ghosts.values() for e in t.get("edges", [])
               if e[2] == DEPENDS_ON and e[0] == t.get("id") and e[1] not in ids}
    for tid in sorted(missing):
        tomb = by_id.get(tid)
        node = ghost_node(tomb) if tomb is not None else None
        if node is not None and node.key not in view.nodes:
            ghosts[node.key] = tomb
            view.add_node(node)
            ids[tid] = node.key
    stored = await store.raw_nodes(sorted(missing - set(ids))) if missing - set(ids) else {}
    for tid, props in stored.items():
        node = to_node(props)
        if node is not None and node.key not in view.nodes:
            view.add_node(node)
            ids[tid] = node.key
    _ghost_edges(view, ghosts, ids)
    # every stored node that will be relabelled with all its edges (one read alone, e.g. as
    # a ghost's antecedent, lacks its own justifications), until that adds no dependent
    completed: set[str] = set()
    for _ in range(max_rounds):
        todo = sorted(k for k in downstream(view, seeds) if k not in ghosts and k not in completed)
        if not todo:
            break
        completed.update(todo)
        await store.complete(view, todo)
    add_antecedent_ghosts(view, index, ghosts)
    return ghosts, index.memory.copy(), set(by_id)


def _ghost_edges(view: BeliefView, ghosts: dict[str, dict], ids: dict[str, str]) -> None:
    """The ghosts' tombstone edges whose both ends are in the view (id -> key: ``ids``)."""
    for tomb in ghosts.values():
        for src, dst, rel, props in tomb.get("edges", []):
            if rel == PART_OF or src not in ids or dst not in ids:
                continue
            edge = to_edge(rel, ids[src], ids[dst], props or {})
            if not any(e.kind == edge.kind and e.dst == edge.dst for e in view.out_edges(edge.src)):
                view.add_edge(edge)


def restored_entries(ghosts: dict[str, dict], restored: list[str], view: BeliefView, absent: set[str]) -> list[dict]:
    """add_nodes entries for restored ghosts: their tombstones with the new state,
    epoch and weight; no edge to a node that stays forgotten (``absent``: ids)."""
    result = []
    for key in restored:
        tomb, node = ghosts[key], view.nodes[key]
        edges = [e for e in tomb.get("edges", []) if e[0] not in absent and e[1] not in absent]
        result.append(dict(tomb, state=node.state, epoch=node.epoch, weight=node.weight, edges=edges))
    return result


# ---- policies -------------------------------------------------------------------

def today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


async def policy_context(store, evidence_keys: Iterable[str], question: Optional[str]) -> dict:
    """Raw properties of the contradicted evidence and of their questions (policy, sources)."""
    keys = sorted(set(evidence_keys))
    props = await store.find_keys(keys) if keys else {}
    questions = {p.get("question_key") for p in props.values()} | ({question} if question else set())
    qprops = await store.find_keys(sorted(q for q in questions if q)) if questions else {}
    return {"evidence": props, "questions": qprops}


def sources_of(qprops: Optional[dict]) -> dict[str, float]:
    return {s["id"]: float(s["trust"]) for s in (qprops or {}).get("sources") or [] if isinstance(s, dict)}


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


async def prepare_reconciliation(batch, seeds: list[str]) -> None:
    """Before a revision batch's cascade: extend its view for reinstatement (ghosts,
    Memory) and read the policies and trust that decide its contradictions."""
    stores = batch.stores
    ghosts, memory, forgotten_ids = await extend_view(stores, batch.view, seeds)
    batch.ghosts, batch.memory = ghosts, memory
    keys = {c.key for j in batch.jobs if j.detection for c in j.detection.candidates}
    context = await policy_context(stores.store, keys, None)
    wants_trust = any(r.trust is not None or r.policy == TRUST_RANKED for r in batch.requests) or \
        any((q or {}).get("policy") == TRUST_RANKED for q in context["questions"].values())
    context["registered"] = forgotten_index(stores.journal).registered_sources() if wants_trust else {}
    context["forgotten_ids"] = forgotten_ids
    batch.reconciliation = context


def decide(batch, job) -> tuple[dict[str, Decision], Optional[float]]:
    """Who wins each of ``job``'s verdicts, and the trust its source is registered with."""
    r, context = job.request, batch.reconciliation or {"evidence": {}, "questions": {}, "registered": {}}
    decisions, trust = decisions_for(context, job.verdicts, job.new_key, job.question, r.source, r.asserted_at,
                                     r.trust, r.policy, context.get("registered"))
    if trust is not None:
        context.setdefault("registered", {})[r.source] = trust  # later facts of the batch know it
    return decisions, trust


def decisions_for(context: dict, verdicts: list[tuple[str, str, float]], fact_key: str, question: Optional[str],
                  source: Optional[str], asserted_at: Optional[str], trust: Optional[float],
                  policy: Optional[str], registered: Optional[dict] = None) -> tuple[dict[str, Decision], Optional[float]]:
    """Who wins each verdict, and the trust the new fact's source is recorded with
    (``--trust`` for a source not known yet; None when nothing is to be recorded).
    A source is known when its question lists it or an earlier revision recorded
    it with a trust (``registered``: source id -> trust)."""
    registered = registered or {}
    qprops = context["questions"].get(question or "") or {}
    listed = sources_of(qprops)
    fact_trust = None
    if source is not None and source not in listed and source not in registered and trust is not None:
        fact_trust = trust
    f_trust = listed.get(source) if source in listed else registered.get(source, fact_trust)
    fact = Claim(fact_key, asserted_at, f_trust if f_trust is not None else source_trust({}, None), source)
    result = {}
    for key, _, _ in verdicts:
        props = context["evidence"].get(key) or {}
        eq = context["questions"].get(props.get("question_key") or "") or qprops
        e_listed = sources_of(eq)
        sid = props.get("source_id")
        e_trust = e_listed.get(sid) if sid in e_listed else props.get("trust")
        if e_trust is None:
            e_trust = registered.get(sid) if sid in registered else source_trust({}, None)
        chosen = policy or eq.get("policy") or qprops.get("policy") or DEFAULT_POLICY
        ev = Claim(key, props.get("asserted_at"), float(e_trust), sid)
        result[key] = decide_policy(chosen, ev, fact, today())
    return result, fact_trust


__all__ = ["ALIVE", "Edge", "ForgottenIndex", "add_antecedent_ghosts", "current_tombstones", "forgotten_index", "decide", "decisions_for", "extend_view", "ghost_node", "memory_of",
           "policy_context", "prepare_reconciliation", "registered_sources", "restored_entries", "sources_of", "today"]
