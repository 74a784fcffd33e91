"""Loading an investigation file into the stores (idempotent, never resurrects).

* Nodes that already exist are left exactly as they are (state, weight,
  properties): cognee's ``add_data_points`` would reset them.
* Nodes a revision forgot are not re-added; the result says which and why.
* Edges that already exist are left alone (re-adding would reset their weight).
* New nodes whose justifications are already dead enter ``invalidated``; a non-critical
  dependency already dead halves a new node's confidence (or a stored one's, given the edge).
The whole load is one journalled intent: it lands whole or not at all.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from memory_core.core.beliefs import BeliefView, Edge, Node
from memory_core.core.vocabulary import PART_OF, SUPPORTS, Rule
from memory_core.store.intents import log_changes, node_entry, updates
from memory_core.core.errors import InputError
from memory_core.core.identity import KIND_BY_TYPE
from memory_core.core.investigation import EdgeSpec, Investigation, NodeSpec, loads_json, parse
from memory_core.store.stores import Stores
from memory_core.store import writer
from memory_core.core.identity import node_id
from memory_core.core.keys import normalise_key
from memory_core.core.vocabulary import TEXT_FIELD
from memory_core.core.results import LoadResult
from memory_core.core.revision import plan_settle
from memory_core.core.tms import Memory, reinstate_hypotheses
from memory_core.core.keys import sp_key
from memory_core.store.belief_store import BeliefStore, edge_props, edge_row, to_edge, to_node
from memory_core.store.forgotten import forgotten_index
from memory_core.store.tms_io import ghost_node


def read_source(source: Any) -> tuple[bytes | str, str]:
    """An investigation given as a path, JSON text/bytes or a dict → (data, name for messages)."""
    if isinstance(source, dict):
        try:
            return json.dumps(source, allow_nan=False), "investigation"
        except (TypeError, ValueError) as error:
            raise InputError(f"investigation: not JSON-serialisable: {error}", field="source") from None
    if isinstance(source, bytes):
        return source, "investigation"
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return source, "investigation"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            return path.read_bytes(), str(path)
        except OSError as error:
            raise InputError(f"cannot read {path}: {error.strerror}", field="source") from None
    raise InputError(
        f"investigation: expected a path, JSON text or bytes, or a dict, got {type(source).__name__}",
        field="source",
    )


def peek_keys(data) -> list[str]:
    """Keys an investigation mentions in its question and edges (best effort, before
    validation): the stored ones may be referenced without being defined."""
    try:
        raw = loads_json(data, "investigation")
    except InputError:
        return []
    keys = []
    if isinstance(raw, dict):
        question = raw.get("question")
        if isinstance(question, dict) and isinstance(question.get("key"), str):
            keys.append(question["key"])
        for edge in raw.get("edges", []) if isinstance(raw.get("edges"), list) else []:
            if isinstance(edge, dict):
                keys += [v for v in (edge.get("from"), edge.get("to")) if isinstance(v, str) and v.strip()]
    return list(dict.fromkeys(k.strip() for k in keys if k.strip()))[:10000]


def _a(kind: str) -> str:
    """A node kind with its article: ``a hypothesis``, ``an``... (evidence is a mass noun:
    ``evidence``)."""
    return kind if kind == "evidence" else f"a {kind}"


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def forgotten(journal) -> dict[str, int]:
    """Currently forgotten keys (normalised) → the epoch that forgot them."""
    gone: dict[str, int] = {}
    by_epoch = {}
    for entry in journal.entries():
        by_epoch[entry["epoch"]] = entry
        if entry.get("kind") == "undo":
            undone = by_epoch.get(entry.get("undoes"), {})
            for key in undone.get("forgotten", []):
                gone.pop(normalise_key(key), None)
            for key in undone.get("restored", []):  # an undone reinstatement forgets them again
                gone[normalise_key(key)] = entry["epoch"]
            continue
        for key in entry.get("forgotten", []):
            gone[normalise_key(key)] = entry["epoch"]
        for key in entry.get("restored", []):  # reinstated from their tombstones
            gone.pop(normalise_key(key), None)
    return gone


def forgotten_kinds(journal, keys) -> dict[str, str]:
    """The kinds of currently forgotten keys among ``keys`` (as written), from their
    tombstones in the log: an edge may name a forgotten node; it is then skipped."""
    gone = forgotten(journal)
    wanted = {normalise_key(k): k for k in keys if normalise_key(k) in gone}
    found: dict[str, str] = {}
    if wanted:
        for entry in journal.entries():
            for node in (entry.get("intent") or {}).get("del_nodes", []):
                norm = normalise_key(node.get("key", ""))
                if norm in wanted and node.get("kind"):
                    found[wanted[norm]] = node["kind"]
    return found


async def load(stores: Stores, source: Any) -> LoadResult:
    """Load a whole investigation or a fragment into a stored question (see
    :func:`memory_core.core.investigation.parse`). Lands whole or not at all."""
    data, what = await asyncio.to_thread(read_source, source)  # a file may be large: off the event loop
    mentioned = peek_keys(data)
    referenced = await stores.store.find_keys(mentioned) if mentioned else {}
    known = {k: KIND_BY_TYPE.get(p.get("type", ""), "evidence") for k, p in referenced.items()}
    # forgotten keys named by edges validate (with their kind), then their edges are skipped
    gone = forgotten_kinds(stores.journal, [k for k in mentioned if k not in referenced])
    inv = parse(data, known={**gone, **known}, what=what)
    existing = await stores.store.find_keys([n.key for n in inv.nodes])
    epoch = stores.journal.epoch() + 1
    index = forgotten_index(stores.journal)
    tombs = index.gone  # what a node resting on a forgotten one rests on
    intent, entry = await plan_load(
        stores.store, inv, existing, forgotten(stores.journal), epoch, referenced, tombs, index.memory
    )
    result: LoadResult = {
        "question": inv.question.key,
        "added": entry["added"],
        "edges_added": entry["edges_added"],
        "invalidated": [c["key"] for c in entry["changes"] if c["rule"] == "justification_lost"],
        "notes": entry["notes"],
        "epoch": None,
    }
    if not intent["add_nodes"] and not intent["add_edges"] and not intent["updates"]:
        result["notes"] = result["notes"] + ["nothing new: every node and edge is already stored"]
        return result
    await writer.run(stores.store, stores.journal, intent, entry, stores.hook)
    result["epoch"] = epoch
    return result


def node_props(spec: NodeSpec, question: str) -> dict[str, Any]:
    props = {"key": spec.key, TEXT_FIELD[spec.kind]: spec.text, **spec.fields}
    if spec.kind != "question":
        props["question_key"] = question
    props["name"] = ""
    if spec.kind == "evidence":  # the end it states, kept when a later value ends it earlier
        props["stated_to"] = spec.fields.get("valid_to")
    if spec.kind == "evidence" and spec.fields.get("subject"):
        props["name"] = sp_key(spec.fields["subject"], spec.fields["predicate"])
    return props


def question_extras(inv: Investigation) -> dict[str, Any]:
    """The question node's reconciliation settings: its policy and sources."""
    extras: dict[str, Any] = {}
    if inv.policy is not None:
        extras["policy"] = inv.policy
    if inv.sources:
        extras["sources"] = [dict(s) for s in inv.sources]
    if inv.predicates:
        extras["predicates"] = dict(inv.predicates)
    return extras


