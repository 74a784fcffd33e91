"""The wrapper every revision task shares: time each step, keep errors on the batch.

cognee's runner logs and wraps an exception raised inside a task; FALSIFY's
tasks instead record it on the batch as its stop (``RevisionBatch.fail``), skip
the remaining work, and the caller raises it unchanged, once
(``memory_core.tasks.run_revision``; in a host's pipeline the task that ends the batch).
"""

from __future__ import annotations

import functools
import time
from typing import Awaitable, Callable, Sequence, TypeVar, Union

from memory_core.tasks.batch import FactJob, RevisionBatch

Item = TypeVar("Item", FactJob, RevisionBatch)


def _batch_of(item: Union[FactJob, RevisionBatch]) -> RevisionBatch:
    return item.batch if isinstance(item, FactJob) else item


def timed(name: str):
    """For tasks taking one FactJob or RevisionBatch per call (``fn(item)``)."""

    def wrap(fn: Callable[[Item], Awaitable[None]]):
        @functools.wraps(fn)
        async def task(items: Sequence[Item], ctx=None) -> Sequence[Item]:
            for item in items:
                batch = _batch_of(item)
                if batch.failed:
                    continue
                start = time.perf_counter()
                try:
                    await fn(item)
                except BaseException as error:  # raised by the caller after the run
                    batch.fail(error)
                elapsed = round((time.perf_counter() - start) * 1000, 2)
                # a batch's time is shared by its facts
                share = elapsed if isinstance(item, FactJob) else elapsed / max(1, len(batch.jobs))
                for job in [item] if isinstance(item, FactJob) else batch.jobs:
                    job.timings[name] = round(job.timings.get(name, 0.0) + share, 2)
            return items

        task.__name__ = task.__qualname__ = name
        return task

    return wrap
