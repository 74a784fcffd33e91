"""The opened stores every operation works on.

An operation is a function taking a :class:`Stores` (never the facade): the
belief store (cognee's graph and vector engines), the journal (intents and the
revision log), where it has one the data root's paths, and the revision lock
that lets one revision at a time change them in this process.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from memory_core.core.errors import FacadeClosed
from memory_core.store.belief_store import BeliefStore
from memory_core.store.journal import Journal

if TYPE_CHECKING:
    from memory_core.store.settings import Settings
    from memory_core.store.data_root import Paths


class RevisionLock:
    """One change at a time on one opened stores object (a process serves one data root): a
    revision takes it in its pipeline, the facade's other changes (load, resolve, undo, check)
    around their whole run.

    An asyncio lock that counts its turns: :meth:`take` returns the turn it got (1, 2, ...),
    so a holder can tell whether anyone else held the lock since an earlier turn of its own
    (an early detection is kept only if nobody did). ``async with`` waits for a turn and
    gives it back at once (every revision queued ahead has finished)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self.turns = 0  # how many times the lock has been taken
        self._holder: Optional[asyncio.Task] = None  # the task that took it, while it is held
        self.shut = False  # set when the facade closes: a turn taken after that is refused

    async def take(self) -> int:
        await self._lock.acquire()
        if self.shut:  # the facade closed while this call waited: it must not touch the stores
            self._lock.release()
            raise FacadeClosed(
                "this Falsify was closed while the call waited for its turn (its writer lock and "
                "stores are released); open or attach the root again; nothing was read or written"
            )
        self.turns += 1
        self._holder = asyncio.current_task()
        return self.turns

    def release(self) -> None:
        self._holder = None
        self._lock.release()

    async def shut_down(self, task: Optional[asyncio.Task] = None) -> None:
        """Refuse every turn from now on, and wait for the one under way (unless ``task``, by
        default the running one, holds it: waiting there would never end)."""
        self.shut = True
        if not self.held_here(task):
            await self._lock.acquire()
            self._lock.release()

    def held_here(self, task: Optional[asyncio.Task] = None) -> bool:
        """Whether ``task`` (by default the running one) holds the lock (waiting for it there
        would never end)."""
        return self._lock.locked() and self._holder is (task or asyncio.current_task())

    def locked(self) -> bool:
        return self._lock.locked()

    def release_held_by(self, task: asyncio.Task) -> None:
        """Give the lock back if ``task`` (one that ended) still holds it."""
        if self._lock.locked() and self._holder is task:
            self.release()

    async def __aenter__(self) -> int:
        return await self.take()

    async def __aexit__(self, *exc: object) -> None:
        self.release()


@dataclass
class Stores:
    store: BeliefStore
    journal: Journal
    paths: Optional[Paths] = None  # None when attached to a host's cognee
    hook: Optional[Callable[[str], None]] = None  # fault injection / progress: called with a step name
    recovered: Optional[str] = None  # what opening the root recovered, if anything
    # opened under the root's writer lock; without it (a reader) an unfinished change in the
    # journal may be the one a live writer is applying: it is reported, never rolled back
    holds_writer_lock: bool = True
    revision: RevisionLock = field(default_factory=RevisionLock, init=False, repr=False, compare=False)

    @property
    def settings(self) -> Settings:
        """The settings the opened stores go by."""
        return self.store.settings

    def default_question(self) -> Optional[str]:
        return self.journal.meta().get("default_question")
