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
    async with (
        stdio_client(server_params(root), errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
        assert init.server_info.version == version
        for state in State:
            assert state.value in init.instructions, state
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert listed["revise"].input_schema.get("additionalProperties") is False

        await call(session, "add_beliefs", fragment=SEED)
        before = await call(session, "status")
        bogus = await session.call_tool(
            "revise", {"fact": "Forensic audit: the QA report was back-dated.", "target": "E_qa", "bogus": 1}
        )
        assert bogus.is_error, bogus.content[0].text
        assert "bogus" in bogus.content[0].text
        misspelt = await session.call_tool(
            "revise", {"fact": "The supplier email was forged.", "dryrun": True}
        )
        assert misspelt.is_error and "dryrun" in misspelt.content[0].text
        assert (await session.call_tool("status", {"verbose": True})).is_error
        # errors name the tool's arguments, not the CLI's flags
        wrong_target = await session.call_tool("revise", {"fact": "x", "target": "NO_SUCH_EVIDENCE"})
        assert wrong_target.is_error and "target 'NO_SUCH_EVIDENCE'" in wrong_target.content[0].text
        assert "--target" not in wrong_target.content[0].text
        # a fragment given as JSON text with a repeated field is refused, as the CLI refuses it
        repeated = await session.call_tool(
            "add_beliefs",
            {
                "fragment": '{"question": {"key": "Q"}, "evidence": '
                '[{"key": "E60", "claim": "first", "claim": "second"}]}'
            },
        )
        assert repeated.is_error, repeated.content[0].text
        assert "claim" in repeated.content[0].text
        after = await call(session, "status")
        assert after == before  # nothing was written
    errlog.seek(0)
    stderr = errlog.read()
    assert "Task was destroyed" not in stderr, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]


class RawStdio:
    """``python main.py --root R mcp`` on pipes, spoken to line by line: messages the official
    client would never send (a repeated field) are written as raw text."""

    def __init__(self, root):
        import subprocess
        import sys

        import forkserver
        from harness import clean_env

        self.proc = forkserver.popen(
            [sys.executable, str(REPO / "main.py"), "--root", str(root), "mcp"],
            cwd=REPO,
            env=clean_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(root.parent / "raw.stderr", "w"),
        )

    def send(self, text: str) -> None:
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, ident) -> dict:
        import json

        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed its output"
            message = json.loads(line)
            if message.get("id") == ident:
                return message

    def answers_until(self, last) -> dict:
        """Every answer (by id) the server writes up to and with the one to ``last``."""
        import json

        answers: dict = {}
        while last not in answers:
            line = self.proc.stdout.readline()
            assert line, "the server closed its output"
            message = json.loads(line)
            answers[message.get("id")] = message
        return answers

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(60)


def _initialize(raw) -> None:
    import json

    raw.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
    )
    assert "result" in raw.answer(1)
    raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    raw.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add_beliefs", "arguments": {"fragment": SEED}},
            }
        )
    )
    assert raw.answer(2)["result"].get("isError") is not True


def _repeated_fields_are_refused(raw) -> None:
    """``revise`` with ``"dry_run": true, "dry_run": false`` (the SDK's reader keeps the last) is a
    JSON-RPC error naming the field, and the memory is unchanged; a repeated field inside an
    ``add_beliefs`` fragment object is refused the same way; so is an argument nested too deep."""
    import json

    status = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "status", "arguments": {}},
    }
    raw.send(json.dumps(status))
    before = raw.answer(3)["result"]["structuredContent"]
    raw.send(
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "revise", "arguments": '
        '{"fact": "Forensic audit: the March QA report was back-dated.", "target": "E_qa", '
        '"dry_run": true, "dry_run": false}}}'
    )
    refused = raw.answer(4)
    assert refused["error"]["code"] == -32600 and "'dry_run' appears twice" in refused["error"]["message"], (
        refused
    )
    raw.send(
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "add_beliefs", "arguments": '
        '{"fragment": {"question": {"key": "Q"}, "evidence": [{"key": "E61", "claim": "first", '
        '"claim": "second"}]}}}}'
    )
    assert "'claim' appears twice" in raw.answer(5)["error"]["message"]
    # an argument nested deeper than the SDK's reader goes (it would drop the message without an
    # answer) is refused with an error naming the limit
    deep = "[" * 200 + "]" * 200
    raw.send(
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "revise", "arguments": '
        '{"fact": "x", "target": ' + deep + "}}}"
    )
    refused = raw.answer(7)
    assert refused["error"]["code"] == -32600 and "the limit is 64 levels" in refused["error"]["message"], (
        refused
    )
    raw.send(json.dumps(dict(status, id=6)))
    assert raw.answer(6)["result"]["structuredContent"] == before  # nothing was written


