"""Task 4: supersede a hypothesis that lost its support, promote the best-supported
rival (``core.promotion``), for the fact in hand."""

from __future__ import annotations

from memory_core.core import revision
from memory_core.tasks.batch import FactJob
from memory_core.tasks.timing import timed


@timed("promote_competing_hypothesis")
async def _promote(job: FactJob) -> None:
    if job.plan is not None:
        revision.promote_competing_hypothesis(job.batch.view, job.plan, job.batch.memory)


async def promote_competing_hypothesis(jobs, ctx=None):
    return await _promote(jobs)
