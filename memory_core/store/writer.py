"""Applies a journalled intent to both stores, and recovers unfinished ones.

An intent (see :mod:`memory_core.store.journal`) is a dict of batches::

    add_nodes / del_nodes: [{"id", "kind", "key", "props", "state", "epoch", "weight", "edges": [[src, dst, rel, props]]}]
    add_edges / del_edges: [[src_id, dst_id, rel, props]]
    updates:               [{"id", "key", "before": {...}, "after": {"state", "epoch", "weight", "confidence"}}]

Each step is idempotent (re-adding a node rewrites it and then its state and
weight are set again; deletes of missing things are no-ops), so an intent can
be applied again after a crash, and its inverse restores the prior state.
"""

from __future__ import annotations

from uuid import UUID

from memory_core.store.journal import Journal, inverse
from memory_core.store.belief_store import BeliefStore


def build_point(kind: str, node_id: str, props: dict, state: str | None = None, epoch: int | None = None,
                weight: float | None = None):
    """A DataPoint from stored properties, born with the given state, epoch and weight."""
    from memory_core.store.models import MODEL_BY_KIND  # DataPoints: cognee is configured by now

    model = MODEL_BY_KIND[kind]
    fields = {k: v for k, v in props.items() if k in model.model_fields and k not in ("id", "type", "metadata")}
    if state is not None:
        fields.update(truth_alignment=[state], truth_epoch=int(epoch or 0))
    if weight is not None:
        fields["feedback_weight"] = float(weight)
    return model(id=UUID(node_id), **fields)


async def apply(store: BeliefStore, intent: dict, hook=None) -> None:
    """Write an intent's batches to the stores (graph + vector)."""
    step = hook or (lambda name: None)
    adds = intent.get("add_nodes", [])
    if adds:
        # state, epoch and weight travel inside the node: one add_data_points call
        await store.add_points([build_point(n["kind"], n["id"], n["props"], n["state"], n["epoch"], n["weight"])
                                for n in adds])
        step("nodes")
        rows = {(e[0], e[1], e[2]): e for n in adds for e in n.get("edges", [])}
        await store.add_raw_edges([tuple(e) for e in rows.values()])
        step("node_edges")
    if intent.get("add_edges"):
        await store.add_raw_edges([tuple(e) for e in intent["add_edges"]])
        step("edges")
    updates = intent.get("updates", [])
    if updates:
        # state, epoch, weight (and a changed confidence) of every updated node: one query
        await store.update_nodes({u["id"]: patch(u) for u in updates})
        step("updates")
    if intent.get("del_edges"):
        await store.delete_edges([tuple(e[:3]) for e in intent["del_edges"]])
        step("del_edges")
    dels = intent.get("del_nodes", [])
    if dels:
        await store.delete({n["id"]: n["kind"] for n in dels}, checkpoint=False)
        step("del_nodes")
    if updates or intent.get("del_edges") or dels:
        await store.checkpoint()  # the raw writes above, durable before the journal commits


def patch(update: dict) -> dict:
    after = update["after"]
    values = {"truth_alignment": [after["state"]], "truth_epoch": int(after["epoch"]),
              "feedback_weight": float(after["weight"])}
    if after.get("confidence") != update["before"].get("confidence"):
        values["confidence"] = after["confidence"]
    if "valid_to" in after and after.get("valid_to") != update["before"].get("valid_to"):
        values["valid_to"] = after["valid_to"]  # valid time ended (undo: restored)
    return values


class RollbackFailed(RuntimeError):
    """A write failed and rolling it back failed too: the intent stays journalled, and the
    next open of the root (or the next write in this process) recovers it."""


async def run(store: BeliefStore, journal: Journal, intent: dict, entry: dict, hook=None) -> None:
    """Journal, apply, commit. ``entry`` is the log line (it embeds the intent).

    An exception anywhere in between (an I/O error, a full disk, a file-size limit, a
    cancelled task) is rolled back here, before the caller releases the writer lock,
    exactly as a killed process is rolled back at the next open (:func:`recover`): the
    torn log line is cut, an uncommitted intent's inverse is applied, a committed one is
    kept. So a long-lived process (the server, MCP, a host's API) never keeps a half
    applied change, and the next change never overwrites a pending intent."""
    step = hook or (lambda name: None)
    if journal.pending() is not None:  # an earlier failed write whose rollback failed too
        await recover(store, journal)
    try:
        journal.begin(intent)
        step("journalled")
        await apply(store, intent, hook)
        journal.commit(entry)
        step("committed")
    except BaseException as error:
        try:
            await recover(store, journal)
        except BaseException as again:
            raise RollbackFailed(
                f"a write failed ({type(error).__name__}: {error}) and rolling it back failed too "
                f"({type(again).__name__}: {again}); the change is still journalled and is rolled back "
                "when the data root is next opened: stop this process and run check") from error
        raise
    await housekeeping(store)


async def housekeeping(store: BeliefStore) -> None:
    """Housekeeping after a commit (see :meth:`BeliefStore.after_commit`). A failure
    changes no data, so it does not fail the committed change: it is logged."""
    try:
        await store.after_commit()
    except Exception as error:  # noqa: BLE001
        import logging

        logging.getLogger("falsify").warning("housekeeping after a commit failed (no data changed): %s", error)


async def recover(store: BeliefStore, journal: Journal) -> str | None:
    """Finish or roll back an interrupted intent. Returns what was done, if anything."""
    done = []
    if journal.repair_log():
        done.append("cut a torn last line from revisions.jsonl (an append cut short before its commit point)")
    intent = journal.pending()
    if intent is not None:
        done.append(await _settle(store, journal, intent))
    return "; ".join(done) or None


async def _settle(store: BeliefStore, journal: Journal, intent) -> str:
    if isinstance(intent, dict) and intent.get("torn"):
        journal.clear()
        return "discarded a torn journal intent (nothing had been written)"
    if not (isinstance(intent, dict) and isinstance(intent.get("epoch"), int) and not isinstance(intent["epoch"], bool)):
        # not written by begin() (that is atomic): never guess what to undo; keep it for a human
        aside = journal.set_aside_pending()
        return (f"journal/pending.json is not an intent FALSIFY wrote; moved it to {aside} untouched "
                "(run check to see whether the stores agree)")
    if journal.committed(int(intent["epoch"])):
        journal.clear()
        return f"epoch {intent['epoch']} had committed; cleared its journal entry"
    await apply(store, inverse(intent))
    journal.clear()
    return f"rolled back the unfinished change of epoch {intent['epoch']}"
