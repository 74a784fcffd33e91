"""Task 6: write the whole batch as ONE journalled intent — one write per store —
and ONE log entry (undo reverts the batch as a whole).

It acts when the batch's last fact reaches it (or at once for a batch that
failed), then releases the revision lock the first task took.
"""

from __future__ import annotations

import time

from memory_core.core.beliefs import Node
from memory_core.core.identity import node_id
from memory_core.core.vocabulary import PART_OF
from memory_core.store import writer
from memory_core.store.belief_store import edge_row
from memory_core.store.intents import evidence_props, log_changes, node_entry, node_update, tombstones
from memory_core.store.tms_io import restored_entries, rests_on_forgotten
from memory_core.tasks.batch import FactJob, RevisionBatch


def _after(batch: RevisionBatch, key: str) -> Node:
    """A changed stored node as the batch leaves it (in the view, or forgotten by the batch)."""
    node = batch.belief_view.nodes.get(key) or batch.forgotten_nodes.get(key)
    if node is None:  # a change is recorded on a node of the view (core.plan.record)
        raise KeyError(f"{key}: changed by the batch, but neither in its view nor forgotten")
    return node


def _question(node: Node) -> str:
    """The question new evidence joins (``begin_fact`` refuses a fact without one)."""
    if node.question is None:
        raise ValueError(f"new evidence {node.key} has no question")
    return node.question


async def batch_intent(batch: RevisionBatch) -> tuple[dict, dict]:
    view, gone = batch.belief_view, batch.forgotten_nodes
    recorded = [(j, j.plan) for j in batch.jobs if j.plan is not None]
    new_keys = {j.new_key for j, _ in recorded}
    kinds = {k: n.kind for k, n in view.nodes.items()}
    kinds.update({k: n.kind for k, n in gone.items()})
    vanished = {k for k in gone if k in new_keys}  # added and forgotten within the batch: never stored
    lost_ghosts = {k for k in batch.ghosts if k not in batch.restored or k in gone} | set(gone)
    # disputes edges a revision of the batch settled (core.tms.end_settled_disputes); one a new
    # fact of the same batch added was never stored: it is neither added nor deleted
    removed = {(e.kind, e.src, e.dst): e for _, plan in recorded for e in plan.removed_edges}
    added = {(e.kind, e.src, e.dst) for _, plan in recorded for e in plan.new_edges}
    add_nodes = []
    for job, plan in recorded:
        key = job.new_key
        if key in vanished:
            continue
        node = view.nodes[key]
        r = job.request
        props = evidence_props(
            key,
            job.fact,
            _question(node),
            r.source,
            r.asserted_at,
            r.triple,
            trust=job.registered_trust,
            valid_from=node.valid_from,
            valid_to=node.valid_to,
            stated_to=r.valid_to,
        )
        own: list[tuple[str, str, str, dict]] = [
            (node_id("evidence", key), node_id("question", _question(node)), PART_OF, {})
        ]
        # an edge to a forgotten node that stays forgotten (kept dead by a re-judgement) is not
        # stored: the node is not either
        own += [
            edge_row(e, kinds)
            for e in plan.new_edges
            if e.dst not in vanished and e.dst not in lost_ghosts and (e.kind, e.src, e.dst) not in removed
        ]
        add_nodes.append(node_entry("evidence", key, props, node.state, node.epoch, node.weight, own))
    changed = []
    for _, plan in recorded:
        changed += [c.key for c in plan.changes]
    update_list = []
    for key in dict.fromkeys(changed):
        if key in new_keys or key not in batch.original:
            continue
        update_list.append(node_update(key, batch.original[key], _after(batch, key)))
    # reinstated ghosts come back from their tombstones (a ghost restored and then
    # forgotten again within the batch was never re-added: it stays forgotten)
    restored = sorted(k for k in batch.restored if k in view.nodes and k not in gone and k in batch.ghosts)
    absent = set(batch.reconciliation.ghosts.forgotten_ids) - {batch.ghosts[k]["id"] for k in restored}
    absent |= {node_id(n.kind, k) for k, n in gone.items()}
    add_nodes += restored_entries(batch.ghosts, restored, view, absent)
    forgotten_stored = [k for k in gone if k not in new_keys and k not in batch.ghosts]
    intent = {
        "epoch": batch.epoch,
        "add_nodes": add_nodes,
        "updates": update_list,
        "del_nodes": await tombstones(batch.stores.store, gone, forgotten_stored),
    }
    dropped = [edge_row(e, kinds) for k, e in removed.items() if k not in added]
    if dropped:
        intent["del_edges"] = [list(row) for row in dropped]
    facts = []
    changes = []
    for job, plan in recorded:
        d = job.narrowed  # set before the fact's plan (propagate_refutation.begin_fact)
        facts.append(
            {
                "fact": job.fact,
                "new_evidence": job.new_key,
                "judge": d.judge if d is not None else "none",
                "candidates": [c.as_dict() for c in d.candidates] if d is not None else [],
                "forgotten": list(plan.forgotten),
            }
        )
        changes += [dict(c, fact=job.fact) if len(recorded) > 1 else c for c in log_changes(plan)]
    entry = {
        "epoch": batch.epoch,
        "kind": "revise",
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "changes": changes,
        "forgotten": [k for _, plan in recorded for k in plan.forgotten],
        "intent": intent,
    }
    decisions = [d for _, plan in recorded for d in plan.decisions]
    if decisions:
        entry["decisions"] = decisions
    if restored:
        entry["restored"] = restored
    rests = rests_on_forgotten(batch.ghosts, restored, absent)
    if rests:  # a restored node's edges to nodes that stay forgotten: the log keeps them
        entry["rests_on_forgotten"] = rests
    registered = {j.request.source: j.registered_trust for j, _ in recorded if j.registered_trust is not None}
    if registered:
        entry["registered_sources"] = registered
    if len(recorded) == 1:
        entry.update({k: facts[0][k] for k in ("fact", "new_evidence", "judge", "candidates")})
    else:
        entry["facts"] = facts
    return intent, entry


async def write_batch(batch: RevisionBatch) -> None:
    # a preview (``revise --dry-run``) runs every step on the in-memory view and writes nothing
    if batch.failed or not batch.options.writes or not any(j.plan is not None for j in batch.jobs):
        return
    start = time.perf_counter()
    intent, entry = await batch_intent(batch)
    await writer.run(batch.stores.store, batch.stores.journal, intent, entry, batch.stores.hook)
    batch.entry = entry
    elapsed = round((time.perf_counter() - start) * 1000, 2)
    for job in batch.jobs:
        job.timings["write_revision"] = round(elapsed / len(batch.jobs), 2)


async def write_revision(jobs: list[FactJob], ctx=None):
    for job in jobs:
        batch = job.batch
        if not job.last and not batch.failed:
            continue
        try:
            if batch.entry is None:
                await write_batch(batch)
        except BaseException as error:  # raised by the caller after the run
            batch.fail(error)
        finally:
            batch.release()
    return jobs
