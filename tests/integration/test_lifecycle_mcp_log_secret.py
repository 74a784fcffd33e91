"""An unexpected error in an MCP tool is one line to the client and its traceback in the log, with
no secret in either. Before, the tool logged the error with its exc_info: the log redaction masked
the record's traceback text, but cognee's log handler rendered the exception again from exc_info,
unmasked (a registered secret in the message reached the root's log file and standard error)."""

from __future__ import annotations

from mcp import Client

from conftest import seed_with_prefix
from test_lifecycle_log_exception_secret import standard_error
from test_write_rollback import FACT
from memory_core.core.redaction import register
from memory_core.mcp.server import build_server
from memory_core.session import Gate

SECRET = "sk-vantleGlimmer-0123456789abcdefQX"  # a key's shape, registered as one


def logged(root) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted((root / "logs").glob("*.log")))


async def test_an_internal_error_of_a_tool_logs_its_traceback_masked(root, app, prefix):
    await app.load(seed_with_prefix(prefix))
    register([SECRET])
    before = app.journal.epoch()

    def fail(name: str) -> None:
        if name == "nodes":
            raise RuntimeError(f"the driver said: authentication failed for key {SECRET}")

    app.hook = fail
    try:
        with standard_error() as console:  # cognee's console handlers keep their own stream
            async with Client(build_server(Gate(app))) as client:
                result = await client.call_tool("revise", {"fact": FACT, "target": f"{prefix}E_qa"})
    finally:
        app.hook = None
    message = result.content[0].text
    assert result.is_error and message.startswith("error: internal error: RuntimeError"), message
    assert "\n" not in message and SECRET not in message
    assert app.journal.epoch() == before and app.journal.pending() is None  # rolled back whole
    log = logged(root)
    assert "tool revise failed" in log and "authentication failed for key ***" in log, log[-2000:]
    assert SECRET not in log
    assert "tool revise failed" in console.getvalue() and SECRET not in console.getvalue()


async def test_a_call_after_the_gate_closed_is_a_falsify_error_not_an_internal_one(app):
    """A tool call reaching a server whose gate has closed (it is stopping) is refused in one
    FALSIFY line, nothing read or written; it was an internal error (a RuntimeError) whose
    traceback went to the log."""
    gate = Gate(app)  # not the gate's own facade: closing the gate leaves the session's facade open
    async with Client(build_server(gate)) as client:
        await gate.close()
        refused = await client.call_tool("status", {})
    message = refused.content[0].text
    assert refused.is_error and message.startswith("error: this FALSIFY session is closed"), message
    assert "internal error" not in message
    assert (await app.status())["nodes"] is not None
