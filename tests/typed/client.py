"""A small typed client of FALSIFY's public API: mypy (tests/test_typing.py) checks it
against the package's own annotations, which ``memory_core/py.typed`` exposes."""

from __future__ import annotations

import asyncio

import memory_core
from memory_core import Falsify, FalsifyError, RevisionResult, StatusResult


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


def main() -> int:
    try:
        print(asyncio.run(tour("./typed-root")))
    except FalsifyError as error:
        return error.exit_code
    return 0
