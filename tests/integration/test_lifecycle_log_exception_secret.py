"""A log record carrying an exception (``exc_info``) reaches the root's log file and standard
error with every secret masked, whichever logger made it: a stdlib logger of cognee's namespace or
of FALSIFY's, or cognee's own structlog logger. Before, the log redaction masked the record's
message and its traceback text, but cognee's handlers rendered the exception again from the
exception itself (the file handler from ``exc_info``, the console renderer from ``exc_info`` or
the structlog event's), unmasked: a registered secret in the exception's message (or in the
message of the exception it was raised from) reached both."""

from __future__ import annotations

import contextlib
import io
import logging

from memory_core.core.redaction import register

SECRET = "sk-snorpelVantle-0123456789abcdefZQ"  # a key's shape, registered as one


def logged(root) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted((root / "logs").glob("*.log")))


def fail(why: str) -> None:
    try:
        raise KeyError(f"the driver said: no such key {SECRET}")
    except KeyError as cause:
        raise RuntimeError(why) from cause  # the secret only in the cause's message


@contextlib.contextmanager
def standard_error():
    """What cognee's console handlers (the root logger's, on standard error, rendering with
    structlog) write meanwhile: they hold the stream they were made with, which no fd capture of
    the test sees."""
    from structlog.stdlib import ProcessorFormatter

    written = io.StringIO()
    streams = [
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and isinstance(h.formatter, ProcessorFormatter)
    ]
    assert streams, logging.getLogger().handlers
    before = [h.setStream(written) for h in streams]
    try:
        yield written
    finally:
        for handler, stream in zip(streams, before):
            handler.setStream(stream)


async def test_an_exception_logged_by_any_logger_reaches_no_handler_unmasked(root, app):
    from cognee.shared.logging_utils import get_logger

    register([SECRET])
    loggers = {
        "cognee stdlib": logging.getLogger("cognee.snorpelstdlib").error,
        "memory_core stdlib": logging.getLogger("memory_core.snorpelcore").error,
        "cognee structlog": get_logger("cognee.snorpelstruct").error,
    }
    with standard_error() as written:
        for name, log in loggers.items():
            try:
                fail(f"glimmer {name} failed")
            except RuntimeError:
                log(f"snorpel {name} call failed", exc_info=True)
    log_text = logged(root)
    stderr = written.getvalue()
    assert SECRET not in log_text, log_text[-3000:]
    assert SECRET not in stderr, stderr[-3000:]
    # each traceback is still there, masked, once
    for name in loggers:
        assert f"snorpel {name} call failed" in log_text, log_text[-3000:]
        assert log_text.count(f"RuntimeError: glimmer {name} failed") == 1, log_text[-3000:]
        assert stderr.count(f"RuntimeError: glimmer {name} failed") == 1, stderr[-3000:]
    assert "no such key ***" in log_text and "no such key ***" in stderr
