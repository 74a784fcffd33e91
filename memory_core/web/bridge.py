"""The thread/loop bridge: one asyncio loop in a daemon thread.

cognee's engines are bound to the event loop they were created on, so a server
owns ONE loop for its whole life: the facade opens on it, the HTTP server
(uvicorn) and the MCP session manager run on it, and synchronous callers (the
tests, ``serve()``) hand it work through :meth:`LoopThread.submit`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Awaitable, Callable, TypeVar

T = TypeVar("T")


async def _cancel_pending() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class LoopThread:
    def __init__(self, name: str = "falsify-loop"):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def ident(self) -> int | None:
        return self._thread.ident

    def spawn(self, make: Callable[[], Awaitable[T]]) -> concurrent.futures.Future:
        """Start ``await make()`` in the loop; returns its (thread-safe) future."""

        async def job():
            return await make()

        return asyncio.run_coroutine_threadsafe(job(), self.loop)

    def submit(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run ``await make()`` in the loop; block this thread for its result (or exception)."""
        return self.spawn(make).result(timeout)

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        if self._thread.is_alive():  # cancel what is still pending (e.g. sse-starlette's shutdown watcher),
            try:  # so closing the loop destroys no pending task
                asyncio.run_coroutine_threadsafe(_cancel_pending(), self.loop).result(10)
            except (concurrent.futures.TimeoutError, RuntimeError):
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self.loop.close()
