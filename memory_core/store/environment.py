"""What the process environment asks for (through the settings, or read at call time for cognee's
own embedding variables; no side effects)."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from memory_core.store import settings as config

if TYPE_CHECKING:
    import logging


def llm_key_configured(settings: config.Settings) -> bool:
    """``LLM_API_KEY`` is set (as the settings read it)."""
    return settings.llm_key


def hosted_embeddings_configured(settings: config.Settings) -> bool:
    """The user asked for cognee's own embedding providers (key or EMBEDDING_*)."""
    if settings.embedder == "local":
        return False
    if any(
        os.environ.get(k, "").strip()
        for k in ("EMBEDDING_PROVIDER", "EMBEDDING_MODEL", "EMBEDDING_ENDPOINT", "EMBEDDING_API_KEY")
    ):
        return True
    return llm_key_configured(settings)


SECRET_VARIABLES = config.SECRET_VARIABLES  # their values are masked wherever they appear
register_secrets = config.register_secrets


def redact(text: str, argv: "list[str] | None" = None) -> str:
    """``text`` with every secret it may carry masked (:func:`memory_core.core.redaction.redact`,
    with this process's secret variables registered)."""
    from memory_core.core.redaction import redact as mask

    register_secrets()
    return mask(text)


def redact_argv(argv: "list[str]") -> "list[str]":
    """A command line with its secrets masked (see :func:`redact`): ``--token T`` -> ``--token ***``."""
    from memory_core.core.redaction import redact_argv as mask_argv

    register_secrets()
    return mask_argv(argv)


_log_redaction = False


def redact_logs() -> None:
    """Every log record of this process (FALSIFY's, cognee's, litellm's...) passes the one
    redaction when it is made: its message and its traceback text are masked before any
    handler writes them (a log file, stderr); the traceback becomes part of the record's text and
    the exception is taken off the record, so no handler renders it again unmasked. Installed
    once, by a process FALSIFY configures."""
    global _log_redaction
    import logging

    if _log_redaction:
        return
    _log_redaction = True
    make = logging.getLogRecordFactory()

    def masked_record(*args, **kwargs):
        record = make(*args, **kwargs)
        trace = _masked_traceback(record)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001  (a malformed record stays as it is: logging reports it)
            return record
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        if trace:  # the masked traceback is the record's text, rendered once by any handler
            if isinstance(record.msg, dict):  # a structlog record (cognee's): its event
                record.msg["event"] = f"{record.msg.get('event', '')}\n{trace}"
            else:
                record.msg = f"{record.msg}\n{trace}"
        return record

    logging.setLogRecordFactory(masked_record)


def _masked_traceback(record: "logging.LogRecord") -> str:
    """The traceback a record carries, masked, taken off it: a handler renders an exception
    again from the exception itself (cognee's file handler and its console renderer do, from
    ``exc_info`` or from a structlog event's ``exc_info``), unmasked, so the record keeps none
    (``exc_info``, ``exc_text`` and the event's ``exc_info`` cleared); "" when it carries none."""
    import sys
    import traceback

    exc_info = record.exc_info
    record.exc_info, record.exc_text = None, None
    event = record.msg if isinstance(record.msg, dict) else None
    if event is not None and event.get("exc_info"):
        given = event["exc_info"]
        # a copy without it (the dict is the caller's event)
        record.msg = {k: v for k, v in event.items() if k != "exc_info"}
        if isinstance(given, BaseException):
            exc_info = (type(given), given, given.__traceback__)
        elif isinstance(given, tuple):
            exc_info = given
        else:  # exc_info=True: the exception being handled
            exc_info = sys.exc_info()
    if not exc_info or exc_info[0] is None:
        return ""
    return redact("".join(traceback.format_exception(*exc_info)).rstrip("\n"))


class HeldRecords:
    """cognee's log records held back from the handlers (:func:`holding_cognee_records`)."""

    def __init__(self) -> None:
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.split(".")[0] != "cognee":
            return True
        if not any(r is record for r in self.records):  # each handler asks: held once
            self.records.append(record)
        return False

    def release(self) -> None:
        """Hand the held records to their handlers, as if they had never been held."""
        import logging

        records, self.records = self.records, []
        for record in records:
            logging.getLogger(record.name).handle(record)


@contextlib.contextmanager
def holding_cognee_records():
    """cognee's log records made while this runs wait, kept from the root logger's handlers (where
    cognee's print them); the caller releases them, or drops them when what they report was dealt
    with (an open that failed, was repaired and succeeded: the repair's own notice says so). Records
    still held at the end are released."""
    import logging

    held = HeldRecords()
    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(held)
    try:
        yield held
    finally:
        for handler in handlers:
            handler.removeFilter(held)
        held.release()