async def plan_load(
    store: BeliefStore,
    inv: Investigation,
    existing: dict[str, dict],
    forgotten: dict[str, int],
    epoch: int,
    referenced: dict[str, dict] | None = None,
    tombs: dict[str, dict] | None = None,
    memory: Memory | None = None,
) -> tuple[dict, dict]:
    """``existing``: stored nodes among the file's own keys; ``referenced``: stored nodes
    its edges (and a fragment's question) name without defining them; ``tombs``: the
    tombstones of the forgotten nodes (normalised key -> tombstone); ``memory``: the log's
    (weights before a death, promotions), for a hypothesis new support brings back.

    A node resting (critical ``depends_on``) on a forgotten node enters with the state the
    three-valued labelling gives it, the forgotten node taken as the dead ghost it is
    (``invalidated``, or alive through another justification); the edge cannot be stored (its
    target is gone from both stores), so the log keeps it (``rests_on_forgotten``) beside the
    tombstone: explain and check see it, and a reinstatement that brings the forgotten node
    back brings the edge and its consumer back too. A node defined under a forgotten key is
    refused (exit 2) unless it is that node again (same kind and text: skipped, a note says so)."""
    tombs = tombs or {}
    existing = {**(referenced or {}), **existing}
    qkey = inv.question.key
    notes: list[str] = []
    # conflicts with what is stored
    for spec in inv.nodes:
        props = existing.get(spec.key)
        if props is None:
            continue
        stored = _stored_node(props)
        if stored.kind != spec.kind:
            raise InputError(
                f"key {spec.key!r} is already {_a(stored.kind)} in this data root, not {_a(spec.kind)}"
            )
        if spec.kind != "question" and stored.question != qkey:
            raise InputError(
                f"key {spec.key!r} already belongs to investigation {stored.question!r}, not {qkey!r}"
            )
        if not spec.reference and props.get(TEXT_FIELD[spec.kind]) != spec.text:
            # re-loading adds only what is new: a stored node defined again with other words is a
            # conflicting definition (edges given with it would rest on words the node does not hold)
            stored_text = " ".join(str(props.get(TEXT_FIELD[spec.kind]) or "").split())
            raise InputError(
                f"{spec.kind} {spec.key!r} is stored with other text ({_short(stored_text)!r}); loading adds "
                "only what is new and never rewrites a stored node: give its stored text, or leave it out "
                "and name it in edges only, or give the new claim a new key; nothing was written"
            )
        if spec.kind == "question" and any(props.get(k) != v for k, v in question_extras(inv).items()):
            notes.append(
                f"{spec.key}: sources/policy/predicates differ from the stored question's; the stored ones are kept"
            )
    skipped = {k for k in (n.key for n in inv.nodes) if normalise_key(k) in forgotten and k not in existing}
    for spec in inv.nodes:
        if spec.key in skipped:
            reserved(spec, tombs.get(normalise_key(spec.key)), forgotten[normalise_key(spec.key)])
    # edges may also name forgotten nodes the file does not define (references)
    defined = {n.key for n in inv.nodes} | set(existing)
    for link in inv.edges:
        for end in (link.src, link.dst):
            if end not in defined and normalise_key(end) in forgotten:
                skipped.add(end)
    defined_here = {n.key for n in inv.nodes}
    for key in sorted(k for k in skipped if k in defined_here):
        notes.append(
            f"{key}: not re-added: forgotten by the revision of epoch {forgotten[normalise_key(key)]}"
        )
    new_specs = [s for s in inv.nodes if s.key not in existing and s.key not in skipped]
    kinds = dict(inv.kinds())
    kinds.update({k: _stored_node(p).kind for k, p in existing.items()})
    # edges: skip those touching forgotten nodes and those already stored
    touching_ids = [node_id(kinds[k], k) for k in existing]
    stored_edges = (
        {(s, d, r): p for s, d, r, p in await store.all_edges_of(touching_ids)} if touching_ids else {}
    )
    new_edges: list[tuple[EdgeSpec, tuple[str, str, str, dict]]] = []  # (spec, row)
    ghost_edges: list[
        tuple[EdgeSpec, dict]
    ] = []  # (spec, tombstone) of critical depends_on edges onto a forgotten node
    for link in inv.edges:
        critical = link.type == "depends_on" and link.props.get("critical", True)
        if (
            critical
            and link.dst in skipped
            and link.src not in skipped
            and tombs.get(normalise_key(link.dst))
        ):
            tomb = tombs[normalise_key(link.dst)]
            kinds.setdefault(link.dst, tomb.get("kind", "evidence"))
            ghost_edges.append((link, tomb))
            continue
        if link.src in skipped or link.dst in skipped:
            ends = ", ".join(
                f"{k} by the revision of epoch {forgotten[normalise_key(k)]}"
                for k in (link.src, link.dst)
                if k in skipped
            )
            notes.append(
                f"edge {link.type} {link.src} -> {link.dst}: not added: an endpoint was forgotten ({ends})"
            )
            continue
        row = edge_row(Edge(link.type, link.src, link.dst, **_edge_args(link)), kinds)
        if row[:3] not in stored_edges:
            new_edges.append((link, row))
        elif link.type == "depends_on":
            stored_edge = to_edge(link.type, link.src, link.dst, stored_edges[row[:3]] or {})
            if set(stored_edge.memberships) != set(
                Edge(link.type, link.src, link.dst, **_edge_args(link)).memberships
            ):
                notes.append(
                    f"edge depends_on {link.src} -> {link.dst}: already stored with group(s) "
                    f"{', '.join(str(g) for g in stored_edge.memberships)}; kept as stored"
                )
    # evaluate new nodes against what is stored (a justification may already be dead); a stored
    # hypothesis gaining a supporter is read with its rivals (new support may bring it back)
    supported = sorted(
        {node_id("hypothesis", s.dst) for s, _ in new_edges if s.type == SUPPORTS and s.dst in existing}
    )
    view = (
        await store.affected_view(
            [node_id(kinds[k], k) for k in existing if kinds[k] != "question"], hypotheses=supported
        )
        if existing
        else BeliefView()
    )
    original = {}
    for spec in new_specs:
        view.add_node(
            Node(
                spec.key,
                spec.kind,
                question=qkey if spec.kind != "question" else spec.key,
                confidence=spec.fields.get("confidence"),
                prior=spec.fields.get("prior"),
                text=spec.text or "",  # a reference (no text) names a stored node: never a new one
            )
        )
    for link, _ in new_edges:
        if link.src in view.nodes and link.dst in view.nodes:
            view.add_edge(Edge(link.type, link.src, link.dst, **_edge_args(link)))
    # a forgotten antecedent takes part as the dead ghost it is (with its edges from the log)
    ghosts = set()
    for link, tomb in ghost_edges:
        node = ghost_node(tomb)
        if node is None:
            continue
        if node.key not in view.nodes:
            view.add_node(node)
            ghosts.add(node.key)
        if link.src in view.nodes:
            view.add_edge(Edge(link.type, link.src, node.key, **_edge_args(link)))
    for key, node in view.nodes.items():
        original[key] = Node(**vars(node))
    touched = [s.key for s in new_specs] + [s.src for s, _ in new_edges if s.type == "depends_on"]
    touched += [s.src for s, _ in ghost_edges]
    touched += [s.src for s, _ in new_edges if s.type == "supersedes"]  # its target is relabelled
    # non-critical dependencies new with this load: one already dead halves the confidence (rule 4)
    gained: dict[str, set[str]] = {}
    for link, _ in new_edges:
        if link.type == "depends_on" and not link.props.get("critical", True) and link.src in view.nodes:
            gained.setdefault(link.src, set()).add(link.dst)
    plan = plan_settle(view, [k for k in dict.fromkeys(touched) if k in view.nodes], epoch, gained)
    for change in plan.changes:
        if change.rule == Rule.NONCRITICAL_DECAY and change.key in gained:
            notes.append(
                f"{change.key}: confidence {change.after['confidence']} (x0.5 per dead non-critical "
                f"dependency): {', '.join(change.cause)} {'is' if len(change.cause) == 1 else 'are'} dead"
            )
    # a superseded hypothesis that gains alive support holds again, as when its support returns
    supporters = sorted(
        {
            s.src
            for s, _ in new_edges
            if s.type == SUPPORTS and s.src in view.nodes and view.nodes[s.src].alive
        }
    )
    if supporters:
        for h in reinstate_hypotheses(view, plan, supporters, memory):
            notes.append(
                f"{h}: alive again: new alive supporting evidence ({', '.join(view.alive_supporters(h))})"
            )
    new_keys = {s.key for s in new_specs}
    add_nodes = []
    for spec in new_specs:
        node = view.nodes[spec.key]
        own: list[tuple[str, str, str, dict]] = (
            []
            if spec.kind == "question"
            else [(node_id(spec.kind, spec.key), node_id("question", qkey), PART_OF, {})]
        )
        props = node_props(spec, qkey)
        if spec.kind == "question":
            props.update(question_extras(inv))
        if node.confidence != spec.fields.get("confidence"):  # weakened by a dead non-critical dependency
            props["confidence"] = node.confidence
        add_nodes.append(node_entry(spec.kind, spec.key, props, node.state, epoch, node.weight, own))
    intent = {
        "epoch": epoch,
        "add_nodes": add_nodes,
        "add_edges": [list(row) for _, row in new_edges],
        "updates": updates(view, original, plan, skip=new_keys | ghosts),
    }
    rests = []
    for link, tomb in ghost_edges:
        if link.src not in view.nodes:
            continue
        state = view.nodes[link.src].state
        rests.append(
            [
                node_id(kinds[link.src], link.src),
                tomb["id"],
                "depends_on",
                edge_props(Edge(link.type, link.src, link.dst, **_edge_args(link))),
            ]
        )
        notes.append(
            f"edge depends_on {link.src} -> {link.dst}: {link.dst} was forgotten by the revision of epoch "
            f"{forgotten[normalise_key(link.dst)]} (dead): {link.src} rests on it and is {state}; the edge "
            "is kept in the revision log (not in the stores), so it comes back if that node is reinstated"
        )
    entry = {
        "epoch": epoch,
        "kind": "load",
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "question": qkey,
        "added": [s.key for s in new_specs],
        "edges_added": [f"{s.type} {s.src} -> {s.dst}" for s, _ in new_edges],
        "changes": log_changes(plan),
        "notes": notes,
        "intent": intent,
    }
    if rests:
        entry["rests_on_forgotten"] = rests
    return intent, entry


