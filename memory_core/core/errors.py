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
JudgeError          5     the LLM judge failed (timeout, error status, malformed verdict,
                          spending cap reached)
HostConfigError     6     ``Falsify.attach``: the host's cognee configuration is one FALSIFY
                          cannot work on (the message names the setting to change)
FacadeClosed        1     a closed ``Falsify`` (or Tasks bound to it) was used: nothing written
RootConflict        1     this process already serves another data root (cognee holds one
                          configuration per process)
==================  ====  ==========================================================
"""

from __future__ import annotations

import re
from contextvars import ContextVar


class FalsifyError(Exception):
    """Base class of every FALSIFY error."""

    exit_code = 1


class InputError(FalsifyError, ValueError):
    """Bad input: a clear message naming the offending entry; nothing was written."""

    exit_code = 2


class RootBusy(FalsifyError):
    """The data root is in use by another writer (the message names it)."""

    exit_code = 3


class EmbedderMismatch(FalsifyError):
    """The data root was built with another embedder: its vectors cannot be compared."""

    exit_code = 4


class JudgeError(FalsifyError):
    """The judge could not give a usable verdict (timeout, HTTP error, bad output)."""

    exit_code = 5


class HostConfigError(FalsifyError):
    """The host's cognee configuration cannot carry FALSIFY (the message names the setting)."""

    exit_code = 6


class FacadeClosed(FalsifyError):
    """The ``Falsify`` these Tasks (or this call) belong to is closed: its writer lock is
    released, so nothing may be written through it."""


class RootConflict(FalsifyError, RuntimeError):
    """One process serves one data root: cognee is already configured for another."""


__all__ = ["FalsifyError", "InputError", "RootBusy", "EmbedderMismatch", "JudgeError", "HostConfigError",
           "FacadeClosed", "RootConflict", "error_message", "render", "speak", "VOCABULARY"]


# ---- each shell speaks its caller's vocabulary ----------------------------------------------
# Messages and notes are produced once, naming an argument by its CLI flag (``--target``); each
# shell renders them: the CLI as they are, the Python API with the keyword (``target='E1'``, or
# ``target``), the MCP server with the tool argument (``target``). The CLI sets VOCABULARY to
# "cli" for its commands; the facade (memory_core.api) renders what it raises and returns.
VOCABULARY: ContextVar[str] = ContextVar("falsify_vocabulary", default="python")

# CLI flag -> the argument's name in the Python API and in the MCP tools
ARGUMENTS = {"--target": "target", "--triple": "triple", "--trust": "trust", "--source": "source",
             "--key": "key", "--policy": "policy", "--asserted-at": "asserted_at", "--winner": "winner",
             "--dry-run": "dry_run", "--root": "root"}
_FLAG = re.compile(r"--(?:" + "|".join(re.escape(f[2:]) for f in sorted(ARGUMENTS, key=len, reverse=True))
                   + r")(?![\w-])( (?=['\"]|[A-Z]{2,}\b))?")


def render(text: str, vocabulary: str | None = None) -> str:
    """``text`` with its CLI flags in ``vocabulary``'s words: "cli" (unchanged), "python"
    (``--target 'E1'`` -> ``target='E1'``), "mcp" (``--target 'E1'`` -> ``target 'E1'``)."""
    vocabulary = vocabulary or VOCABULARY.get()
    if vocabulary == "cli" or "--" not in text:
        return text

    def word(match: re.Match) -> str:
        name = ARGUMENTS[match.group(0).rstrip()]
        if match.group(1):  # a value follows
            return name + ("=" if vocabulary == "python" else " ")
        return name

    return _FLAG.sub(word, text)


def speak(error: BaseException, vocabulary: str | None = None) -> BaseException:
    """Render ``error``'s message (in place; same class, same traceback) and return it."""
    if error.args and isinstance(error.args[0], str):
        error.args = (render(error.args[0], vocabulary),) + error.args[1:]
    return error


def error_message(error: BaseException) -> str:
    """The one line the CLI prints for ``error`` on stderr; the warm CLI and the MCP
    tools report the same text. Secrets an endpoint echoed are masked (:mod:`memory_core.core.redaction`)."""
    from memory_core.core.redaction import redact

    suffix = "; the revision was aborted and nothing was written" if isinstance(error, JudgeError) else ""
    return redact(f"error: {error}{suffix}")
