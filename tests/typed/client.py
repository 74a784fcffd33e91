"""A small typed client of FALSIFY's public API: mypy (tests/system/test_typing.py) checks it
against the package's own annotations, which ``memory_core/py.typed`` exposes."""

from __future__ import annotations

import asyncio

import memory_core
from memory_core import Evidence, Falsify, FalsifyError, RevisionResult, StatusResult
from memory_core.session import Gate


async def tour(root: str) -> list[str]:
    async with Falsify.open(root) as fx:
        loaded = await fx.load(memory_core.demo_investigation())
        added: list[str] = loaded["added"]
        result: RevisionResult = await fx.revise("Forensic audit: the March QA report was back-dated.", target="E_qa")
        refuted: list[str] = result["refuted"]
        status: StatusResult = await fx.status()
        states = {node["key"]: node["state"] for node in status["nodes"]}
        hits = await fx.search("QA report", top_k=3)
        return added + refuted + [states.get("K", "?")] + [hit["key"] for hit in hits]


async def awaited(root: str, state_dir: str) -> list[str]:
    """The other form: ``await`` the opening, close it yourself (and attach, both forms)."""
    fx = await Falsify.open(root)
    try:
        offered: RevisionResult = await fx.revise("A fact in words.", dry_run=True)
        decided = await fx.revise("A fact in words.", record=True, supports="B", weight=0.7)
        keys = offered.get("to_decide", []) + decided.get("edges_added", [])
    finally:
        await fx.close()
    host = await Falsify.attach(state_dir)
    await host.close()
    async with Falsify.attach(state_dir) as attached:
        keys.append(str((await attached.status())["nodes"][0]["key"]))
    return keys


async def served(gate: Gate) -> list[str]:
    """A shell's calls through the gate's session (memory_core.session): typed as the facade's."""
    async with gate.session() as fx:
        result: RevisionResult = await fx.revise("A fact in words.", target="E_qa", dry_run=True)
        rows: list[dict] = fx.revision_log()
        return result.get("refuted", []) + [str(len(rows))]


def evidence() -> Evidence:
    """FALSIFY's DataPoint classes are typed: their fields and cognee's."""
    node = Evidence(key="E1", claim="The valve failed.", question_key="Q", source_id="report-1")
    text: str = node.claim
    return node if text and node.id else node


def main() -> int:
    try:
        print(asyncio.run(tour("./typed-root")))
    except FalsifyError as error:
        return error.exit_code
    return 0
