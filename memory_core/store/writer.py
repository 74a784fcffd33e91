"""Applies a journalled intent to both stores, and recovers unfinished ones.

An intent (see :mod:`memory_core.store.journal`) is a dict of batches::

    add_nodes / del_nodes: [{"id", "kind", "key", "props", "state", "epoch", "weight",
                             "edges": [[src, dst, rel, props]]}]
    add_edges / del_edges: [[src_id, dst_id, rel, props]]
    updates:               [{"id", "key", "before": {...}, "after": {"state", "epoch", "weight", "confidence"}}]

Each step is idempotent (re-adding a node rewrites it and then its state and
weight are set again; deletes of missing things are no-ops), so an intent can
be applied again after a crash, and its inverse restores the prior state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextvars import ContextVar
from typing import Awaitable, Callable, Iterator, Optional, TypeVar
from uuid import UUID

from memory_core.core.errors import DatabaseUnavailable, WriterLockLost
from memory_core.store import off_loop
from memory_core.store.journal import Journal, intent_problem, inverse
from memory_core.store.belief_store import BeliefStore


def build_point(
    kind: str,
    node_id: str,
    props: dict,
    state: str | None = None,
    epoch: int | None = None,
    weight: float | None = None,
):
    """A DataPoint from stored properties, born with the given state, epoch and weight."""
    from memory_core.store.models import MODEL_BY_KIND  # DataPoints: cognee is configured by now

    model = MODEL_BY_KIND[kind]
    fields = {
        k: v for k, v in props.items() if k in model.model_fields and k not in ("id", "type", "metadata")
    }
    if state is not None:
        fields.update(truth_alignment=[state], truth_epoch=int(epoch or 0))
    if weight is not None:
        fields["feedback_weight"] = float(weight)
    return model(id=UUID(node_id), **fields)


def _points(adds: list[dict]) -> list:
    """The DataPoints of an intent's new nodes (pure: a large batch's are built in a worker thread)."""
    return [build_point(n["kind"], n["id"], n["props"], n["state"], n["epoch"], n["weight"]) for n in adds]


async def apply(store: BeliefStore, intent: dict, hook=None) -> None:
    """Write an intent's batches to the stores (graph + vector)."""
    step = hook or (lambda name: None)
    adds = intent.get("add_nodes", [])
    edges_written = bool(intent.get("add_edges"))
    if adds:
        # state, epoch and weight travel inside the node: one add_data_points call
        await store.add_points(await off_loop.run(_points, adds, size=len(adds)))
        step("nodes")
        rows = {(e[0], e[1], e[2]): e for n in adds for e in n.get("edges", [])}
        await store.add_raw_edges([tuple(e) for e in rows.values()])
        edges_written = edges_written or bool(rows)
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
    if edges_written or updates or intent.get("del_edges") or dels:
        await store.checkpoint()  # the raw writes above, durable before the journal commits


def patch(update: dict) -> dict:
    after = update["after"]
    values = {
        "truth_alignment": [after["state"]],
        "truth_epoch": int(after["epoch"]),
        "feedback_weight": float(after["weight"]),
    }
    if after.get("confidence") != update["before"].get("confidence"):
        values["confidence"] = after["confidence"]
    if "valid_to" in after and after.get("valid_to") != update["before"].get("valid_to"):
        values["valid_to"] = after["valid_to"]  # valid time ended (undo: restored)
    return values


class RollbackFailed(RuntimeError):
    """A write failed and rolling it back failed too: the intent stays journalled, and the
    next open of the root (or the next write in this process) recovers it."""


_T = TypeVar("_T")


async def uncancellable(make: Callable[[], Awaitable[_T]]) -> _T:
    """``await make()`` run to its end even when the calling task is cancelled meanwhile,
    then the cancellation raised. Both kinds are held off: asyncio's ``Task.cancel`` (an
    API caller's ``wait_for``, a closed client) and an anyio cancel scope (the MCP SDK
    cancels a request's scope on ``notifications/cancelled``; such a scope cancels every
    await inside it again until it is left, so a plain ``asyncio.shield`` is not enough).
    Used for the rollback of an unfinished change: a rollback cut short is half a change."""
    import anyio

    task = asyncio.ensure_future(make())
    cancelled: Optional[BaseException] = None
    with anyio.CancelScope(shield=True):
        while not task.done():
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError as error:  # asyncio's cancel: wait on, re-raise after
                cancelled = error
    result = task.result()  # the rollback's own error, if it failed
    if cancelled is not None:
        raise cancelled
    return result


