"""A cancelled write never leaves half a change, in a long-lived process (the in-process
API on the session's root; embedded, and PostgreSQL with ``FALSIFY_TEST_BACKEND=postgres``).

At every named write step of load, revise and undo (the stores' step hook: the names
``FALSIFY_FAULT_AT`` kills at), the call is cancelled the two ways a host cancels one:

* an anyio cancel scope, as the MCP SDK cancels a request on ``notifications/cancelled``
  (level-triggered: every await inside the scope is cancelled again, the rollback's own
  included, unless it is shielded);
* ``Task.cancel``, as ``asyncio.wait_for`` or a closing client does.

After each: the call raised (or the scope caught) the cancellation, no intent is left
journalled, the investigation is exactly its before-state (a cancellation at ``committed``,
past the commit point: exactly its after-state), the log agrees, and ``check`` finds nothing
it did not find before. Then ``check --repair`` on a root holding an intent left over
(a rollback that could not run) rolls it back first and never re-adds what it rolled back.
"""

from __future__ import annotations

import asyncio

import anyio
import pytest

from conftest import seed_with_prefix
from test_write_rollback import FACT, STEPS, assert_whole, state

pytestmark = pytest.mark.slow


def cancelling(step: str, cancel) -> object:
    def hook(name: str) -> None:
        if name == step:
            cancel()

    return hook


async def call(app, op: str, prefix: str):
    if op == "load":
        return await app.load(seed_with_prefix(prefix))
    if op == "revise":
        return await app.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    return await app.undo()


async def cancelled_in_scope(app, op: str, prefix: str, step: str) -> None:
    """The MCP SDK's way: the request's anyio scope is cancelled at ``step``."""
    with anyio.CancelScope() as scope:
        app.hook = cancelling(step, scope.cancel)
        try:
            await call(app, op, prefix)
        finally:
            app.hook = None
    # past the commit point the call may end before it awaits again: then nothing is left to cancel
    assert scope.cancelled_caught or step == "committed", (
        f"{op} at {step}: the cancellation never reached the call"
    )


async def cancelled_task(app, op: str, prefix: str, step: str) -> None:
    """asyncio's way: the task running the call is cancelled at ``step``."""
    task = None
    app.hook = cancelling(step, lambda: task.cancel())
    try:
        task = asyncio.ensure_future(call(app, op, prefix))
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        app.hook = None


async def test_a_task_cancelled_at_every_step_of_a_revision_rolls_back(app, prefix):
    """asyncio's ``Task.cancel`` at every write step of revise (the anyio scope, below, at every
    step of load, revise and undo)."""
    await app.load(seed_with_prefix(prefix))
    problems_before = set((await app.check())["problems"])
    loaded = await state(app, prefix)
    for step in STEPS["revise"][:-1]:
        await cancelled_task(app, "revise", prefix, step)
        await assert_whole(app, loaded, prefix, problems_before)
    await cancelled_task(app, "revise", prefix, "committed")  # past the commit point: the revision holds
    revised = await state(app, prefix)
    assert revised["status"]["nodes"][f"{prefix}E_qa"]["state"] == "refuted"
    await assert_whole(app, revised, prefix, problems_before)


@pytest.mark.parametrize("how", [cancelled_in_scope], ids=["anyio-scope"])
async def test_a_cancellation_at_every_write_step_rolls_back_before_returning(app, prefix, how):
    problems_before = set((await app.check())["problems"])
    empty = await state(app, prefix)
    for step in STEPS["load"][:-1]:
        await how(app, "load", prefix, step)
        await assert_whole(app, empty, prefix, problems_before)
    await how(app, "load", prefix, "committed")  # past the commit point: the load holds
    loaded = await state(app, prefix)
    assert loaded["epoch"] == empty["epoch"] + 1 and loaded["status"]["nodes"]
    await assert_whole(app, loaded, prefix, problems_before)
    for step in STEPS["revise"][:-1]:
        await how(app, "revise", prefix, step)
        await assert_whole(app, loaded, prefix, problems_before)
    await how(app, "revise", prefix, "committed")
    revised = await state(app, prefix)
    assert revised["status"]["nodes"][f"{prefix}E_qa"]["state"] == "refuted"
    await assert_whole(app, revised, prefix, problems_before)
    for step in STEPS["undo"][:-1]:
        await how(app, "undo", prefix, step)
        await assert_whole(app, revised, prefix, problems_before)
    assert (await app.undo())["undone"] == revised["epoch"]
    assert (await state(app, prefix))["status"] == loaded["status"]


async def test_repair_rolls_back_first_and_never_re_adds_what_it_rolled_back(app, prefix):
    """A revision's intent left journalled with half of it applied (its rollback could not
    run): ``check --repair`` rolls it back, inspects again, and neither re-indexes nor restores
    the node the intent had added, nor records lost history for its epoch."""
    from memory_core.store import writer

    # the session's root is shared: settle what other tests left first, so every line this
    # repair prints is about this test's intent
    settled = await app.check(repair=True)
    assert settled["clean"] or settled["clean_after_repair"], settled
    await app.load(seed_with_prefix(prefix))
    before = await state(app, prefix)
    problems_before = set((await app.check())["problems"])
    real_recover = writer.recover

    async def no_rollback(store, journal):  # the rollback cannot run: the intent stays, half applied
        return None

    def fail() -> None:
        raise OSError(5, "injected I/O error at nodes")

    writer.recover = no_rollback
    app.hook = cancelling("nodes", fail)
    try:
        with pytest.raises(OSError):
            await app.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    finally:
        writer.recover = real_recover
        app.hook = None
    assert app.journal.pending() is not None
    found = await app.check()
    assert "the journal holds an unfinished intent" in found["problems"]
    repaired = await app.check(repair=True)
    assert any("rolled back the unfinished change" in r for r in repaired["repaired"]), repaired
    assert not any(
        "re-indexed" in r or "restored" in r or "cannot restore" in r for r in repaired["repaired"]
    ), repaired
    assert app.journal.pending() is None
    await assert_whole(app, before, prefix, problems_before)
    assert f"{prefix}F_audit" not in (await state(app, prefix))["status"]["nodes"]


async def test_a_stored_epoch_no_log_could_hold_is_damage_repaired_in_one_run(app, prefix):
    """A node whose stored epoch is 10**30 (written behind FALSIFY's back) is named as damage, not
    as lost history (constant memory: no epoch is enumerated), and one repair gives it an epoch
    the log holds."""
    from memory_core.core.identity import node_id

    await app.load(seed_with_prefix(prefix))
    ident = node_id("evidence", f"{prefix}E_qa")
    await app.store.update_nodes({ident: {"truth_epoch": 10**30}})
    await app.store.checkpoint()
    mine = lambda problems: [p for p in problems if p.startswith(f"{prefix}E_qa ")]  # noqa: E731
    found = await app.check()
    assert mine(found["problems"]) == [
        f"{prefix}E_qa carries epoch a 31-digit number, beyond any epoch FALSIFY "
        "writes (0..9007199254740991): the stored node is damaged"
    ], found
    assert not any("history lost" in p and "10000000000" in p for p in found["problems"])
    repaired = await app.check(repair=True)
    assert any(r.startswith(f"gave {prefix}E_qa epoch") for r in repaired["repaired"]), repaired
    assert not mine((await app.check())["problems"])
    assert (await state(app, prefix))["status"]["nodes"][f"{prefix}E_qa"]["epoch"] <= app.journal.epoch()
