"""What the three-valued labelling (:mod:`memory_core.core.tms`) reads beyond the
affected view, and how its results are written. Every function takes the stores and
plain values and returns values: nothing here knows the revision Tasks' objects.

* :func:`extend_view`: when a node whose label may change supersedes or disputes
  another, the other side and *its* dependents are read too (their labels can
  flip: reinstatement, a dispute ending), and so are the forgotten nodes that
  rested on them: *ghosts*, rebuilt from their tombstones in the revision log
  (properties, state, weight, epoch, edges), with the stored nodes their
  ``supersedes`` and ``disputes`` edges join (those edges come back with a ghost
  that comes back). The log is read only then.
  Always: the forgotten nodes a node of the view still rests on (forgetting a
  node deletes its edges, so a kept consumer's justification through it would
  look whole) come back as dead ghosts, from the forgotten index
  (:mod:`memory_core.store.forgotten`), which follows the log incrementally
  instead of re-reading it. The result is a :class:`Ghosts`: the ghosts'
  tombstones, the log's :class:`Memory` (weights before a death, promotions made
  because of it, so what comes back gets them back) and the ids forgotten now.
* :func:`reconciliation_inputs`: that, plus what decides a revision's
  contradictions (:class:`memory_core.core.policy.PolicyInputs`: the contradicted
  evidence's dates, sources and trust, their questions' policies and sources) and
  the sources earlier revisions registered with ``--trust``: one
  :class:`Reconciliation`.
* :func:`restored_entries`: the add_nodes entries that bring reinstated ghosts
  back into both stores (re-embedded: found again by vector search); :func:`rests_on_forgotten`:
  their edges to nodes that stay forgotten, which the log keeps instead.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from memory_core.core.beliefs import BeliefView, Node
from memory_core.core.identity import node_id
from memory_core.core.policy import PolicyInputs
from memory_core.core.tms import Memory, downstream
from memory_core.core.vocabulary import DEPENDS_ON, DISPUTES, PART_OF, REFUTES, SUPERSEDES, SUPPORTS
from memory_core.store import off_loop, writer
from memory_core.store.belief_store import BeliefStore, ids_in, to_edge, to_node, view_ids
from memory_core.store.forgotten import ForgottenIndex, forgotten_index
from memory_core.store.stores import Stores

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


async def merged(view: BeliefView, other: BeliefView) -> None:
    """:func:`_merge`, in a worker thread when the views are large (the revision's own view,
    which nothing else touches while the revision awaits it)."""
    await off_loop.run(_merge, view, other, size=len(view.edges) + len(other.nodes))


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


async def forgotten_off_loop(journal) -> ForgottenIndex:
    """The forgotten index of ``journal`` caught up with its log in a worker thread (the first
    time, or after a large batch, that is reading megabytes of JSON) and ready to be read from
    another thread. The index is shared by every operation on the journal, so the hop runs to its
    end even when the caller is cancelled (:func:`memory_core.store.writer.uncancellable`): no
    later operation sees it half fed."""

    def ready() -> ForgottenIndex:
        index = forgotten_index(journal)
        index.antecedents_of(())  # its consumer map built now, not by a reader
        return index

    return await writer.uncancellable(lambda: asyncio.to_thread(ready))


def add_antecedent_ghosts(
    view: BeliefView, index: ForgottenIndex, ghosts: dict[str, dict], ids: Optional[dict[str, str]] = None
) -> None:
    """Forgotten nodes that a node of ``view`` still rests on. Forgetting a node deletes
    its edges, so a kept (dead) consumer's justification through it would look whole
    without it: each comes back as a dead ghost with only its edges from the view's
    nodes (a dead premise: it cannot come back in this relabelling). ``ids``: the view's node
    id -> key (:func:`memory_core.store.belief_store.view_ids`), when the caller has it."""
    ids = dict(ids) if ids is not None else ids_in(view)
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


def ghost_node(tomb: dict) -> Optional[Node]:
    props = dict(
        tomb.get("props") or {},
        truth_alignment=[tomb["state"]],
        truth_epoch=tomb.get("epoch", 0),
        feedback_weight=tomb.get("weight", 0.0),
    )
    props.setdefault(
        "type",
        {
            "evidence": "Evidence",
            "conclusion": "Conclusion",
            "hypothesis": "Hypothesis",
            "question": "InvestigationQuestion",
        }.get(tomb.get("kind", ""), ""),
    )
    props.setdefault("key", tomb.get("key"))
    return to_node(props)


@dataclass(frozen=True)
class Ghosts:
    """What :func:`extend_view` read beyond the stored view: the forgotten nodes it added
    to the view (key -> tombstone), the log's Memory (a copy: the caller's to extend) and
    the ids of every node forgotten now."""

    tombstones: dict[str, dict] = field(default_factory=dict)
    memory: Memory = field(default_factory=Memory)
    forgotten_ids: frozenset[str] = frozenset()
    from_log: bool = False  # ``memory`` is the log's (False: nothing could come back, none was read)


async def extend_view(
    stores: Stores, view: BeliefView, seeds: Iterable[str], force: bool = False, max_rounds: int = 64
) -> Ghosts:
    """Read what relabelling downstream of ``seeds`` needs beyond ``view`` into it (see
    the module docstring), and return the :class:`Ghosts` it added. When nothing the seeds reach supersedes or disputes
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
        await merged(view, more)
    index = await forgotten_off_loop(stores.journal)
    if not contested_any:
        # nothing can come back (only attackers were added): the labels can only fall,
        # but a kept node resting on a forgotten one must see that antecedent dead
        ghosts: dict[str, dict] = {}
        add_antecedent_ghosts(view, index, ghosts, await view_ids(view))
        return Ghosts(ghosts, Memory(), frozenset(t["id"] for t in index.gone.values() if t.get("id")))
    tombs = index.gone
    ghosts = {}
    ids = await view_ids(view)
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
                    ghosts[node.key] = tomb
                    view.add_node(node)
                    ids[tid] = node.key
                    wanted.add(tid)
                    grew = True
        # stored nodes resting on those ghosts (their edge went with the ghost; only its tombstone
        # keeps it): they come back with a ghost that comes back, so they and what rests on them
        # are read too, and the ghosts that rest on those, until nothing new is reached
        consumers = sorted(
            {
                src
                for t in ghosts.values()
                for src, dst, rel, _ in t.get("edges", [])
                if rel == DEPENDS_ON and dst == t.get("id") and src not in ids and src not in by_id
            }
            # and the stored nodes a ghost attacks or is attacked by (a side of its dispute, what
            # it superseded or what superseded it): its attack edges come back with it, so they
            # must be in the labelling that brings it back, and relabelled with it (a rival alive
            # since the ghost died is disputed again)
            | {
                other
                for t in ghosts.values()
                for src, dst, rel, _ in t.get("edges", [])
                if rel in TMS_EDGES and t.get("id") in (src, dst)
                for other in [dst if src == t.get("id") else src]
                if other not in ids and other not in by_id
            }
        )
        # and the hypotheses they support or refute, with their rivals (a superseded hypothesis
        # holds again when a supporter comes back; a rival promoted over it is demoted)
        hypotheses = sorted(
            {
                dst
                for t in ghosts.values()
                for src, dst, rel, _ in t.get("edges", [])
                if rel in (SUPPORTS, REFUTES) and src == t.get("id") and dst not in ids
            }
        )
        if not consumers and not hypotheses:
            break
        await merged(view, await store.affected_view(consumers, hypotheses=hypotheses))
        ids.update(await view_ids(view))
        _ghost_edges(view, ghosts, ids)
        wanted |= {node_id(view.nodes[k].kind, k) for k in downstream(view, seeds)}
    # what those ghosts rest on but the view lacks: a node forgotten with them (a ghost too, dead and
    # outside the relabelled region: it keeps its tombstone state) or a stored node outside the view
    missing = {
        e[1]
        for t in ghosts.values()
        for e in t.get("edges", [])
        if e[2] == DEPENDS_ON and e[0] == t.get("id") and e[1] not in ids
    }
    for tid in sorted(t for t in missing if t in by_id):
        tomb = by_id[tid]
        node = ghost_node(tomb)
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
    add_antecedent_ghosts(view, index, ghosts, await view_ids(view))
    return Ghosts(ghosts, index.memory.copy(), frozenset(by_id), from_log=True)


