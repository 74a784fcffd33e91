"""The MCP server is strict with its callers, through the official SDK's own client over
stdio: an argument a tool does not declare is a tool error and nothing is written;
``serverInfo.version`` is the package's version; the instructions name every state;
the server stops without leaving pending tasks behind."""

from __future__ import annotations

import tomllib

import pytest
from mcp.client import ClientSession
from mcp.client.stdio import stdio_client

from conftest import REPO
from test_mcp import SEED, call, server_params

from memory_core.core.vocabulary import State

pytestmark = pytest.mark.slow


async def test_unknown_arguments_version_instructions_and_shutdown(tmp_path):
    root = tmp_path / "root"
    errlog = (tmp_path / "server.stderr").open("w+")
    async with stdio_client(server_params(root), errlog=errlog) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
        assert init.server_info.version == version
        for state in State:
            assert state.value in init.instructions, state
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert listed["revise"].input_schema.get("additionalProperties") is False

        await call(session, "add_beliefs", fragment=SEED)
        before = await call(session, "status")
        bogus = await session.call_tool("revise", {"fact": "Forensic audit: the QA report was back-dated.",
                                                   "target": "E_qa", "bogus": 1})
        assert bogus.is_error, bogus.content[0].text
        assert "bogus" in bogus.content[0].text
        misspelt = await session.call_tool("revise", {"fact": "The supplier email was forged.", "dryrun": True})
        assert misspelt.is_error and "dryrun" in misspelt.content[0].text
        assert (await session.call_tool("status", {"verbose": True})).is_error
        # errors name the tool's arguments, not the CLI's flags
        wrong_target = await session.call_tool("revise", {"fact": "x", "target": "NO_SUCH_EVIDENCE"})
        assert wrong_target.is_error and "target 'NO_SUCH_EVIDENCE'" in wrong_target.content[0].text
        assert "--target" not in wrong_target.content[0].text
        # a fragment given as JSON text with a repeated field is refused, as the CLI refuses it
        repeated = await session.call_tool("add_beliefs", {"fragment": '{"question": {"key": "Q"}, "evidence": '
                                                           '[{"key": "E60", "claim": "first", "claim": "second"}]}'})
        assert repeated.is_error, repeated.content[0].text
        assert "claim" in repeated.content[0].text
        after = await call(session, "status")
        assert after == before  # nothing was written
    errlog.seek(0)
    stderr = errlog.read()
    assert "Task was destroyed" not in stderr, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
