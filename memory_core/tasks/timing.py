"""The wrapper every revision task shares: time each step, keep errors on the batch.

cognee's runner logs and wraps an exception raised inside a task; FALSIFY's
tasks instead record it on the batch (``batch.error``), skip the remaining
work, and the caller re-raises it unchanged (``memory_core.store.pipeline``).
"""

from __future__ import annotations

import functools
import time


def timed(name: str):
    """For tasks taking one FactJob or RevisionBatch per call (``fn(item)``)."""
    def wrap(fn):
        @functools.wraps(fn)
        async def task(items, ctx=None):
            for item in items:
                batch = getattr(item, "batch", item)
                if batch.error is not None:
                    continue
                start = time.perf_counter()
                try:
                    await fn(item)
                except BaseException as error:  # surfaced by the caller after the run
                    batch.error = error
                elapsed = round((time.perf_counter() - start) * 1000, 2)
                for job in ([item] if item is not batch else batch.jobs):
                    job.timings[name] = round(job.timings.get(name, 0.0) + (elapsed if item is not batch
                                                                              else elapsed / max(1, len(batch.jobs))), 2)
            return items
        task.__name__ = task.__qualname__ = name
        return task
    return wrap
