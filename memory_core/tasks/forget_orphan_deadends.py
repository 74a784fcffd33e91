"""Task 5: forget the dead ends nothing alive needs any more (``core.forget``), for the
fact in hand. Forgotten nodes leave the shared view (the facts after this one
no longer see them) and are deleted from both stores by the write."""

from __future__ import annotations

from memory_core.core import revision
from memory_core.tasks.batch import FactJob
from memory_core.tasks.timing import timed


@timed("forget_orphan_deadends")
async def _forget(job: FactJob) -> None:
    if job.plan is None:
        return
    batch = job.batch
    for key in revision.forget_orphans(batch.view, job.plan, set(batch.ghosts)):
        batch.forgotten_nodes[key] = batch.view.remove_node(key)


async def forget_orphan_deadends(jobs, ctx=None):
    return await _forget(jobs)
