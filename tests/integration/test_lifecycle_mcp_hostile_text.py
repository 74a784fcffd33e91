"""An MCP ``add_beliefs`` whose JSON text holds a lone surrogate (a Python host calling the server
in-process: the stdio and HTTP readers refuse such a message before any tool) is a tool error,
one ``error: ...`` line, nothing written, and the server answers the next call. Before, encoding
the text to UTF-8 raised inside the tool, outside its error handling: the SDK's "Error executing
tool add_beliefs" and a traceback on the server's standard error."""

from __future__ import annotations

import json

from mcp import Client

from memory_core.mcp.server import build_server
from memory_core.session import Gate


async def test_a_fragment_text_with_a_lone_surrogate_is_a_tool_error(app, prefix):
    fragment = json.dumps({"question": {"key": f"{prefix}Q", "text": "Does the vantle glimmer?"}})
    before = app.journal.epoch()
    async with Client(build_server(Gate(app))) as client:
        for text in ("\ud800", fragment[:-2] + '\udfff"}}'):
            refused = await client.call_tool("add_beliefs", {"fragment": text})
            assert refused.is_error, refused
            message = refused.content[0].text
            assert message.startswith("error: ") and "\n" not in message, message
            assert app.journal.epoch() == before
        stored = await client.call_tool("add_beliefs", {"fragment": fragment})
        assert not stored.is_error and stored.structured_content["question"] == f"{prefix}Q", stored
