"""FALSIFY's one exception hierarchy. Every error a caller can meet is a
:class:`FalsifyError`; its ``exit_code`` is what the CLI exits with (mapped in
one place, :func:`memory_core.shell.cli.run`), and what the MCP server and the
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
           "FacadeClosed", "RootConflict", "error_message"]


def error_message(error: BaseException) -> str:
    """The one line the CLI prints for ``error`` on stderr; the warm CLI and the MCP
    tools report the same text."""
    suffix = "; the revision was aborted and nothing was written" if isinstance(error, JudgeError) else ""
    return f"error: {error}{suffix}"