def _ghost_edges(view: BeliefView, ghosts: dict[str, dict], ids: dict[str, str]) -> None:
    """The ghosts' tombstone edges whose both ends are in the view (id -> key: ``ids``)."""
    for tomb in ghosts.values():
        for src, dst, rel, props in tomb.get("edges", []):
            if rel == PART_OF or src not in ids or dst not in ids:
                continue
            edge = to_edge(rel, ids[src], ids[dst], props or {})
            if not any(e.kind == edge.kind and e.dst == edge.dst for e in view.out_edges(edge.src)):
                view.add_edge(edge)


def restored_entries(
    ghosts: dict[str, dict], restored: list[str], view: BeliefView, absent: set[str]
) -> list[dict]:
    """add_nodes entries for restored ghosts: their tombstones with the new state,
    epoch and weight; no edge to a node that stays forgotten (``absent``: ids)."""
    result = []
    for key in restored:
        tomb, node = ghosts[key], view.nodes[key]
        edges = [e for e in tomb.get("edges", []) if e[0] not in absent and e[1] not in absent]
        # the node as the rules bring it back: its state, epoch, weight and confidence now (a
        # conclusion's confidence follows its non-critical dependencies alive now, not the
        # tombstone's, written when it was forgotten)
        props = dict(tomb.get("props") or {})
        if node.confidence is not None or "confidence" in props:
            props["confidence"] = node.confidence
        result.append(
            dict(tomb, props=props, state=node.state, epoch=node.epoch, weight=node.weight, edges=edges)
        )
    return result


