"""FALSIFY from Python in one screen: ``python examples/quickstart.py [--root DIR]``.

Builds a small belief graph step by step (a whole investigation, then a
fragment into the stored question), revises it with a contradicting fact,
and shows what changed, what recall answers now, and why.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile

from memory_core import Falsify, InputError

INVESTIGATION = {
    "question": {"key": "Q", "text": "Which supplier made the faulty valve?"},
    "hypotheses": [
        {"key": "H_acme", "statement": "Acme made the faulty valve", "prior": 0.5},
        {"key": "H_bolt", "statement": "Bolt Industries made the faulty valve", "prior": 0.3},
    ],
    "evidence": [
        {
            "key": "E_invoice",
            "claim": "An invoice shows Acme shipped the valve batch in May.",
            "source_id": "invoice-2291",
        }
    ],
    "conclusions": [{"key": "K_recall", "statement": "Acme's May batch should be recalled."}],
    "edges": [
        {"type": "supports", "from": "E_invoice", "to": "H_acme", "weight": 0.8},
        {"type": "depends_on", "from": "K_recall", "to": "E_invoice"},
    ],
}

# a fragment: names the stored question by key and adds to it; its edges may name stored keys
FRAGMENT = {
    "question": {"key": "Q"},
    "evidence": [
        {
            "key": "E_serial",
            "claim": "The valve's serial number belongs to a Bolt Industries lot.",
            "source_id": "lab-report-7",
        }
    ],
    "edges": [{"type": "supports", "from": "E_serial", "to": "H_bolt", "weight": 0.6}],
}


async def main(root: str) -> None:
    async with Falsify.open(root) as fx:
        print("load:", (await fx.load(INVESTIGATION))["added"])
        print("fragment:", (await fx.load(FRAGMENT))["added"])
        result = await fx.revise(
            "Audit: the invoice was for a different valve model; Acme never shipped this one.",
            target="E_invoice",
            key="F_audit",
        )
        print(
            "revise:",
            json.dumps(
                {
                    k: result[k]
                    for k in ("refuted", "invalidated", "superseded", "promoted", "forgotten", "epoch")
                }
            ),
        )
        answer = await fx.recall("Who made the faulty valve?")
        print("recall (FALSIFY):", answer["falsify"]["answer"])
        print("recall (plain RAG):", answer["baseline"]["answer"], answer["scoreboard"]["baseline_mark"])
        print("search, alive only:", [h["key"] for h in await fx.search("invoice for the valve")])
        print(
            "search, dead too:  ",
            [(h["key"], h["state"]) for h in await fx.search("invoice for the valve", include_dead=True)],
        )
        why = await fx.explain("K_recall")
        print("why is K_recall gone?", [e["text"] for e in why["events"]])
        try:
            await fx.revise("")
        except InputError as error:
            print(f"bad input is refused (exit code {error.exit_code}): {error}")
        print("undo:", (await fx.undo())["undone"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="data root (default: a new temporary directory)")
    args = parser.parse_args()
    asyncio.run(main(args.root or tempfile.mkdtemp(prefix="falsify-quickstart-")))