def _stored_node(props: dict) -> Node:
    """The node of stored ``props`` (find_keys reads nodes of FALSIFY's kinds only)."""
    node = to_node(props)
    if node is None:
        raise LookupError(f"stored node {props.get('key')!r} has no FALSIFY type ({props.get('type')!r})")
    return node


def reserved(spec: NodeSpec, tomb: dict | None, epoch: int) -> None:
    """A file's node under a forgotten key: that node again is skipped (a re-load); another
    node would take the key of one a reinstatement may bring back: refused."""
    if tomb is None or spec.reference:
        return
    props = tomb.get("props") or {}
    same = tomb.get("kind") == spec.kind and " ".join(
        str(props.get(TEXT_FIELD[spec.kind], "")).split()
    ) == " ".join((spec.text or "").split())
    if not same:
        raise InputError(
            f"key {spec.key!r} is reserved: it names a {tomb.get('kind')} forgotten by the revision of "
            f"epoch {epoch} (kept in the revision log; explain {spec.key} says why); a forgotten key is "
            "never given to another node; choose another key"
        )


def _edge_args(spec: EdgeSpec) -> dict[str, Any]:
    p = spec.props
    return {
        "critical": p.get("critical", True),
        "group": p.get("group"),
        "weight": p.get("weight", 1.0),
        "confidence": p.get("confidence"),
        "groups": tuple(p["groups"]) if p.get("groups") else None,
    }