class Interruption:
    """A person's interruption (Ctrl-C) of one command, as the shell that runs it turns it into a
    cancellation (:data:`INTERRUPTION` holds it for the command's writes). Asked before the
    command's change reached its commit point, it cancels the command, and the change is rolled
    back whole; from the commit point on it cancels nothing: the change holds, and the command
    finishes and reports it (the shell says the interruption came too late)."""

    def __init__(self) -> None:
        self.asked = False  # the shell cancelled the command
        self.committing: Optional[int] = None  # the epoch at (or past) its commit point: too late to cancel
        self.late = False  # asked for past the commit point: nothing was cancelled

    def past_commit_point(self) -> bool:
        return self.committing is not None


INTERRUPTION: ContextVar[Optional[Interruption]] = ContextVar("falsify_interruption", default=None)


def _at_commit_point(epoch) -> Optional[Interruption]:
    """The command's interruption marked at the commit point (before the log line): from here a
    Ctrl-C cancels nothing. One asked before is honoured now (the except path rolls back), even
    when its cancellation has not reached an await yet: the shell's signal handler may run
    between any two lines, and this order leaves no moment it could fall between."""
    interruption = INTERRUPTION.get()
    if interruption is None:
        return None
    interruption.committing = epoch if isinstance(epoch, int) else -1
    if interruption.asked:
        raise asyncio.CancelledError()
    return interruption


# what went wrong after a change's commit point (the change holds): collected per call by
# :func:`collecting`, so each shell can report success with these warnings
_AFTER_COMMIT: ContextVar[Optional[list]] = ContextVar("falsify_after_commit", default=None)


class Warnings:
    """The warnings raised since :func:`collecting` began (see :meth:`new`)."""

    def __init__(self, found: list, start: int):
        self._found, self._start = found, start

    def new(self) -> list[str]:
        return list(self._found[self._start :])


@contextlib.contextmanager
def collecting() -> Iterator[Warnings]:
    """Collect the warnings of the writes made inside (nested: the outer collection sees them too)."""
    found = _AFTER_COMMIT.get()
    token = None
    if found is None:
        found = []
        token = _AFTER_COMMIT.set(found)
    try:
        yield Warnings(found, len(found))
    finally:
        if token is not None:
            _AFTER_COMMIT.reset(token)


def warn(message: str) -> None:
    """A change is committed but something after its commit point failed: logged, and given to
    the caller's collection (the command then succeeds, with the warning)."""
    from memory_core.core.redaction import redact

    message = redact(message)
    logging.getLogger("falsify").warning("%s", message)
    found = _AFTER_COMMIT.get()
    if found is not None:
        found.append(message)


def _committed(journal: Journal, epoch) -> bool:
    try:
        return isinstance(epoch, int) and journal.committed(epoch)
    except Exception:  # noqa: BLE001  (the log cannot be read: not known to be committed; recover decides)
        return False


async def run(store: BeliefStore, journal: Journal, intent: dict, entry: dict, hook=None) -> None:
    """Journal, apply, commit. ``entry`` is the log line (it embeds the intent).

    An exception anywhere before the commit point (an I/O error, a full disk, a file-size
    limit, a cancelled task) is rolled back here, before the caller releases the writer
    lock, exactly as a killed process is rolled back at the next open (:func:`recover`):
    the torn log line is cut, an uncommitted intent's inverse is applied, a committed one
    is kept. The rollback runs to its end even when the task is cancelled again meanwhile
    (:func:`uncancellable`), so a long-lived process (the server, MCP, a host's API) never
    keeps a half applied change, and the next change never overwrites a pending intent.

    Past the commit point (the log line is written) the change holds: a failure after it
    (the meta file, clearing the intent, the housekeeping) is a warning (:func:`warn`), not
    an error, so the caller reports success and never applies the change a second time."""
    step = hook or (lambda name: None)
    # a writer that lost its lock writes nothing, not even the rollback of an earlier intent
    await journalling(journal.check_writer)
    if await journalling(journal.pending) is not None:  # an earlier failed write whose rollback failed too
        await recover(store, journal)
    epoch = entry.get("epoch")
    interruption = INTERRUPTION.get()
    before = interruption.committing if interruption is not None else None
    late: Optional[BaseException] = None  # a cancellation asked for while the commit was under way
    try:
        await journalling(journal.begin, intent)
        step("journalled")
        await apply(store, intent, hook)
        await asyncio.sleep(
            0
        )  # a cancellation asked for during the writes is honoured here, before the commit point
        _at_commit_point(epoch)
        try:
            await journalling(journal.commit, entry)
        except asyncio.CancelledError as error:  # the commit finished (its own error comes first): it holds
            late = error
        step("committed")
    except BaseException as error:
        if interruption is not None and not _committed(journal, epoch):
            interruption.committing = before  # not committed: a Ctrl-C may cancel the command again
        if isinstance(error, WriterLockLost):
            # refused at the intent (nothing written) or at the commit point (not committed; the
            # epoch may be another writer's now): rolling back without the lock could undo that
            # writer's work, so the intent is left to the database's next writer, which rolls it back
            raise
        if _committed(journal, epoch):
            with contextlib.suppress(Exception):
                journal.clear()  # else the next write (or open) clears it: the epoch is in the log
            warn(
                f"the change of epoch {epoch} is committed and kept, but what follows its commit point failed "
                f"({type(error).__name__}: {' '.join(str(error).split())[:300]}); do not run it again "
                "(check names anything left to fix)"
            )
            if not isinstance(error, Exception):  # a cancellation after the commit point: the change holds
                raise
            return
        try:
            journal.check_writer()  # a rollback is a write too: only while the writer lock holds
            await recover(store, journal)
        except asyncio.CancelledError:
            raise  # rolled back; the task was cancelled (again) meanwhile
        except BaseException as again:
            # the database's connection (or the writer lock's session) lost: exit 7, not an internal error
            lost = again if isinstance(again, DatabaseUnavailable) else journal.unavailable(again)
            if lost is not None:
                raise type(lost)(
                    "a write failed and was not rolled back by this process (it stays journalled in the "
                    f"database, whose next writer rolls it back): {lost}"
                ) from error
            raise RollbackFailed(
                f"a write failed ({type(error).__name__}: {error}) and rolling it back failed too "
                f"({type(again).__name__}: {again}); the change is still journalled and is rolled back "
                "when the data root is next opened: stop this process and run check"
            ) from error
        lost = journal.unavailable(error) if isinstance(error, Exception) else None
        if lost is not None:
            raise type(lost)(f"a write failed and was rolled back, nothing was written: {lost}") from error
        raise
    if late is not None:  # the change holds, as when the cancellation comes just after the commit
        raise late
    await housekeeping(store)