def _lone_surrogates_are_answered(raw) -> None:
    """A lone surrogate escape (``"\\ud800"``, what JavaScript's JSON.stringify writes for a lone
    surrogate), which the SDK's reader cannot read and dropped without an answer: in a tool's
    argument it is a tool error naming the argument, anywhere else a JSON-RPC error; a line that
    is not JSON-RPC at all is answered too. Each answer comes before the answer to the request
    sent after it (the client never waits for ever), and nothing is written."""
    import json

    status = {
        "jsonrpc": "2.0",
        "id": 40,
        "method": "tools/call",
        "params": {"name": "status", "arguments": {}},
    }
    raw.send(json.dumps(status))
    before = raw.answer(40)["result"]["structuredContent"]
    asked = {
        41: '{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "revise", "arguments": '
        '{"fact": "The audit found it back-dated \\ud800", "target": "E_qa"}}}',
        42: '{"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"name": "revise_many", '
        '"arguments": {"facts": [{"fact": "fine"}, {"fact": "a \\udc00 b"}]}}}',
        43: '{"jsonrpc": "2.0", "id": 43, "method": "tools/call", "params": {"name": "st\\ud800atus", '
        '"arguments": {}}}',
        44: '{"jsonrpc": "2.0", "id": 44, "method": 7}',
    }
    for text in asked.values():
        raw.send(text)
    raw.send(json.dumps(dict(status, id=45)))
    answers = raw.answers_until(45)
    assert set(asked) <= set(answers), f"unanswered: {sorted(set(asked) - set(answers))}"
    for ident, argument in ((41, "fact"), (42, "facts line 2: fact")):
        result = answers[ident]["result"]
        assert result["isError"] is True, result
        assert result["content"][0]["text"].startswith(f"error: {argument}: not valid Unicode"), result
    assert answers[43]["error"]["code"] == -32602 and "params: name" in answers[43]["error"]["message"]
    assert answers[44]["error"]["code"] == -32600, answers[44]
    assert answers[45]["result"]["structuredContent"] == before  # nothing was written


CANCELLED_FACTS = [
    ("Forensic audit: the March QA report was back-dated.", "E_qa"),
    ("The supplier email was forged by a contractor.", "E_email"),
    ("A second audit found the QA report back-dated too.", "E_qa"),
]


def _cancelled_mid_write(raw, root) -> list[str]:
    """``revise``, then ``notifications/cancelled`` as soon as ``journal/pending.json`` appears (the
    write has begun). The next call is answered only once the cancelled one has rolled back (or
    committed, if the cancellation came after its commit point): no intent is left, ``check`` is
    clean, and the graph holds the revision wholly or not at all."""
    import json
    import time

    outcomes = []
    ident = 10
    for fact, target in CANCELLED_FACTS:
        raw.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "method": "tools/call",
                    "params": {"name": "status", "arguments": {}},
                }
            )
        )
        before = raw.answer(ident)["result"]["structuredContent"]
        revise_id = ident + 1
        raw.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": revise_id,
                    "method": "tools/call",
                    "params": {"name": "revise", "arguments": {"fact": fact, "target": target}},
                }
            )
        )
        pending = root / "journal" / "pending.json"
        deadline = time.monotonic() + 120
        while not pending.exists() and time.monotonic() < deadline:
            time.sleep(0.0005)
        raw.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": revise_id, "reason": "test"},
                }
            )
        )
        raw.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": ident + 2,
                    "method": "tools/call",
                    "params": {"name": "check", "arguments": {}},
                }
            )
        )
        checked = raw.answer(ident + 2)["result"]["structuredContent"]
        assert not pending.exists(), "an intent was left journalled"
        assert checked["clean"] is True, checked
        raw.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": ident + 3,
                    "method": "tools/call",
                    "params": {"name": "status", "arguments": {}},
                }
            )
        )
        after = raw.answer(ident + 3)["result"]["structuredContent"]
        if after == before:
            outcomes.append("rolled back")
        else:  # the whole revision: the target refuted, the fact stored
            states = {n["key"]: n["state"] for n in after["nodes"]}
            assert states[target] == "refuted" and len(after["nodes"]) >= len(before["nodes"]), after
            outcomes.append("committed")
        ident += 10
    return outcomes


def test_raw_messages_over_stdio_repeated_fields_and_a_cancelled_write(tmp_path):
    """The real stdio server, spoken to line by line (what the official client never sends): a
    repeated field is a JSON-RPC error and writes nothing; a lone surrogate escape is answered (a
    tool error naming the argument) and writes nothing; a ``revise`` cancelled as soon as its
    intent appears (the attack of the report, three facts) is whole or absent before the next call
    is answered."""
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    raw = RawStdio(root)
    try:
        _initialize(raw)
        _repeated_fields_are_refused(raw)
        _lone_surrogates_are_answered(raw)
        outcomes = _cancelled_mid_write(raw, root)
    finally:
        raw.close()
    print("cancelled mid-write over MCP:", outcomes)
    assert len(outcomes) == len(CANCELLED_FACTS), outcomes
