"""Read models: ``status`` (every node and edge, in keys) and the viewer snapshot."""

from __future__ import annotations

from typing import Any

from memory_core.core.cardinality import stored_predicates
from memory_core.core.vocabulary import BELIEF_EDGES
from memory_core.core.beliefs import Node
from memory_core.core.why import why_index
from memory_core.store import off_loop
from memory_core.store.belief_store import BeliefStore, to_node

KIND_ORDER = {"question": 0, "hypothesis": 1, "evidence": 2, "conclusion": 3}


def node_row(node: Node, props: dict) -> dict[str, Any]:
    """Status's row of ``node``, read from its stored ``props``."""
    row: dict[str, Any] = {
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
        for name in (
            "source_id",
            "quote",
            "asserted_at",
            "subject",
            "predicate",
            "object",
            "valid_from",
            "valid_to",
        ):
            if props.get(name) is not None:
                row[name] = props[name]
    return row


async def status(store: BeliefStore) -> dict:
    """Every node and edge, in keys. The stores are read on the caller's event loop (cognee's
    engines are bound to it; large answers are decoded off it: :mod:`memory_core.store.off_loop`);
    the rows are built, joined and sorted in a worker thread."""
    investigations = [await store.investigation(question) for question in await store.question_keys()]
    nodes, edges, every = await off_loop.run(_rows, investigations)
    cross = await store.all_edges_of(list(every)) if every else []
    return await off_loop.run(_joined, nodes, edges, every, cross)


def _rows(investigations: list) -> tuple[list[dict], list[dict], dict[str, str]]:
    """Each investigation's node rows and the belief edges among its nodes; id -> key of all."""
    nodes, edges = [], []
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


def _joined(nodes: list[dict], edges: list[dict], every: dict[str, str], cross: list) -> dict:
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


def _snapshot(data: dict, journal) -> dict:
    why = why_index(journal.entries())
    for node in data["nodes"]:
        node["sources"] = [node["source_id"]] if node.get("source_id") else []
        node["confidence"] = node.get("confidence")
        node["why"] = why.get(node["key"])
    rivals: dict[str, set] = {}  # who each node is in a dispute with (the viewer names them)
    for edge in data["edges"]:
        if edge["type"] == "disputes":
            rivals.setdefault(edge["from"], set()).add(edge["to"])
            rivals.setdefault(edge["to"], set()).add(edge["from"])
    for node in data["nodes"]:
        if node["key"] in rivals and node.get("state") == "disputed":
            node["rivals"] = sorted(rivals[node["key"]])
    return {"nodes": data["nodes"], "edges": data["edges"], "epoch": journal.epoch()}