async def journalling(call: Callable[..., _T], *args) -> _T:
    """A journal call of a write -- a file written and synced, or a PostgreSQL query that a
    stalled database holds up -- in a worker thread, so the caller's event loop runs meanwhile.
    Run to its end even when the caller is cancelled meanwhile, then the cancellation raised
    (:func:`uncancellable`): the crash-safety order is the synchronous call's -- nothing is
    applied before the intent is journalled, and what a rollback reads of the journal is what
    the call left, never a call still under way."""
    return await uncancellable(lambda: asyncio.to_thread(call, *args))


async def housekeeping(store: BeliefStore) -> None:
    """Housekeeping after a commit (see :meth:`BeliefStore.after_commit`). A failure
    changes no data, so it does not fail the committed change: it is a warning."""
    try:
        await store.after_commit()
    except Exception as error:  # noqa: BLE001
        warn(f"housekeeping after a commit failed (no data changed): {type(error).__name__}: {error}")


async def recover(store: BeliefStore, journal: Journal) -> str | None:
    """Finish or roll back an interrupted intent. Returns what was done, if anything. Runs to
    its end even when the calling task is cancelled meanwhile (:func:`uncancellable`)."""
    return await uncancellable(lambda: _recover(store, journal))


async def _recover(store: BeliefStore, journal: Journal) -> str | None:
    done = []
    intent = journal.pending()
    if journal.repair_log():
        if intent is None:
            # no unfinished intent: the line had committed (the intent is cleared only after the
            # append), so the damage came later and its history is lost (check names it)
            done.append(
                "cut a damaged last line from revisions.jsonl: no change was unfinished, so it had "
                "committed and its history is lost (run check)"
            )
        else:
            done.append(
                "cut a torn last line from revisions.jsonl (an append cut short before its commit point)"
            )
    if intent is not None:
        done.append(await _settle(store, journal, intent))
    return "; ".join(done) or None


async def _settle(store: BeliefStore, journal: Journal, intent) -> str:
    if isinstance(intent, dict) and intent.get("torn"):
        journal.clear()
        return "discarded a torn journal intent (nothing had been written)"
    wrong = intent_problem(intent)
    if wrong:
        # not written by begin() (that is atomic): never guess what to undo; keep it for a human
        aside = journal.set_aside_pending()
        return (
            f"journal/pending.json is not an intent FALSIFY wrote ({wrong}); moved it to {aside} untouched "
            "(run check to see whether the stores agree)"
        )
    if journal.committed(int(intent["epoch"])):
        journal.clear()
        return f"epoch {intent['epoch']} had committed; cleared its journal entry"
    await apply(store, inverse(intent))
    journal.clear()
    return f"rolled back the unfinished change of epoch {intent['epoch']}"
