"""A host's cognee run of FALSIFY's revision Tasks that ends before the last Task gives the
facade's revision lock back.

The first Task takes the lock for its batch and the last (``write_revision``) gives it back. A
host's run can end in between: the host cancels it (``asyncio.wait_for``, a closed client), or
a Task of the host's own placed between FALSIFY's raises (cognee then ends the item, and
cancels the run's other items). Before, the lock stayed held by the dead run, and every later
call on the facade -- ``status``, ``revise``, ``close`` -- waited for it for ever. Now the run's
task gives it back when it ends, nothing of the batch written; the facade answers, and the
same fact revises as it would have. The real stores, on the session root.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from conftest import seed_with_prefix
from test_write_rollback import FACT, state

pytestmark = pytest.mark.slow


async def run_ended_early(app, prefix: str, how: str) -> None:
    """A host's run of the revision of ``FACT`` (target E_qa) with a Task of the host's own
    after FALSIFY's first: it waits on a service that never answers and the host cancels the
    run (``cancel``), or it raises (``raise``)."""
    import cognee
    from cognee.modules.pipelines.tasks.task import Task

    import memory_core

    reached = asyncio.Event()

    class HostStepFailed(RuntimeError):
        pass

    async def host_step(batches, ctx=None):
        reached.set()
        if how == "raise":
            raise HostStepFailed("the host's own step failed")
        await asyncio.Event().wait()
        return batches

    tasks = memory_core.revision_tasks(app)
    tasks.insert(1, Task(host_step, needs_llm=False))
    run = asyncio.ensure_future(
        cognee.run_custom_pipeline(
            tasks=tasks,
            data=[[{"fact": FACT, "target": f"{prefix}E_qa", "key": f"{prefix}F_audit"}]],
            dataset="host",
            pipeline_name="host_revision",
        )
    )
    await asyncio.wait({run, asyncio.ensure_future(reached.wait())}, return_when=asyncio.FIRST_COMPLETED)
    assert reached.is_set(), run.exception()
    if how == "cancel":
        run.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await run
    assert run.cancelled() if how == "cancel" else run.exception() is not None


@pytest.mark.parametrize("how", ["cancel", "raise"])
async def test_a_host_run_ended_before_the_last_task_gives_the_revision_lock_back(app, prefix, how):
    await app.load(seed_with_prefix(prefix))
    problems_before = set((await app.check())["problems"])
    before = await state(app, prefix)
    await run_ended_early(app, prefix, how)
    # the old code left it held by the dead run: every later call would wait for ever
    leaked = app.stores.revision.locked()
    if leaked:
        app.stores.revision.release()  # the session's other tests (and its close) go on
    assert not leaked, "the ended run still holds the revision lock"
    after = await asyncio.wait_for(state(app, prefix), 120)  # a guard: a regression fails, not hangs
    assert after == before  # nothing of the batch was written
    assert app.journal.pending() is None
    revised = await app.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    assert revised["refuted"] == [f"{prefix}E_qa"], revised
    assert set((await app.check())["problems"]) <= problems_before
