"""Read models: ``status`` (every node and edge, in keys) and the viewer snapshot."""

from __future__ import annotations

from typing import Any, Literal, Optional

from memory_core.core.cardinality import stored_predicates
from memory_core.core.keys import normalise_key
from memory_core.core.vocabulary import BELIEF_EDGES, DEPENDS_ON, DISPUTED, DISPUTES, SUPERSEDES
from memory_core.core.beliefs import Node
from memory_core.core.results import StatusNode, StatusResult
from memory_core.core.why import why_index
from memory_core.store import off_loop
from memory_core.store.belief_store import BeliefStore, to_node

KIND_ORDER = {"question": 0, "hypothesis": 1, "evidence": 2, "conclusion": 3}
# an evidence row's stored properties, each when it is set
EVIDENCE_FIELDS: tuple[
    Literal["source_id", "quote", "asserted_at", "subject", "predicate", "object", "valid_from", "valid_to"],
    ...,
] = ("source_id", "quote", "asserted_at", "subject", "predicate", "object", "valid_from", "valid_to")


class SnapshotNode(StatusNode, total=False):
    """A node of the viewer's graph: its status row, its sources and the reason for its state."""

    sources: list[str]
    why: Optional[str]
    rivals: list[str]  # a disputed node: who it is in a dispute with


def node_row(node: Node, props: dict) -> StatusNode:
    """Status's row of ``node``, read from its stored ``props``."""
    row: StatusNode = {
        "key": node.key,
        "type": node.kind,
        "state": node.state,
        "feedback_weight": round(node.weight, 6),
        "epoch": node.epoch,
        "text": node.text,
        "question": node.question,
    }
    if node.kind == "conclusion":
        row["confidence"] = node.confidence
    if node.kind == "hypothesis" and node.prior is not None:
        row["prior"] = node.prior
    if node.kind == "question" and stored_predicates(props.get("predicates")):
        row["predicates"] = stored_predicates(
            props.get("predicates")
        )  # undeclared predicates are single-valued
    if node.kind == "evidence":
        for name in EVIDENCE_FIELDS:
            if props.get(name) is not None:
                row[name] = props[name]
    return row


async def status(store: BeliefStore) -> StatusResult:
    """Every node and edge, in keys. The stores are read on the caller's event loop (cognee's
    engines are bound to it; large answers are decoded off it: :mod:`memory_core.store.off_loop`);
    the rows are built, joined and sorted in a worker thread."""
    investigations = [await store.investigation(question) for question in await store.question_keys()]
    nodes, edges, every = await off_loop.run(_rows, investigations)
    cross = await store.all_edges_of(list(every)) if every else []
    return await off_loop.run(_joined, nodes, edges, every, cross)


def _rows(investigations: list) -> tuple[list[StatusNode], list[dict[str, Any]], dict[str, str]]:
    """Each investigation's node rows and the belief edges among its nodes; id -> key of all."""
    nodes: list[StatusNode] = []
    edges: list[dict[str, Any]] = []
    every: dict[str, str] = {}
    for raw_nodes, raw_edges in investigations:
        keys = {}
        for props in raw_nodes:
            node = to_node(props)
            if node is not None:  # a belief node (a known type, with its key)
                keys[props["id"]] = props["key"]
                nodes.append(node_row(node, props))
        every.update(keys)
        for src, dst, rel, props in raw_edges:
            if rel in BELIEF_EDGES and src in keys and dst in keys:
                edges.append({"type": rel, "from": keys[src], "to": keys[dst], **(props or {})})
    return nodes, edges, every


def _joined(
    nodes: list[StatusNode], edges: list[dict[str, Any]], every: dict[str, str], cross: list
) -> StatusResult:
    """The edges between investigations added (a file's edge may name another investigation's
    node), everything sorted."""
    seen = {(e["type"], e["from"], e["to"]) for e in edges}
    for src, dst, rel, props in cross:
        if (
            rel in BELIEF_EDGES
            and src in every
            and dst in every
            and (rel, every[src], every[dst]) not in seen
        ):
            seen.add((rel, every[src], every[dst]))
            edges.append({"type": rel, "from": every[src], "to": every[dst], **(props or {})})
    nodes.sort(key=lambda n: (n["question"] or "", KIND_ORDER[n["type"]], n["key"]))
    edges.sort(key=lambda e: (e["type"], e["from"], e["to"]))
    return {"nodes": nodes, "edges": edges}


async def snapshot(stores) -> dict:
    """The viewer's graph: status plus sources and the reason for each state (the revision log
    read and the rows completed in a worker thread)."""
    data = await status(stores.store)
    return await off_loop.run(_snapshot, data, stores.journal)


def _related(edges: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Each node's antecedents (its critical ``depends_on`` targets) and attackers (who
    ``supersedes`` it, its rivals in a ``disputes`` edge) in the graph shown, by normalised key:
    what ``explain`` reads of the node's neighbourhood to say why it became disputed."""
    related: dict[str, set[str]] = {}
    for edge in edges:
        kind, src, dst = edge["type"], edge["from"], edge["to"]
        if kind == DEPENDS_ON and edge.get("critical", True):
            related.setdefault(normalise_key(src), set()).add(dst)
        elif kind == SUPERSEDES:
            related.setdefault(normalise_key(dst), set()).add(src)
        elif kind == DISPUTES:
            related.setdefault(normalise_key(src), set()).add(dst)
            related.setdefault(normalise_key(dst), set()).add(src)
    return related


def _snapshot(data: StatusResult, journal) -> dict:
    why = why_index(journal.entries(), _related(data["edges"]))
    nodes: list[SnapshotNode] = [
        {
            **node,
            "sources": [node["source_id"]] if node.get("source_id") else [],
            "confidence": node.get("confidence"),
            "why": why.get(node["key"]),
        }
        for node in data["nodes"]
    ]
    # who each disputed node is in a dispute with now (the viewer names them): the other side of
    # a disputes edge counts while it is disputed too; a side dead since (its support failed: the
    # edge stays, to bring the dispute back with it) no longer does, as explain's why_dead lists it
    # among the past attackers
    state = {row["key"]: row.get("state") for row in nodes}
    rivals: dict[str, set] = {}
    for edge in data["edges"]:
        if edge["type"] == "disputes":
            for side, other in ((edge["from"], edge["to"]), (edge["to"], edge["from"])):
                if state.get(other) == DISPUTED:
                    rivals.setdefault(side, set()).add(other)
    for row in nodes:
        if row["key"] in rivals and row.get("state") == DISPUTED:
            row["rivals"] = sorted(rivals[row["key"]])
    return {"nodes": nodes, "edges": data["edges"], "epoch": journal.epoch()}
