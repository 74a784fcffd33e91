"""One opened facade shared by every client of a long-lived process.

The MCP tools, the viewer's routes and the warm CLI all reach the data root
through one :class:`Gate`: calls run one at a time under one ``asyncio.Lock``,
on the event loop that opened the facade (cognee's engines are bound to it), so
a revision never interleaves with another and readers never see half of one.
A call that changes the graph is announced to every subscriber (the viewer's
live updates).

``app`` is the facade itself, or a zero-argument callable returning it (or an
awaitable of it), e.g. ``Gate(lambda: Falsify.open(root))``; a gate that opened
its facade also closes it. An opening that failed (the root busy, a bad setting) is
tried again by the next call, never remembered.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from typing import Any, Optional

# Facade methods that may change the graph (announced when they succeed).
WRITES = frozenset({"load", "load_file", "revise", "revise_many", "resolve", "undo", "check"})


def _changes(method: str, kwargs: dict) -> bool:
    if method not in WRITES or kwargs.get("dry_run"):
        return False
    return method != "check" or bool(kwargs.get("repair"))


class Gate:
    def __init__(self, app: Any):
        self._owned = callable(app) and not hasattr(app, "snapshot")
        self._factory = app if self._owned else None
        self.app = None if self._owned else app
        self._lock = asyncio.Lock()
        self._opening: Optional[asyncio.Future] = None
        self._subscribers: set[asyncio.Queue] = set()
        self._versions = itertools.count(1)
        self.version = 0
        self.closed = False

    # ---- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Begin opening the facade in the running loop (idempotent); calls wait for it."""
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())

    async def _open(self):
        if not self._owned:
            return self.app
        result = self._factory()
        if inspect.isawaitable(result):
            result = await result
        self.app = result
        return result

    async def ready(self):
        """The opened facade (opening it first if needed); an opening error is raised here,
        and the next call opens again (a root busy a moment ago may be free now)."""
        if self.closed:
            raise RuntimeError("this FALSIFY session is closed")
        failed = self._opening is not None and self._opening.done() and (
            self._opening.cancelled() or self._opening.exception() is not None)
        if failed:
            self._opening = None
        self.start()
        return await asyncio.shield(self._opening)

    async def close(self) -> None:
        """Close the facade this gate opened (after the running call, if any)."""
        if self.closed:
            return
        self.closed = True
        for queue in list(self._subscribers):
            queue.put_nowait(None)
        if self._opening is None:
            return
        if not self._opening.done():
            self._opening.cancel()
        try:
            app = await self._opening
        except BaseException:
            return
        if not self._owned:
            return
        closer = getattr(app, "aclose", None) or getattr(app, "close", None)
        if closer is not None:
            async with self._lock:
                result = closer()
                if inspect.isawaitable(result):
                    await result

    # ---- calls -------------------------------------------------------------
    async def call(self, method: str, *args, **kwargs):
        """``app.<method>(*args, **kwargs)`` (sync or async) under the lock."""
        app = await self.ready()
        async with self._lock:
            result = getattr(app, method)(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        if _changes(method, kwargs):
            self.announce(method, result)
        return result

    async def run(self, fn):
        """``await fn(app)`` under the lock, for work that makes several calls (a CLI
        command run for the warm CLI); the caller announces changes with :meth:`announce`."""
        app = await self.ready()
        async with self._lock:
            return await fn(app)

    # ---- change notifications ------------------------------------------------
    def subscribe(self) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue(maxsize=64)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        self._subscribers.discard(queue)

    def announce(self, kind: str, result: Any = None) -> None:
        """Tell every subscriber the graph changed: ``{"version", "kind", "result"}`` (the
        revision result for ``revise``, so viewers can play its animation)."""
        self.version = next(self._versions)
        event = {"version": self.version, "kind": kind,
                 "result": result if kind == "revise" and isinstance(result, dict) else None}
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:  # a stalled viewer: drop its oldest, keep the newest
                try:
                    queue.get_nowait()
                    queue.put_nowait(event)
                except (asyncio.QueueEmpty, asyncio.QueueFull):
                    pass