def rests_on_forgotten(ghosts: dict[str, dict], restored: list[str], absent: set[str]) -> list[list]:
    """The depends_on edges of restored ghosts to nodes that stay forgotten (``absent``: ids),
    for the log's ``rests_on_forgotten``. They cannot be stored (their targets are not), and a
    node forgotten after the restored one has no such edge in its own tombstone (the restored
    node's edges were gone by then): kept in the log, the forgotten index joins each to its
    target's tombstone, so the restored node is still seen resting on that dead node."""
    rows = []
    for key in restored:
        tomb = ghosts[key]
        rows += [
            list(e)
            for e in tomb.get("edges", [])
            if e[2] == DEPENDS_ON and e[0] == tomb.get("id") and e[1] in absent
        ]
    return rows


async def read_policy_inputs(store: BeliefStore, evidence_keys: Iterable[str]) -> PolicyInputs:
    """The stored properties of the contradicted evidence and of their questions (policy, sources)."""
    keys = sorted(set(evidence_keys))
    props = await store.find_keys(keys) if keys else {}
    questions = sorted({q for q in (p.get("question_key") for p in props.values()) if q})
    return PolicyInputs(props, await store.find_keys(questions) if questions else {})


@dataclass(frozen=True)
class Reconciliation:
    """What a revision's cascade reads beyond its view, before it starts: the ghosts
    :func:`extend_view` added (reinstatement), what decides its contradictions, and the
    sources earlier revisions registered with ``--trust`` (read only when a trust matters)."""

    ghosts: Ghosts = field(default_factory=Ghosts)
    policy: PolicyInputs = field(default_factory=PolicyInputs)
    registered: Mapping[str, float] = field(default_factory=dict)


async def reconciliation_inputs(
    stores: Stores, view: BeliefView, seeds: list[str], contradicted: Iterable[str], trust_asked: bool
) -> Reconciliation:
    """Extend ``view`` for reinstatement downstream of ``seeds`` (:func:`extend_view`) and
    read the policies and trust that decide contradictions of the evidence keys
    ``contradicted``; ``trust_asked``: the caller gave a trust or asked for ``trust_ranked``
    (the registered sources are read then, or when a question read ranks by trust)."""
    ghosts = await extend_view(stores, view, seeds)
    policy = await read_policy_inputs(stores.store, contradicted)
    wants_trust = trust_asked or policy.ranks_by_trust()
    registered = forgotten_index(stores.journal).registered_sources() if wants_trust else {}
    return Reconciliation(ghosts, policy, registered)


__all__ = [
    "Ghosts",
    "Reconciliation",
    "add_antecedent_ghosts",
    "extend_view",
    "forgotten_off_loop",
    "ghost_node",
    "read_policy_inputs",
    "reconciliation_inputs",
    "restored_entries",
    "rests_on_forgotten",
]
