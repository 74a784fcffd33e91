"""FALSIFY's one exception hierarchy. Every error a caller can meet is a
:class:`FalsifyError`; its ``exit_code`` is what the CLI exits with (mapped in
one place, :func:`memory_core.shell.commands.run`), and what the MCP server and the
web API report.

==================  ====  ==========================================================
class               exit  meaning
==================  ====  ==========================================================
FalsifyError        1     an unexpected failure (the base class)
InputError          2     bad input (file, fact, key, flag, JSON): nothing was written
RootBusy            3     another process held the data root's writer lock too long
EmbedderMismatch    4     the data root was built with another embedder
BackendMismatch     4     the data root was made for another backend (PostgreSQL, or the
                          embedded one) than the settings select
JudgeError          5     the LLM judge failed (timeout, error status, malformed verdict,
                          spending cap reached)
HostConfigError     6     ``Falsify.attach``: the host's cognee configuration is one FALSIFY
                          cannot work on (the message names the setting to change);
                          ``Falsify.open`` in a program that configured cognee itself
FacadeClosed        1     a closed ``Falsify`` (or Tasks bound to it) was used: nothing written
RootConflict        1     this process already serves another data root (cognee holds one
                          configuration per process)
DatabaseUnavailable 7     the PostgreSQL database cannot be reached, refused the connection or
                          has no pgvector extension this role may create
                          (``memory_core.store.backends.postgres``); nothing was created; or
                          the connection was lost during a command (a write rolled back, or
                          left journalled for the database's next writer to roll back)
WriterLockLost      7     the session holding the PostgreSQL database's writer lock ended
                          (a restart, a failover, ``idle_session_timeout``, a terminated
                          session): another process may write now, so this one writes nothing
==================  ====  ==========================================================
"""

from __future__ import annotations

import functools
from typing import Optional
import re
from contextvars import ContextVar


class FalsifyError(Exception):
    """Base class of every FALSIFY error. ``applied``: when the error stopped a host's pipeline
    run part-way, the results of the facts that run had applied before it (in order; empty
    when nothing was), so the host knows what landed (docs/cognee-tasks.md)."""

    exit_code = 1
    applied: tuple = ()


class InputError(FalsifyError, ValueError):
    """Bad input: a clear message naming the offending entry; nothing was written.
    ``field``: the request field it is about (``"target"``, ``"trust"``, ...), when it is
    about one (:mod:`memory_core.core.fields`); each shell names it its own way."""

    exit_code = 2

    def __init__(self, *args, field: str | None = None):
        super().__init__(*args)
        self.field = field


class RootBusy(FalsifyError):
    """The data root is in use by another writer (the message names it)."""

    exit_code = 3


class EmbedderMismatch(FalsifyError):
    """The data root was built with another embedder: its vectors cannot be compared."""

    exit_code = 4


class BackendMismatch(FalsifyError):
    """The data root was made for another backend than the settings select (a PostgreSQL root
    opened without its database URL would be an empty embedded root): nothing was opened."""

    exit_code = 4


class JudgeError(FalsifyError):
    """The judge could not give a usable verdict (timeout, HTTP error, bad output).
    Raised for one of many facts judged together: ``judged`` = how many leading facts were
    fully judged before it, ``results`` = their verdicts (the judge's), ``detections`` = their
    detections (detection's), for the caller to apply."""

    exit_code = 5
    judged: int = 0
    results: Optional[list] = None
    detections: Optional[list] = None


class HostConfigError(FalsifyError):
    """The host's cognee configuration cannot carry FALSIFY (the message names the setting)."""

    exit_code = 6


class FacadeClosed(FalsifyError):
    """The ``Falsify`` these Tasks (or this call) belong to is closed: its writer lock is
    released, so nothing may be written through it."""


class RootConflict(FalsifyError, RuntimeError):
    """One process serves one data root: cognee is already configured for another."""


class DatabaseUnavailable(FalsifyError):
    """The PostgreSQL database could not be reached, or refused the connection (the message
    names its host:port and database, never the password): nothing was opened."""

    exit_code = 7


class WriterLockLost(DatabaseUnavailable):
    """This process no longer holds the PostgreSQL database's writer lock: the session that
    held it ended, so another process may have taken it. Every write is refused from then on
    (the opening must be made again); nothing of the refused write was committed."""


__all__ = [
    "FalsifyError",
    "InputError",
    "RootBusy",
    "EmbedderMismatch",
    "BackendMismatch",
    "JudgeError",
    "HostConfigError",
    "FacadeClosed",
    "RootConflict",
    "DatabaseUnavailable",
    "WriterLockLost",
    "error_message",
    "render",
    "speak",
    "spoken",
    "VOCABULARY",
    "VOCABULARIES",
]


