"""Process-wide allocator settings, applied once before cognee (and its native libraries'
worker threads) start (:func:`configure_process`, run by ``settings.configure``;
``Falsify.attach`` leaves them to the host), and giving freed native memory back.

* ``FALSIFY_MALLOC_ARENA_MAX`` (default 2; 0 = glibc's default of 8 per core):
  ``mallopt(M_ARENA_MAX)``. LanceDB's tokio worker threads each get a glibc arena of
  their own and memory freed in one is not reused by another; measured with
  ``bench.soak --probe``, memory malloc held free grew 134 -> 371 MB over 200
  revisions with the default, and stayed at ~85 MB with 2 arenas.
* ``FALSIFY_ARROW_POOL`` (default ``system``; empty = pyarrow's default, mimalloc):
  sets ``ARROW_DEFAULT_MEMORY_POOL`` unless the caller set it. mimalloc kept the
  pages of freed Arrow buffers in its own 1 GiB arena (growing ~14 MB per 100
  revisions with nothing allocated), out of ``malloc_trim``'s reach.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gc
import os
import sys
import threading
from typing import Optional

from memory_core.store import settings as config

# FALSIFY's import of cognee in this process (memory_core.store.data_root.import_cognee): one run,
# in the thread that started it; every other caller waits for that same run
importing: Optional[concurrent.futures.Future] = None
importing_lock = threading.Lock()


def import_unfinished() -> bool:
    """Whether FALSIFY's import of cognee in this process is under way in some thread, or failed
    (cognee may be in ``sys.modules`` then, half initialised: nothing of it may be used, and no
    engine of it can have started)."""
    running = importing
    return running is not None and (not running.done() or running.exception() is not None)


M_ARENA_MAX = -8  # glibc mallopt parameter (malloc.h)

_process: dict = {}


def stats() -> dict:
    """The allocator settings :func:`configure_process` applied (empty before it ran)."""
    return dict(_process)


def configure_process(settings: config.Settings) -> dict:
    """Process-wide allocator settings, applied once before cognee (and its native
    libraries' worker threads) start: ``FALSIFY_MALLOC_ARENA_MAX`` caps glibc's malloc
    arenas (``mallopt(M_ARENA_MAX)``; 0 = glibc's default of 8 per core). LanceDB's and
    Ladybug's worker threads each get an arena of their own otherwise, and freed memory
    in one arena is not reused by another thread's."""
    if _process:
        return dict(_process)
    pool = settings.arrow_pool
    if pool:
        # pyarrow's default pool is mimalloc, which keeps the pages of freed Arrow buffers
        # (LanceDB's query results, cognee's row batches) in its own 1 GiB arena, out of
        # malloc_trim's reach; the system pool frees them into glibc, which gives them back
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", pool)
        if "pyarrow" in sys.modules:
            with contextlib.suppress(Exception):
                import pyarrow

                pyarrow.set_memory_pool(
                    {
                        "system": pyarrow.system_memory_pool,
                        "jemalloc": pyarrow.jemalloc_memory_pool,
                        "mimalloc": pyarrow.mimalloc_memory_pool,
                    }[pool]()
                )
    _process["arrow_pool"] = os.environ.get("ARROW_DEFAULT_MEMORY_POOL")
    arenas = settings.malloc_arena_max
    _process["malloc_arena_max"] = arenas or None
    if arenas:
        try:
            import ctypes

            _process["malloc_arena_max_set"] = bool(ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas))
        except Exception:  # noqa: BLE001  (not glibc)
            _process["malloc_arena_max_set"] = False
    return dict(_process)


@contextlib.contextmanager
def collector_paused(freeze: bool):
    """Python's cyclic garbage collector off while a large package tree is imported, then on
    again. ``import cognee`` builds about 400,000 long-lived objects (modules, classes,
    functions) and almost no garbage; every time that count grows by a quarter the collector
    walks all of it, six full collections costing 0.9-1.2 s of a cold command's 6-8 s, for
    about 2,800 objects of garbage (4 MB, frozen with the rest). ``freeze``: the objects then
    alive move to the collector's permanent generation (:func:`gc.freeze`), so later full
    collections walk only what came after (a 300-fact batch's one full collection: 0.27 s ->
    0.02 s); only for a process of FALSIFY's own, as it also freezes whatever the rest of a host
    program holds."""
    if not gc.isenabled():  # the caller manages the collector itself
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        gc.enable()


def trim_native_heap() -> bool:
    """Give freed native memory back to the OS (glibc ``malloc_trim``): Ladybug and
    LanceDB free their buffers into malloc's arenas, which otherwise keep them."""
    try:
        import ctypes

        if "pyarrow" in sys.modules:  # Arrow's pool first: what it releases, malloc_trim returns
            with contextlib.suppress(Exception):
                sys.modules["pyarrow"].default_memory_pool().release_unused()
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except Exception:  # not glibc
        return False


def rss_mb() -> float:
    """This process's resident memory in MB (0 where /proc is not there)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
