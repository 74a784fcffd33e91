"""The demo's story, played as an agent would play it: through MCP.

    python examples/agent_session.py [--root DIR]

It starts FALSIFY's MCP server (``python main.py --root DIR mcp``) as a subprocess
with the official SDK's stdio client, builds the Company X investigation step by
step with ``add_beliefs`` (the question and hypotheses, then each piece of evidence
as the agent finds it, then the conclusion it draws), asks ``recall``, learns of
the forensic audit and calls ``revise``, and asks ``recall`` again. Without
--root it uses a fresh temporary root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
INVESTIGATION = json.loads((REPO / "examples" / "company_x.json").read_text())
AUDIT = "Forensic audit: the March QA report was back-dated."


async def tool(session: ClientSession, name: str, **arguments) -> dict:
    result = await session.call_tool(name, arguments)
    if result.is_error:
        raise SystemExit(f"{name} failed: {result.content[0].text}")
    return result.structured_content


def show_recall(title: str, board: dict) -> None:
    print(f"\n== {title}: {board['question']}")
    print(f"   FALSIFY   : {board['falsify']['answer']}")
    print(f"   plain RAG : {board['baseline']['answer']}")
    if board.get("verdict"):
        print(f"   verdict   : {board['verdict']}")


async def main(root: Path) -> None:
    # the server gets this program's environment (the SDK's default passes only HOME, PATH, ...):
    # its FALSIFY_* and LLM_* settings, the launcher's included, are the server's
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(REPO / "main.py"), "--root", str(root), "mcp"],
        env=dict(os.environ),
        cwd=str(REPO),
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = [t.name for t in (await session.list_tools()).tools]
        print(f"connected to {init.server_info.name}: tools {', '.join(tools)}")

        q = INVESTIGATION["question"]
        step = await tool(
            session, "add_beliefs", fragment={"question": q, "hypotheses": INVESTIGATION["hypotheses"]}
        )
        print(f"1. the question and its hypotheses: added {', '.join(step['added'])}")
        edges = {e["from"]: e for e in INVESTIGATION["edges"] if e["type"] == "supports"}
        for n, evidence in enumerate(INVESTIGATION["evidence"], 2):
            fragment = {"question": {"key": q["key"]}, "evidence": [evidence]}
            if evidence["key"] in edges:
                fragment["edges"] = [edges[evidence["key"]]]
            step = await tool(session, "add_beliefs", fragment=fragment)
            print(f"{n}. evidence found: added {', '.join(step['added'] + step['edges_added'])}")
        depends = [e for e in INVESTIGATION["edges"] if e["type"] == "depends_on"]
        step = await tool(
            session,
            "add_beliefs",
            fragment={
                "question": {"key": q["key"]},
                "conclusions": INVESTIGATION["conclusions"],
                "edges": depends,
            },
        )
        print(f"{n + 1}. the conclusion drawn: added {', '.join(step['added'] + step['edges_added'])}")

        show_recall("recall before the audit", await tool(session, "recall"))

        hits = await tool(session, "search", query="the March QA report", top_k=1)
        target = hits["result"][0]["key"]
        print(f"\nthe agent reads: {AUDIT!r}; search points at {target}")
        revised = await tool(session, "revise", fact=AUDIT, target=target)
        print(
            f"revise: refuted {revised['refuted']}, superseded {revised['superseded']}, "
            f"promoted {revised['promoted']}, forgotten {revised['forgotten']}"
        )

        show_recall("recall after the audit", await tool(session, "recall"))
        why = await tool(session, "explain", key=target)
        last = why["events"][-1] if why["events"] else {}
        print(
            f"\nexplain {target}: {last.get('state')} by rule {last.get('rule')}, because of {last.get('fact')!r}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="data root (default: a fresh temporary one)")
    args = parser.parse_args()
    asyncio.run(
        main(Path(args.root) if args.root else Path(tempfile.mkdtemp(prefix="falsify-agent-")) / "root")
    )
