"""One opened facade shared by every client of a long-lived process, lent one session at a time.

The MCP tools, the viewer's routes and the warm CLI all reach the data root through one
:class:`Gate`, each call as a session::

    async with gate.session() as fx:
        result = await fx.revise("Forensic audit: ...", target="E_qa")

A session holds the gate's one ``asyncio.Lock`` from entering to leaving, on the event
loop that opened the facade (cognee's engines are bound to it), so a revision never
interleaves with another and readers never see half of one. ``fx`` is a
:class:`Session`: the facade's methods, typed as :class:`~memory_core.api.Falsify`
declares them, each calling the facade's own method. A call the facade declares as
writing (``@writes`` in :mod:`memory_core.api`, read by
:func:`~memory_core.api.changes_graph`: not a dry run, ``check`` only with ``repair``)
that succeeds is announced to every subscriber (the viewer's live updates) when the
session ends, after the lock is let go.

The gate's ``app`` is the facade itself, or a zero-argument callable returning it (or
an awaitable of it), e.g. ``Gate(lambda: Falsify.open(root))``; a gate that opened its
facade also closes it. An opening that failed (the root busy, a bad setting) is tried
again by the next session, never remembered.

This module sits between the API and the shells (``mcp/``, ``web/``, ``shell/``): it
imports the facade, and every shell imports it.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
from types import TracebackType
from typing import Any, Awaitable, Callable, Concatenate, Optional, ParamSpec, TypeVar, Union

from memory_core.api import Falsify, changes_graph
from memory_core.core.errors import FacadeClosed

_P = ParamSpec("_P")
_R = TypeVar("_R")

Opener = Callable[[], Union[Falsify, Awaitable[Falsify]]]


def _through(
    declared: Callable[Concatenate[Falsify, _P], Awaitable[_R]],
    own: Callable[[Falsify], Callable[_P, Awaitable[_R]]],
) -> Callable[Concatenate["Session", _P], Awaitable[_R]]:
    """A :class:`Session` method: ``own(facade)`` (the facade's own method, so a facade of
    a subclass keeps its behaviour) called with the caller's arguments, typed as
    ``declared`` (the :class:`Falsify` method); a successful call that ``declared``'s
    declaration says changes the graph is recorded for the session's end."""
    signature = inspect.signature(declared)

    async def method(self: Session, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        result = await own(self._held())(*args, **kwargs)
        if changes_graph(declared, signature.bind_partial(None, *args, **kwargs).arguments):
            self._changes.append((declared.__name__, result))
        return result

    functools.update_wrapper(method, declared)  # its name, docstring and signature: the facade's
    method.__qualname__ = f"Session.{declared.__name__}"
    return method


def _read(
    declared: Callable[Concatenate[Falsify, _P], _R], own: Callable[[Falsify], Callable[_P, _R]]
) -> Callable[Concatenate["Session", _P], _R]:
    """A :class:`Session` method for one of the facade's synchronous readers (none writes)."""

    def method(self: Session, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return own(self._held())(*args, **kwargs)

    functools.update_wrapper(method, declared)  # its name, docstring and signature: the facade's
    method.__qualname__ = f"Session.{declared.__name__}"
    return method


class SessionEnded(RuntimeError):
    """A :class:`Session` used outside its ``async with`` block (it no longer holds the gate)."""


class Session:
    """The gate's facade lent to one caller: ``async with gate.session() as fx``. Entering
    waits for the facade to be open and for the gate's turn; leaving gives the turn back and
    announces what the session changed. Its methods are the facade's (same arguments, same
    results, same errors); :attr:`facade` is the facade itself, for work that goes one level
    down (a CLI command run for the warm CLI), whose changes the caller announces."""

    def __init__(self, gate: Gate):
        self._gate = gate
        self._app: Optional[Falsify] = None
        self._changes: list[tuple[str, Any]] = []

    async def __aenter__(self) -> Session:
        app = await self._gate.ready()
        await self._gate._lock.acquire()
        self._app = app
        return self

    async def __aexit__(
        self,
        kind: Optional[type[BaseException]],
        error: Optional[BaseException],
        trace: Optional[TracebackType],
    ) -> None:
        self._app = None
        self._gate._lock.release()
        changes, self._changes = self._changes, []
        for method, result in changes:  # what succeeded changed the graph, whatever came after it
            self._gate.announce(method, result)

    def _held(self) -> Falsify:
        if self._app is None:
            raise SessionEnded(
                "this FALSIFY session is not open: use it inside `async with gate.session() as fx`"
            )
        return self._app

    @property
    def facade(self) -> Falsify:
        """The facade itself, while the session holds the gate (calls on it are not announced)."""
        return self._held()

    # writing (each declared in memory_core.api)
    load = _through(Falsify.load, lambda fx: fx.load)
    load_file = _through(Falsify.load_file, lambda fx: fx.load_file)
    revise = _through(Falsify.revise, lambda fx: fx.revise)
    revise_many = _through(Falsify.revise_many, lambda fx: fx.revise_many)
    resolve = _through(Falsify.resolve, lambda fx: fx.resolve)
    undo = _through(Falsify.undo, lambda fx: fx.undo)
    check = _through(Falsify.check, lambda fx: fx.check)
    # reading
    status = _through(Falsify.status, lambda fx: fx.status)
    snapshot = _through(Falsify.snapshot, lambda fx: fx.snapshot)
    recall = _through(Falsify.recall, lambda fx: fx.recall)
    search = _through(Falsify.search, lambda fx: fx.search)
    explain = _through(Falsify.explain, lambda fx: fx.explain)
    revision_log = _read(Falsify.revision_log, lambda fx: fx.revision_log)
    timeline = _read(Falsify.timeline, lambda fx: fx.timeline)
    default_question = _read(Falsify.default_question, lambda fx: fx.default_question)
    forgotten = _read(Falsify.forgotten, lambda fx: fx.forgotten)


class Gate:
    """The one opened facade of a long-lived process (see the module's docstring)."""

    def __init__(self, app: Union[Falsify, Opener]):
        self._owned = callable(app)  # a factory (the facade itself is not callable)
        self._factory: Optional[Opener] = app if callable(app) else None
        self.app: Optional[Falsify] = None if callable(app) else app
        self._lock = asyncio.Lock()
        self._opening: Optional[asyncio.Future] = None
        self._subscribers: set[asyncio.Queue] = set()
        self._versions = itertools.count(1)
        self.version = 0
        self.closed = False

    # ---- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Begin opening the facade in the running loop (idempotent); sessions wait for it."""
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())

    async def _open(self) -> Falsify:
        if self._factory is None:
            assert self.app is not None
            return self.app
        result = self._factory()
        if inspect.isawaitable(result):
            result = await result
        self.app = result
        return result

    async def ready(self) -> Falsify:
        """The opened facade (opening it first if needed); an opening error is raised here,
        and the next call opens again (a root busy a moment ago may be free now)."""
        if self.closed:  # a server shutting down: a FALSIFY error its shells answer in one line
            raise FacadeClosed(
                "this FALSIFY session is closed (the server is stopping); nothing was read or written"
            )
        failed = (
            self._opening is not None
            and self._opening.done()
            and (self._opening.cancelled() or self._opening.exception() is not None)
        )
        if failed:
            self._opening = None
        self.start()
        assert self._opening is not None
        return await asyncio.shield(self._opening)

    def session(self) -> Session:
        """``async with gate.session() as fx``: the facade for one caller, one at a time."""
        return Session(self)

    async def close(self) -> None:
        """Close the facade this gate opened (after the running session, if any)."""
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
        async with self._lock:
            result = app.close()
            if inspect.isawaitable(result):
                await result

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
        event = {
            "version": self.version,
            "kind": kind,
            "result": result if kind == "revise" and isinstance(result, dict) else None,
        }
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:  # a stalled viewer: drop its oldest, keep the newest
                try:
                    queue.get_nowait()
                    queue.put_nowait(event)
                except (asyncio.QueueEmpty, asyncio.QueueFull):
                    pass
