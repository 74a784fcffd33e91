"""FALSIFY's CPU work on what it read runs off the caller's event loop.

A host awaiting a facade call keeps its asyncio loop running: cognee's engines run their
native queries in their own threads, and what FALSIFY then does with the rows -- decoding
the JSON property blobs, building belief views, labelling, replaying the revision log,
walking a result into plain values -- runs in a worker thread (``asyncio.to_thread``) when
it is large enough to be felt. The caller awaits it; the revision lock and the facade's call
order it holds keep everything else of FALSIFY's out meanwhile.

What runs there must be pure over what it is given, or work on objects of the call's own:
a caller cancelled meanwhile gets ``CancelledError`` at once (nothing half-done: the thread
only computes), and what the thread finishes afterwards is dropped. Never a cognee call: its
engines are bound to the caller's loop (their queries are awaited there; only the rows they
return are handed to a thread).

A function that holds the GIL in one C call (``json.loads`` of one multi-megabyte log line)
holds the loop just as long from a thread; everything else yields the GIL every 5 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from typing import Callable, Iterator, Optional, TypeVar

_R = TypeVar("_R")

# below this many rows (nodes + edges) the work is done at once: a hop to a thread costs ~0.1 ms,
# decoding 64 JSON blobs or building a view of them ~0.5-1 ms
ROWS = 64


async def run(fn: Callable[..., _R], /, *args, size: Optional[int] = None) -> _R:
    """``fn(*args)`` in a worker thread (the caller's context variables go along), or at once
    when ``size`` (rows of work) is given and under :data:`ROWS`."""
    if size is not None and size < ROWS:
        return fn(*args)
    return await asyncio.to_thread(fn, *args)


_holding = threading.Lock()
_holders = 0  # calls under way that hold the collector (collector_held)
_resume = False  # whether the collector was on when the first of them came, so the last turns it on


@contextlib.contextmanager
def collector_held() -> Iterator[None]:
    """Python's cyclic garbage collector held off while a facade call works, process-wide (the
    collector is one per process): on again when the last call holding it ends, however it ends.

    A worker thread does not hide a full collection: it walks every object of the process with
    the GIL held, whichever thread's allocation started it, so the event loop stops for its
    length. A call on a large root allocates far more than the 25 % growth that starts one (a
    9,006-node root: rows, views, decoded properties): 2-3 full collections a call, 450-800 ms
    each in a host that has imported cognee (~430,000 objects). Held off, what the call frees by
    reference counting -- nearly all it made -- is never walked, and what stays (its result,
    any cyclic garbage) is collected by the young collection that follows the call. A host that
    turned the collector off itself keeps it off: then this holds nothing."""
    global _holders, _resume
    with _holding:
        if _holders == 0:
            _resume = gc.isenabled()
            if _resume:
                gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _holding:
            _holders -= 1
            if _holders == 0 and _resume:
                _resume = False
                gc.enable()


__all__ = ["ROWS", "collector_held", "run"]
