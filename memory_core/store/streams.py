"""Standard output and error captured for one task, not for the whole process.

``contextlib.redirect_stdout`` swaps ``sys.stdout`` for every thread and task of the process:
a host printing while a revision runs loses its output, and two overlapping redirects can
leave the process's ``sys.stdout`` pointing at a dead buffer for good. :func:`captured` instead
routes writes by the writing task's context: ``sys.stdout``/``sys.stderr`` become (once, and
again if something replaces them) a thin proxy that writes where the current context says,
else to the stream it wraps. A context is inherited by the tasks a task starts and by
``asyncio.to_thread`` (cognee's migrations print from there), so what FALSIFY's own work
prints is captured and everything else goes where it always went.
"""

from __future__ import annotations

import contextlib
import io
import sys
from contextvars import ContextVar
from typing import Iterator, Optional, TextIO

_ROUTES: ContextVar[Optional[dict[str, TextIO]]] = ContextVar("falsify_stream_routes", default=None)


class _Routed(io.TextIOBase):
    """``sys.<name>`` as seen by every writer: the current context's target, else the stream
    it wraps (its attributes -- encoding, buffer, fileno -- are that stream's)."""

    def __init__(self, name: str, wrapped: TextIO):
        super().__init__()
        self._name = name
        self._wrapped = wrapped

    def _target(self) -> TextIO:
        routes = _ROUTES.get()
        return (routes or {}).get(self._name) or self._wrapped

    def write(self, text: str) -> int:
        return self._target().write(text)

    def writelines(self, lines) -> None:
        self._target().writelines(lines)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self._target().isatty()

    def writable(self) -> bool:
        return True

    def __getattr__(self, attribute: str):
        return getattr(self._wrapped, attribute)


def _install(name: str) -> None:
    current = getattr(sys, name)
    if not isinstance(current, _Routed):
        setattr(sys, name, _Routed(name, current))


@contextlib.contextmanager
def captured(stdout: Optional[TextIO] = None, stderr: Optional[TextIO] = None) -> Iterator[None]:
    """Within the block, what this task (and the tasks and worker threads it starts) writes to
    ``sys.stdout``/``sys.stderr`` goes to ``stdout``/``stderr`` (None: where it went before)."""
    routes = dict(_ROUTES.get() or {})
    for name, target in (("stdout", stdout), ("stderr", stderr)):
        if target is not None:
            _install(name)
            routes[name] = target
    token = _ROUTES.set(routes)
    try:
        yield
    finally:
        _ROUTES.reset(token)


def silenced() -> contextlib.AbstractContextManager[None]:
    """What this task prints to standard output is dropped (a library's chatter)."""
    return captured(stdout=io.StringIO())
