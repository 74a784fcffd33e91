"""Task 5: forget the dead ends nothing alive needs any more (``core.forget``), for the
fact in hand. Forgotten nodes are deleted from both stores by the write; in the
shared view they stay as ghosts (as nodes forgotten by earlier revisions are
rebuilt from their tombstones), so a later fact of the same batch that brings
one back restores it exactly as a revision one at a time would."""

from __future__ import annotations

from memory_core.core import revision
from memory_core.tasks.batch import FactJob
from memory_core.tasks.timing import timed


@timed("forget_orphan_deadends")
async def _forget(job: FactJob) -> None:
    if job.plan is None:
        return
    batch, view = job.batch, job.batch.belief_view
    for key in job.plan.restored:  # forgotten by an earlier fact of this batch, back now: not forgotten
        batch.forgotten_nodes.pop(key, None)
    for key in revision.forget_orphans(view, job.plan, set(batch.ghosts) | set(batch.forgotten_nodes)):
        batch.forgotten_nodes[key] = view.nodes[key]
    # the batch's later facts remember this one's deaths, promotions and weakenings as the
    # log would after a revision one at a time (the batch's copy: the log's own memory is not touched)
    if batch.memory is not None:
        batch.memory.absorb(job.plan)


async def forget_orphan_deadends(jobs, ctx=None):
    return await _forget(jobs)
