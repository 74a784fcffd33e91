"""A ``close`` cancelled while the facade's revision is being written (a host's ``wait_for``, a
server shutting down) lets go of the root only once that write has ended. Before, the
cancellation ran close's clean-up at once: the writer lock was released under the live write,
so another process could take the root and roll the change back under the writer (and the
engines were never released: a second close returned at once). The real stores, on the session
root, through a second facade of this process whose lock is a real flock of its own."""

from __future__ import annotations

import asyncio

import pytest

from conftest import seed_with_prefix
from test_write_rollback import FACT, kinds
from memory_core import Falsify, RootBusy
from memory_core.store.lock import WriterLock


def free(path) -> bool:
    """Whether another opener could take the lock at ``path`` now."""
    try:
        WriterLock(path, "probe", 0).acquire(0).release()
    except RootBusy:
        return False
    return True


async def test_a_cancelled_close_keeps_the_lock_until_the_write_under_way_ends(root, app, prefix, tmp_path):
    await app.load(seed_with_prefix(prefix))
    problems_before = set((await app.check())["problems"])
    fx = await Falsify.open(root, lock=False)
    lock_file = tmp_path / "writer.lock"
    fx._lock = WriterLock(lock_file, "pytest", 0).acquire(0)  # the lock this facade lets go when closed
    closing: list = []
    seen: dict = {}

    def hook(name: str) -> None:
        if name == "nodes" and not closing:
            closing.append(asyncio.ensure_future(fx.close()))  # waits for the revision under way
        elif name == "updates":
            closing[0].cancel()
        elif name == "del_nodes":
            seen["free_mid_write"] = free(lock_file)

    fx.stores.hook = hook
    result = await fx.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    assert seen == {"free_mid_write": False}, "the writer lock was let go while the revision was written"
    with pytest.raises(asyncio.CancelledError):
        await closing[0]  # ran to its end, then raised the cancellation
    assert fx.closed and free(lock_file)
    states = {n["key"]: n["state"] for n in (await app.status())["nodes"]}
    assert states[f"{prefix}F_audit"] == "alive" and states[f"{prefix}E_qa"] == "refuted", result
    assert app.journal.pending() is None
    assert kinds((await app.check())["problems"]) <= kinds(problems_before)
