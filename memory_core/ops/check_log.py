"""``check``'s own oracles: well-foundedness computed independently of the
cascade, and the forget rules verified against the revision log.

* :func:`well_founded`: the alive nodes with a well-founded justification, by
  forward chaining from the premises with a counter per justification (the
  classic JTMS propagation), built from the raw ``depends_on`` edges (``group``
  and ``groups``) -- it shares no code with :mod:`memory_core.core.cascade` or
  :meth:`BeliefView.justifications`, so a bug there is not a bug here.
* :func:`replay`: the revision log's intents applied in order (loads, revisions,
  undos, repairs: every write is logged with its intent) give the nodes that
  should exist now, with their last image (properties, state, epoch, weight,
  edges), and the tombstone of every node deleted since.
* :func:`forget_problems`:
  - a node the log says exists is missing from the graph (deleted behind
    FALSIFY's back), above all when an alive node supersedes or consumes it;
  - a node the log shows forgotten while a node alive now, and unchanged since,
    supersedes or consumes it (its tombstone's edges): the forget rules (b)/(c)
    were broken (a consumer that came back later through another justification
    leaves the dead node forgotten);
  - a stored refuted/invalidated node nothing alive needs, although a revision
    after it became such an orphan changed it or one of its consumers or
    superseders (so that revision's forget rule should have removed it).
  The missing nodes are restored by ``check --repair`` (:func:`restore_entries`).

Everything here is pure (dicts in, dicts out); :mod:`memory_core.ops.check` reads
the stores.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Iterable, NotRequired, Optional, TypedDict

from memory_core.core.beliefs import Edge
from memory_core.core.vocabulary import ALIVE, DEAD, DEPENDS_ON, INVALIDATED, REFUTED, SUPERSEDES, SUPPORTS

REVISION_KINDS = ("revise", "resolve")


class StoredNode(TypedDict):
    """What the forget rules read of a stored node (:func:`forget_problems`)."""

    key: str
    state: str
    epoch: int
    historical: NotRequired[bool]  # superseded in time (core.tms.historical_node)


def well_founded(states: dict[str, str], edges: Iterable[Edge]) -> set[str]:
    """Alive nodes with a well-founded justification. ``states``: key -> state;
    ``edges``: objects with ``kind, src, dst, critical, group, groups``. A node
    without critical ``depends_on`` edges is a premise (founded when alive); a
    justification (the critical edges sharing a group; no group = one default
    group) holds when all its antecedents are founded."""
    groups: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for edge in edges:
        if edge.kind != DEPENDS_ON or not edge.critical:
            continue
        for name in edge.memberships:
            groups[edge.src]["" if name is None else str(name)].add(edge.dst)
    missing: dict[tuple[str, str], int] = {}
    waiting: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for node, justs in groups.items():
        for name, antecedents in justs.items():
            missing[(node, name)] = len(antecedents)
            for a in antecedents:
                waiting[a].append((node, name))
    founded: set[str] = set()
    queue = [k for k, s in states.items() if s == ALIVE and k not in groups]
    while queue:
        key = queue.pop()
        if key in founded:
            continue
        founded.add(key)
        for node, name in waiting.get(key, ()):
            missing[(node, name)] -= 1
            if missing[(node, name)] == 0 and states.get(node) == ALIVE and node not in founded:
                queue.append(node)
    return founded


def unfounded_alive(states: dict[str, str], edges: Iterable) -> set[str]:
    edges = list(edges)
    return {k for k, s in states.items() if s == ALIVE} - well_founded(states, edges)


class Replay:
    """The log's intents applied in order: what should exist now, and what was deleted."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict] = {}  # id -> last image (node entry + "written_at")
        self.tombstones: dict[str, dict] = {}  # id -> node entry at deletion + "deleted_at"
        self.edges: dict[tuple, tuple[dict, int]] = {}  # (src, dst, rel) -> (props, epoch added)
        self.undone: set[Optional[int]] = set()  # the epochs undone (None: an undo entry naming none)
        self.entries: list[dict] = []

    def apply(self, entry: dict) -> None:
        self.entries.append(entry)
        if entry.get("kind") == "undo":
            self.undone.add(entry.get("undoes"))
        intent = entry.get("intent")
        if not isinstance(intent, dict):
            return
        epoch = entry.get("epoch", 0)
        for node in intent.get("add_nodes", []):
            image = copy.deepcopy(node)
            image["written_at"] = epoch
            self.nodes[node["id"]] = image
            self.tombstones.pop(node["id"], None)
            for e in node.get("edges", []):
                self.edges[tuple(e[:3])] = (e[3] if len(e) > 3 else {}, epoch)
        for e in intent.get("add_edges", []):
            self.edges[tuple(e[:3])] = (e[3] if len(e) > 3 else {}, epoch)
        for update in intent.get("updates", []):
            image = self.nodes.get(update["id"])
            if image is None:
                continue
            after = update.get("after", {})
            image["written_at"] = epoch
            for name in ("state", "epoch", "weight"):
                if name in after:
                    image[name] = after[name]
            if "confidence" in after and after.get("confidence") != update.get("before", {}).get(
                "confidence"
            ):
                image.setdefault("props", {})["confidence"] = after["confidence"]
            if "valid_to" in after and after.get("valid_to") != update.get("before", {}).get("valid_to"):
                image.setdefault("props", {})["valid_to"] = after["valid_to"]  # valid time ended (or undone)
        for e in intent.get("del_edges", []):
            self.edges.pop(tuple(e[:3]), None)
        for node in intent.get("del_nodes", []):
            self.nodes.pop(node["id"], None)
            # an undo deletes what the change it reverts had added: a removal, not a forget
            self.tombstones[node["id"]] = dict(
                copy.deepcopy(node), deleted_at=epoch, forgotten=entry.get("kind") != "undo"
            )
            for ident in [k for k in self.edges if node["id"] in k[:2]]:
                del self.edges[ident]


