"""The MCP server through the official SDK's own client (``ClientSession`` over
stdio): ``python main.py --root DIR mcp`` as a separate process on a fresh root (forked from
tests/support/forkserver.py after the third-party imports; see server_params)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import forkserver
from conftest import REPO, clean_env, cli, cli_json

pytestmark = pytest.mark.slow

SEED = json.loads((REPO / "examples" / "company_x.json").read_text())
AUDIT = "Forensic audit: the March QA report was back-dated."
TOOLS = {
    "add_beliefs",
    "revise",
    "revise_many",
    "resolve",
    "recall",
    "search",
    "status",
    "explain",
    "undo",
    "check",
}


def server_params(root: Path) -> StdioServerParameters:
    """``python main.py --root ROOT mcp``, forked from the fork server (a real process on the
    client's pipes, started by the SDK's own stdio_client through tests/support/fork_exec.py)."""
    command, args = forkserver.stdio_command([REPO / "main.py", "--root", root, "mcp"])
    return StdioServerParameters(command=command, args=args, env=clean_env(), cwd=str(REPO))


async def call(session: ClientSession, name: str, **arguments) -> dict:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    text = json.loads(result.content[0].text)  # the same JSON as text, for clients without structured content
    assert (text if isinstance(text, dict) else {"result": text}) == result.structured_content
    return result.structured_content


def keys(nodes) -> dict:
    return {n["key"]: n["state"] for n in nodes}


async def test_every_tool_over_stdio(tmp_path):
    root = tmp_path / "root"
    async with stdio_client(server_params(root)) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "falsify" and "belief" in (init.instructions or "")

        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        params = {name: set(tool.input_schema.get("properties", {})) for name, tool in listed.items()}
        assert params == {
            "add_beliefs": {"fragment"},
            "revise": {
                "fact",
                "triple",
                "target",
                "key",
                "source",
                "asserted_at",
                "trust",
                "policy",
                "valid_from",
                "valid_to",
                "record",
                "supports",
                "refutes",
                "weight",
                "inquiry",
                "dry_run",
            },
            "revise_many": {"facts", "dry_run"},
            "resolve": {"loser", "winner"},
            "recall": {"question", "epoch", "as_of", "inquiry", "path"},
            "search": {"query", "top_k", "include_dead"},
            "status": {"epoch"},
            "explain": {"key"},
            "undo": set(),
            "check": set(),
        }
        assert listed["revise"].input_schema["required"] == ["fact"]
        for tool in listed.values():
            assert len(tool.description) > 150, tool.name  # written for a model, not a one-liner
        assert listed["status"].annotations.read_only_hint and not listed["revise"].annotations.read_only_hint

        # the Company X investigation, step by step: the question and hypotheses, then fragments into it
        first = {"question": SEED["question"], "hypotheses": SEED["hypotheses"]}
        loaded = await call(session, "add_beliefs", fragment=first)
        assert loaded.get("epoch") is not None
        await call(session, "add_beliefs", fragment={"question": {"key": "Q"}, "evidence": SEED["evidence"]})
        await call(
            session,
            "add_beliefs",
            fragment=json.dumps(
                {"question": {"key": "Q"}, "conclusions": SEED["conclusions"], "edges": SEED["edges"]}
            ),
        )
        before = await call(session, "status")
        assert keys(before["nodes"]) == {k: "alive" for k in ("Q", "A", "B", "C", "E_qa", "E_email", "K")}

        # a second server on the root this one holds: the busy root is a tool error naming the holder
        await a_second_server_reports_the_busy_root(root)
        assert await call(session, "status") == before

        # a bad fragment: a tool error naming the offending entry; nothing written
        bad = await session.call_tool(
            "add_beliefs",
            {
                "fragment": {
                    "question": {"key": "Q"},
                    "evidence": [{"key": "E_new", "claim": "A new claim."}],
                    "edges": [{"type": "supports", "from": "E_new", "to": "NOPE_H"}],
                }
            },
        )
        assert bad.is_error and bad.structured_content is None
        assert bad.content[0].text.startswith("error: ") and "NOPE_H" in bad.content[0].text
        not_json = await session.call_tool("add_beliefs", {"fragment": "{not json"})
        assert not_json.is_error and not_json.content[0].text.startswith("error: ")
        bad_revise = await session.call_tool("revise", {"fact": "x", "target": "NO_SUCH_EVIDENCE"})
        assert bad_revise.is_error and "NO_SUCH_EVIDENCE" in bad_revise.content[0].text
        assert await call(session, "status") == before

        # read-only tools
        hits = (await call(session, "search", query="QA report brake valve", top_k=3))["result"]
        assert (
            hits
            and hits[0]["key"] == "E_qa"
            and {"key", "type", "text", "state", "distance", "sources"} <= set(hits[0])
        )
        board = await call(session, "recall")
        assert board["question"] == SEED["question"]["text"] and "falsify" in board and "baseline" in board
        assert (await call(session, "check"))["clean"] is True

        # a dry run changes nothing; the revision refutes E_qa, then explain says why
        dry = await call(session, "revise", fact=AUDIT, target="E_qa", dry_run=True)
        assert dry.get("dry_run") is True and await call(session, "status") == before
        revised = await call(session, "revise", fact=AUDIT, target="E_qa")
        assert revised["refuted"] == ["E_qa"] and revised["promoted"] == ["B"] and "K" in revised["forgotten"]
        why = await call(session, "explain", key="E_qa")
        assert why["key"] == "E_qa" and any(e.get("state") == "refuted" for e in why["events"])
        assert AUDIT in json.dumps(why)
        alive = {
            h["key"]
            for h in (await call(session, "search", query="QA report brake valve", top_k=5))["result"]
        }
        dead = {
            h["key"]
            for h in (
                await call(session, "search", query="QA report brake valve", top_k=5, include_dead=True)
            )["result"]
        }
        assert "E_qa" not in alive and "E_qa" in dead
        # K is forgotten now: its key is reserved (a tool error naming it, nothing written); explain of a
        # key nothing ever had is a tool error too
        snapshot = await call(session, "status")
        taken = await session.call_tool(
            "revise", {"fact": "Another conclusion.", "key": "K", "target": "E_email"}
        )
        assert taken.is_error and "'K' is reserved" in taken.content[0].text
        retaken = await session.call_tool(
            "add_beliefs",
            {
                "fragment": {
                    "question": {"key": "Q"},
                    "conclusions": [{"key": "K", "statement": "Something else."}],
                }
            },
        )
        assert retaken.is_error and "reserved" in retaken.content[0].text
        unknown = await session.call_tool("explain", {"key": "NOPE_KEY"})
        assert unknown.is_error and "NOPE_KEY" in unknown.content[0].text
        assert await call(session, "status") == snapshot

        # resources: the graph (status JSON) and the revision log
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        assert resources == {"falsify://graph", "falsify://log"}
        graph = json.loads((await session.read_resource("falsify://graph")).contents[0].text)
        assert keys(graph["nodes"])["E_qa"] == "refuted"
        log = json.loads((await session.read_resource("falsify://log")).contents[0].text)
        assert any(entry["key"] == "E_qa" and entry["to"] == "refuted" for entry in log)

        # the warm CLI: while this MCP server holds the root, the CLI is answered by it
        info = json.loads((root / "server.json").read_text())
        assert info["url"].startswith("http://127.0.0.1:")
        warm = await anyio.to_thread.run_sync(lambda: cli(root, "status", "--json"))
        assert warm.returncode == 0, warm.stderr
        assert json.loads(warm.stdout) == await call(session, "status")

        # undo restores the graph as it was before the revision
        await call(session, "undo")
        after_undo = await call(session, "status")
        assert keys(after_undo["nodes"]) == keys(before["nodes"])

        # many facts at once: one bad fact rejects the list (nothing written); then one batch, one undo
        bad_many = await session.call_tool(
            "revise_many", {"facts": [{"fact": "ok"}, {"fact": "x", "target": 7}]}
        )
        assert bad_many.is_error and "facts line 2" in bad_many.content[0].text
        assert await call(session, "status") == after_undo
        many = (
            await call(
                session,
                "revise_many",
                facts=[
                    {"fact": AUDIT, "target": "E_qa", "key": "F_audit"},
                    {"fact": "The audit itself was retracted by the auditor.", "target": "F_audit"},
                ],
            )
        )["result"]
        assert many[0]["new_evidence"] == "F_audit" and many[0]["refuted"] == ["E_qa"]
        assert (
            many[1]["refuted"] == ["F_audit"] and "E_qa" in many[1]["reinstated"]
        )  # the second sees the first
        assert many[0]["epoch"] == many[1]["epoch"]
        assert keys((await call(session, "status"))["nodes"])["E_qa"] == "alive"
        await call(session, "undo")
        assert await call(session, "status") == after_undo

        # a dispute (preserve_both), then resolve it: the loser is refuted, the winner alive
        disputed = await call(
            session,
            "revise",
            fact="The QA report was signed on the day of the test.",
            target="E_qa",
            key="E_sig",
            policy="preserve_both",
        )
        assert set(disputed["disputed"]) >= {"E_qa", "E_sig"}
        not_disputed = await session.call_tool("resolve", {"loser": "E_qa", "winner": "E_email"})
        assert not_disputed.is_error and "dispute" in not_disputed.content[0].text
        ended = await call(session, "resolve", loser="E_qa", winner="E_sig")
        assert ended["refuted"] == ["E_qa"] and "E_sig" in ended["reinstated"]
        states = keys((await call(session, "status"))["nodes"])
        assert states["E_qa"] == "refuted" and states["E_sig"] == "alive"
        await call(session, "undo")
        await call(session, "undo")
        after_undo = await call(session, "status")
        assert keys(after_undo["nodes"]) == keys(before["nodes"])
        last_status = after_undo

    # the server released the root (and removed server.json): the CLI opens it and prints the same status JSON
    assert not (root / "server.json").exists()
    assert cli_json(root, "status") == last_status


async def a_second_server_reports_the_busy_root(root: Path) -> None:
    """A second server on a root another process holds (the first server, which holds it for
    the whole of test_every_tool_over_stdio) answers initialize and tools/list, then reports the
    busy root on each call (exit-3 message), writing nothing."""
    params = server_params(root)
    params.env = clean_env(FALSIFY_LOCK_TIMEOUT="1")
    async with stdio_client(params) as (r2, w2), ClientSession(r2, w2) as second:
        await second.initialize()
        assert {t.name for t in (await second.list_tools()).tools} == TOOLS
        busy = await second.call_tool("status", {})
        assert busy.is_error and busy.content[0].text.startswith("error: ")
        assert "busy" in busy.content[0].text.lower() or "lock" in busy.content[0].text.lower()


def test_agent_session_example(tmp_path):
    """examples/agent_session.py plays the demo's story through MCP: recall before and after the audit."""

    proc = forkserver.run(
        [sys.executable, str(REPO / "examples" / "agent_session.py"), "--root", str(tmp_path / "root")],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "added Q, A, B, C" in out and "depends_on K -> E_qa" in out
    assert "revise: refuted ['E_qa'], superseded ['A'], promoted ['B'], forgotten ['K']" in out
    before, after = out.split("recall after the audit")
    assert "QA report" in before.split("FALSIFY   :")[1].splitlines()[0]
    assert "supplier email" in after.split("FALSIFY   :")[1].splitlines()[0]
