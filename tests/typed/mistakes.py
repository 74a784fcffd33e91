"""The same API used wrongly: mypy must report each marked line (tests/system/test_typing.py)."""

from __future__ import annotations

from memory_core import Evidence, Falsify, Hypothesis
from memory_core.session import Gate


async def wrong(root: str) -> None:
    async with Falsify.open(root) as fx:
        result = await fx.revise("a fact", target="E_qa")
        count: int = result["refuted"]  # MISTAKE: a list of keys, not an int
        result["no_such_key"]  # MISTAKE: RevisionResult has no such key
        await fx.revise("a fact", tagret="E_qa")  # MISTAKE: misspelt keyword
        await fx.search(3)  # MISTAKE: the query is a str


async def awaited_wrong(root: str, state_dir: str) -> None:
    fx = await Falsify.open(root)  # the awaited form is a Falsify too, not Any
    await fx.search(3)  # MISTAKE: the query is a str
    await fx.revise("a fact", record="yes")  # MISTAKE: record is a bool
    attached = await Falsify.attach(state_dir)
    await attached.explain(7)  # MISTAKE: a key is a str


async def through_the_gate(gate: Gate) -> None:
    async with gate.session() as fx:  # a shell's session: the facade's own types
        await fx.revise("a fact", tagret="E_qa")  # MISTAKE: misspelt keyword
        count: int = (await fx.undo())["restored"]  # MISTAKE: a list of keys, not an int
        fx.timeline().no_such_method()  # MISTAKE: a list of rows


def nodes() -> None:
    Evidence(key="E1", claim=3, question_key="Q")  # MISTAKE: claim is a str
    Hypothesis(key="H1", question_key="Q")  # MISTAKE: statement missing
    Evidence(key="E1", claim="c", question_key="Q").no_such_field  # MISTAKE: no such field