# ---- each shell speaks its caller's vocabulary ----------------------------------------------
# Messages, notes and rationales are produced once, naming an argument by its CLI flag
# (``--target``); each shell renders them: the CLI as they are ("cli"), the Python API with the
# keyword ("python": ``target='E1'``, or ``target``), the MCP server with the tool argument
# ("mcp": ``target 'E1'``), the viewer's JSON API with the body's field ("viewer", the same
# words). The CLI sets VOCABULARY to "cli" for its commands, the MCP tools to "mcp", the
# viewer's routes to "viewer"; the facade (memory_core.api) and the cognee Tasks render what they
# raise and return.
VOCABULARY: ContextVar[str] = ContextVar("falsify_vocabulary", default="python")
VOCABULARIES = ("cli", "python", "mcp", "viewer")


@functools.lru_cache(maxsize=1)
def _words() -> tuple[dict, set, re.Pattern]:
    """CLI flag -> the argument's name in the Python API, the MCP tools and the viewer's API (the
    request's fields, declared once in memory_core.core.fields, and the other commands'
    arguments); the switches among them; the pattern finding them in a text. Read on first use:
    this module stays standard library only at import (the warm CLI's client loads it alone)."""
    from memory_core.core.fields import FIELDS, OTHER_ARGUMENTS

    arguments = {**{f.flag: f.name for f in FIELDS if f.flag}, **OTHER_ARGUMENTS}
    switches = {f.name for f in FIELDS if f.kind == "bool"} | {"repair"}
    pattern = re.compile(
        r"--(?:"
        + "|".join(re.escape(f[2:]) for f in sorted(arguments, key=len, reverse=True))
        + r")(?![\w-])( (?=['\"]|[A-Z]{2,}\b))?"
    )
    return arguments, switches, pattern


def render(text: str, vocabulary: str | None = None) -> str:
    """``text`` with its CLI flags in ``vocabulary``'s words: "cli" (unchanged), "python"
    (``--target 'E1'`` -> ``target='E1'``), "mcp" and "viewer" (``--target 'E1'`` ->
    ``target 'E1'``)."""
    vocabulary = vocabulary or VOCABULARY.get()
    if vocabulary == "cli" or "--" not in text:
        return text

    arguments, switches, pattern = _words()
    if "`" in text:  # a command quoted in backticks is the CLI's own words: kept as it is
        parts = text.split("`")
        return "`".join(part if i % 2 else render(part, vocabulary) for i, part in enumerate(parts))
    for phrase, words in _PHRASES.items():  # a command named in a note: the caller's own way to run it
        if phrase in text:
            return render(text.replace(phrase, words.get(vocabulary, words["mcp"])), vocabulary)

    def word(match: re.Match) -> str:
        name = arguments[match.group(0).rstrip()]
        if match.group(1):  # a value follows
            return name + ("=" if vocabulary == "python" else " ")
        if name in switches:  # a CLI switch is a true/false argument elsewhere
            return name + ("=True" if vocabulary == "python" else ": true")
        return name

    return pattern.sub(word, text)


def speak(error: BaseException, vocabulary: str | None = None) -> BaseException:
    """Render ``error``'s message (in place; same class, same traceback) and return it, with
    every secret an endpoint echoed into it masked (a host may print or forward it)."""
    from memory_core.core.redaction import redact

    if error.args and isinstance(error.args[0], str):
        error.args = (redact(render(error.args[0], vocabulary)),) + error.args[1:]
    return error


# commands a message may name, in each caller's words (a Python caller repairs with check(repair=True);
# the MCP tools repair nothing: the CLI does)
_PHRASES = {"check --repair": {"python": "check(repair=True)", "mcp": "the CLI's `check --repair`"}}

_WORDED = ("note", "notes", "rationale", "to_decide_note")


def spoken(value, vocabulary: str | None = None):
    """A result (a dict, or a list of them, nested in ``result``/``candidates``/... as
    results are) with its notes and the candidates' rationales rendered in place for
    ``vocabulary`` (default: the caller's, :data:`VOCABULARY`). Returns ``value``."""
    if isinstance(value, list):
        for item in value:
            spoken(item, vocabulary)
    elif isinstance(value, dict):
        for name, item in value.items():
            if name in _WORDED and isinstance(item, str):
                value[name] = render(item, vocabulary)
            elif name in _WORDED and isinstance(item, list):
                value[name] = [render(n, vocabulary) if isinstance(n, str) else n for n in item]
            elif isinstance(item, (list, dict)):
                spoken(item, vocabulary)
    return value


def error_message(error: BaseException) -> str:
    """The one line the CLI prints for ``error`` on stderr; the warm CLI and the MCP
    tools report the same text. Secrets an endpoint echoed are masked (:mod:`memory_core.core.redaction`)."""
    from memory_core.core.redaction import redact

    suffix = "; the revision was aborted and nothing was written" if isinstance(error, JudgeError) else ""
    return redact(f"error: {error}{suffix}")