def replay(entries: Iterable[dict]) -> Replay:
    result = Replay()
    for entry in entries:
        result.apply(entry)
    return result


def _needers_in(edges: Iterable, ident: str) -> list[str]:
    """The ids that consume or supersede ``ident`` among raw rows (src, dst, rel, ...)."""
    found: list[str] = []
    for e in edges:
        src, dst, rel = e[0], e[1], e[2]
        if dst == ident and rel in (DEPENDS_ON, SUPERSEDES):
            found.append(src)
        elif src == ident and rel == SUPPORTS:
            found.append(dst)
    return found


def forget_problems(
    log: Replay, stored: dict[str, StoredNode], edges: list[tuple], gaps: Iterable = ()
) -> tuple[list[str], dict, list[str]]:
    """``stored``: id -> {"key", "state", "epoch", "historical"} of every stored node
    (``historical``: superseded in time, optional); ``edges``: every
    stored belief edge as (src_id, dst_id, rel, props); ``gaps``: the epoch ranges ``[first,
    last]`` the log has no entry for (lost history). Returns (problems, {id: node entry
    to restore}, [ids of orphans to forget]). A node missing from the graph whose last
    logged write is older than a lost epoch is neither restored nor named: the lost change
    may have forgotten it (the lost history is named, and recorded by a repair)."""
    problems: list[str] = []
    restore: dict[str, dict] = {}

    # alive or disputed, or superseded in time (what such a node consumed or defeated is its
    # history: forget keeps it, core.forget)
    def needs(i: str) -> bool:
        return i in stored and (stored[i]["state"] not in DEAD or bool(stored[i].get("historical")))

    def key(i: str) -> str:
        if i in stored:
            return stored[i]["key"]
        return (log.nodes.get(i) or log.tombstones.get(i) or {}).get("key", i)

    latest_gap = max((int(g[1]) for g in gaps), default=0)
    # 1. the log says it exists, the graph lacks it
    for ident, image in sorted(log.nodes.items(), key=lambda kv: kv[1].get("key", "")):
        if ident in stored or latest_gap > int(image.get("written_at") or 0):
            continue
        current = [(s, d, r) for (s, d, r) in log.edges if ident in (s, d)]
        alive = sorted(key(i) for i in _needers_in(current, ident) if needs(i))
        why = f"; alive {', '.join(alive)} supersede(s) or consume(s) it" if alive else ""
        problems.append(
            f"{image.get('key', ident)} is missing from the graph, but the revision log says it exists "
            f"({image.get('state')}, last written at epoch {image['written_at']}){why}"
        )
        restore[ident] = dict(
            image, edges=[[s, d, r, props] for (s, d, r), (props, _) in log.edges.items() if ident in (s, d)]
        )
    # 2. forgotten although something alive now supersedes or consumes it
    for ident, tomb in sorted(log.tombstones.items(), key=lambda kv: kv[1].get("key", "")):
        if ident in stored or not tomb.get("forgotten"):
            continue
        # alive now and already alive when it was forgotten (a consumer that came back later, through
        # another justification, leaves the dead node forgotten: only a label that is no longer dead
        # brings a forgotten node back)
        alive = sorted(
            key(i)
            for i in _needers_in(tomb.get("edges", []), ident)
            if needs(i) and int(stored[i].get("epoch") or 0) <= int(tomb["deleted_at"])
        )
        if alive:
            problems.append(
                f"{tomb.get('key', ident)} was forgotten at epoch {tomb['deleted_at']}, but alive "
                f"{', '.join(alive)} supersede(s) or consume(s) it (forget rules (b)/(c))"
            )
            restore[ident] = tomb
    # 3. a stored dead orphan a later revision should have forgotten
    revisions = [
        e for e in log.entries if e.get("kind") in REVISION_KINDS and e.get("epoch") not in log.undone
    ]
    by_id_edges: dict[str, list] = defaultdict(list)
    for e in edges:
        by_id_edges[e[0]].append(e)
        by_id_edges[e[1]].append(e)
    forgotten_needers: dict[str, list[dict]] = defaultdict(list)  # id -> tombstones of its forgotten needers
    for t in log.tombstones.values():
        for e in t.get("edges", []):
            for target in (e[0], e[1]):
                if target != t["id"] and t["id"] in _needers_in([e], target):
                    forgotten_needers[target].append(t)
    forget: list[str] = []
    for ident, node in sorted(stored.items(), key=lambda kv: kv[1]["key"]):
        if node["state"] not in (REFUTED, INVALIDATED):
            continue
        mine = by_id_edges.get(ident, [])
        needers = _needers_in(mine, ident)
        if any(needs(i) for i in needers):
            continue
        # when it became an orphan: its own death, each needer's last state change, each
        # needer edge's birth, each forgotten needer's deletion (conservative: the latest)
        became = int(node.get("epoch") or 0)
        for e in mine:
            other = e[0] if e[1] == ident else e[1]
            if other in needers:
                born = log.edges.get(tuple(e[:3]), ({}, 0))[1]
                became = max(became, born, int((stored[other].get("epoch") if other in stored else 0) or 0))
        for t in forgotten_needers.get(ident, []):
            became = max(became, t["deleted_at"])
            needers.append(t["id"])
        watch = {node["key"]} | {key(i) for i in needers}
        for entry in revisions:
            if entry["epoch"] < became:
                continue
            changed = {c.get("key") for c in entry.get("changes", [])}
            changed |= {f.get("new_evidence") for f in entry.get("facts", [])} | {entry.get("new_evidence")}
            touched = sorted(k for k in watch & changed if k)
            if touched:
                problems.append(
                    f"{node['key']} is {node['state']} and nothing alive (or superseded in time) consumes or "
                    f"supersedes it, but the "
                    f"revision of epoch {entry['epoch']} (which changed {', '.join(touched)}) did not forget it"
                )
                forget.append(ident)
                break
    return problems, restore, forget


def restore_entries(restore: dict[str, dict], stored_ids: set[str]) -> list[dict]:
    """Node entries for an intent's ``add_nodes``: each restored node with the edges whose
    other end is stored or restored too."""
    present = set(stored_ids) | set(restore)
    result = []
    for ident, image in restore.items():
        entry = {
            k: image[k] for k in ("id", "kind", "key", "props", "state", "epoch", "weight") if k in image
        }
        entry["edges"] = [list(e) for e in image.get("edges", []) if e[0] in present and e[1] in present]
        result.append(entry)
    return result
