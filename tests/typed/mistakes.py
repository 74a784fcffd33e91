"""The same API used wrongly: mypy must report each marked line (tests/test_typing.py)."""

from __future__ import annotations

from memory_core import Falsify


async def wrong(root: str) -> None:
    async with Falsify.open(root) as fx:
        result = await fx.revise("a fact", target="E_qa")
        count: int = result["refuted"]  # MISTAKE: a list of keys, not an int
        result["no_such_key"]  # MISTAKE: RevisionResult has no such key
        await fx.revise("a fact", tagret="E_qa")  # MISTAKE: misspelt keyword
        await fx.search(3)  # MISTAKE: the query is a str
