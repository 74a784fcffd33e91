"""Drives the public Python API on a fresh data root (a process serves one root, so
tests/system/test_api.py runs this in a subprocess) and prints what it saw as JSON."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import memory_core
from memory_core import EmbedderMismatch, Falsify, FalsifyError, InputError, JudgeError, RootBusy

REPO = Path(__file__).resolve().parents[2]
FACT = "Forensic audit: the March QA report was back-dated."


async def main(root: str) -> dict:
    seen: dict = {"all": sorted(memory_core.__all__)}
    async with Falsify.open(root) as fx:
        seen["load"] = await fx.load(REPO / "examples" / "company_x.json")
        seen["load_again"] = await fx.load(str(REPO / "examples" / "company_x.json"))
        fragment = {
            "question": {"key": "Q"},
            "evidence": [
                {
                    "key": "E_memo",
                    "claim": "An internal memo of April 2021 mentions brake complaints.",
                    "source_id": "memo-4",
                }
            ],
            "conclusions": [{"key": "K_memo", "statement": "Complaints reached management by April 2021."}],
            "edges": [
                {"type": "depends_on", "from": "K_memo", "to": "E_memo"},
                {"type": "depends_on", "from": "K_memo", "to": "E_qa", "critical": False},
                {"type": "supports", "from": "E_memo", "to": "B", "weight": 0.4},
            ],
        }
        seen["fragment"] = await fx.load(fragment)
        seen["status_before"] = await fx.status()
        seen["bad_fragment"] = await _error(
            fx.load(
                {
                    "question": {"key": "Q"},
                    "edges": [{"type": "depends_on", "from": "K_memo", "to": "NOWHERE"}],
                }
            )
        )
        seen["status_after_bad"] = await fx.status()
        seen["bad_fact"] = await _error(fx.revise("   "))
        seen["bad_target"] = await _error(fx.revise(FACT, target="NO_SUCH_KEY"))
        seen["revise"] = await fx.revise(FACT, target="E_qa", key="F_audit")
        seen["recall"] = await fx.recall()
        seen["search_alive"] = await fx.search("QA report documented the brake-valve defect")
        seen["search_all"] = await fx.search("QA report documented the brake-valve defect", include_dead=True)
        seen["bad_search"] = await _error(fx.search("x", top_k=0))
        seen["explain_dead"] = await fx.explain("K")
        seen["explain_alive"] = await fx.explain("K_memo")
        seen["undo"] = await fx.undo()
        seen["status_after_undo"] = await fx.status()
        seen["check"] = await fx.check()
        seen["many"] = await fx.revise_many(
            [
                {"fact": FACT, "target": "E_qa", "key": "F_audit"},
                "Penguins are flightless birds of the southern hemisphere.",
            ]
        )
        seen["undo_many"] = await fx.undo()
        seen["status_after_undo_many"] = await fx.status()
        seen["bad_many"] = await _error(fx.revise_many([{"fact": FACT}, {"fact": FACT, "color": "red"}]))
    seen["closed_lock_free"] = await _reopen(root)
    try:
        async with Falsify.open(root) as fx:
            raise KeyError("boom")
    except KeyError:
        seen["lock_free_after_exception"] = await _reopen(root)
    seen["exit_codes"] = {
        cls.__name__: cls.exit_code
        for cls in (FalsifyError, InputError, RootBusy, EmbedderMismatch, JudgeError)
    }
    seen["hierarchy"] = all(
        issubclass(c, FalsifyError) for c in (InputError, RootBusy, EmbedderMismatch, JudgeError)
    )
    return seen


async def _error(coro) -> dict:
    try:
        await coro
    except FalsifyError as error:
        return {"class": type(error).__name__, "exit_code": error.exit_code, "message": str(error)}
    return {"class": None}


async def _reopen(root) -> bool:
    """The writer lock is free: another open (lock timeout 0) succeeds."""
    import os

    os.environ["FALSIFY_LOCK_TIMEOUT"] = "0"
    fx = await Falsify.open(root)
    await fx.close()
    os.environ.pop("FALSIFY_LOCK_TIMEOUT")
    return True


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1])), default=str))
