"""Turn a plan into a journal intent (batches with before/after images) and a log entry."""

from __future__ import annotations

from typing import Optional

from memory_core.core.beliefs import BeliefView, Node
from memory_core.core.identity import node_id
from memory_core.core.plan import Plan
from memory_core.core.keys import sp_key
from memory_core.store.belief_store import BeliefStore


def node_entry(kind: str, key: str, props: dict, state: str, epoch: int, weight: float, edges: list) -> dict:
    return {
        "id": node_id(kind, key),
        "kind": kind,
        "key": key,
        "props": props,
        "state": state,
        "epoch": epoch,
        "weight": weight,
        "edges": [list(e) for e in edges],
    }


def evidence_props(
    key: str,
    claim: str,
    question: str,
    source_id: Optional[str] = None,
    asserted_at: Optional[str] = None,
    triple: Optional[tuple] = None,
    **extra,
) -> dict:
    props = {
        "key": key,
        "claim": claim,
        "question_key": question,
        "source_id": source_id,
        "asserted_at": asserted_at,
        "name": "",
    }
    if triple:
        props.update(
            subject=triple[0], predicate=triple[1], object=triple[2], name=sp_key(triple[0], triple[1])
        )
    props.update({k: v for k, v in extra.items() if v is not None})
    if "stated_to" in extra:  # an open stated end is said too (absent: stored before it was kept)
        props["stated_to"] = extra["stated_to"]
    return props


def node_update(key: str, before: Node, after: Node) -> dict:
    """One intent update: a node's state, epoch, weight and confidence before and after the
    revision (its valid_to too when valid time ended, so undo restores it exactly)."""
    images = [
        {"state": n.state, "epoch": n.epoch, "weight": n.weight, "confidence": n.confidence}
        for n in (before, after)
    ]
    if before.valid_to != after.valid_to:
        images[0]["valid_to"], images[1]["valid_to"] = before.valid_to, after.valid_to
    return {"id": node_id(after.kind, key), "key": key, "before": images[0], "after": images[1]}


def updates(view: BeliefView, original: dict[str, Node], plan: Plan, skip: set[str]) -> list[dict]:
    """The updates of every node ``plan`` changed that was stored before it (not in ``skip``)."""
    return [
        node_update(key, original[key], view.nodes[key])
        for key in dict.fromkeys(c.key for c in plan.changes)
        if key not in skip and key in original
    ]


async def tombstones(store: BeliefStore, view, keys: list[str]) -> list[dict]:
    """Everything needed to restore forgotten nodes: properties, state, edges. ``view``:
    a BeliefView or a mapping key -> Node holding the nodes' final states."""
    if not keys:
        return []
    nodes = view.nodes if isinstance(view, BeliefView) else view
    ids = {node_id(nodes[k].kind, k): k for k in keys}
    raw = await store.raw_nodes(ids)
    edges = await store.all_edges_of(list(ids))
    touching: dict[str, list] = {}
    for edge in edges:
        touching.setdefault(edge[0], []).append(edge)
        if edge[1] != edge[0]:
            touching.setdefault(edge[1], []).append(edge)
    result = []
    for i, key in ids.items():
        node = nodes[key]
        mine = touching.get(i, [])
        result.append(node_entry(node.kind, key, raw.get(i, {}), node.state, node.epoch, node.weight, mine))
    return result


def log_changes(plan: Plan) -> list[dict]:
    return [dict(c.as_dict(), epoch=plan.epoch) for c in plan.changes]
