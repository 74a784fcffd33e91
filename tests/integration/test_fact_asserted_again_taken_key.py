"""A fact with no key whose derived key another fact holds moves on to the next free key.

An earlier line of the batch gave another fact that key, or a stored fact differing only in
case holds it (the key's hash reads the text case-folded): one revision at a time records the
fact under ``KEY_2``, and a batch must too, not refuse the whole batch for a key its line
never gave.
"""

from __future__ import annotations

import json

import pytest

from memory_core.core.requests import fact_key

pytestmark = pytest.mark.slow


def pond(prefix: str) -> str:
    """A single-valued slot (where Lena moors her boat), Lisbon loaded."""
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"Where does Lena {prefix} moor her boat?"},
            "evidence": [
                {
                    "key": f"{prefix}E",
                    "claim": f"Lena {prefix} moors her boat in Lisbon.",
                    "subject": f"Lena {prefix}",
                    "predicate": "moors boat in",
                    "object": "Lisbon",
                }
            ],
        }
    )


def moors(prefix: str, city: str, **more) -> dict:
    return dict(
        fact=f"Lena {prefix} moors her boat in {city}.", triple=f"Lena {prefix}|moors boat in|{city}", **more
    )


async def records(app, prefix: str) -> list[tuple[str, str, str]]:
    """(key with the slot's prefix dropped, city, state), sorted."""
    return sorted(
        (n["key"], n["text"].rsplit(" ", 1)[1].rstrip("."), n["state"])
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence" and n["text"].startswith(f"Lena {prefix} moors her boat in ")
    )


async def test_a_derived_key_an_earlier_line_gave_another_fact_moves_on(app, prefix):
    """As a batch, as one revision at a time: Cairo under Oslo's key, then Oslo under KEY_2."""
    for slot, as_batch in ((f"{prefix}one", False), (f"{prefix}bat", True)):
        await app.load(pond(slot))
        oslo = moors(slot, "Oslo")
        lines = [moors(slot, "Cairo", key=fact_key(oslo["fact"])), oslo]
        results = await app.revise_many(lines) if as_batch else [await app.revise(**line) for line in lines]
        assert [r["new_evidence"] for r in results] == [fact_key(oslo["fact"]), fact_key(oslo["fact"]) + "_2"]
        assert [(city, state) for _, city, state in await records(app, slot)] == [
            ("Cairo", "refuted"),
            ("Oslo", "alive"),
            ("Lisbon", "refuted"),
        ]


async def test_a_derived_key_a_stored_fact_in_other_case_holds_moves_on(app, prefix):
    """As a batch, as one revision at a time: PORTO stored, Porto under KEY_2."""
    for slot, as_batch in ((f"{prefix}one", False), (f"{prefix}bat", True)):
        await app.load(pond(slot))
        loud = await app.revise(**dict(moors(slot, "Porto"), fact=f"Lena {slot} moors her boat in PORTO."))
        plain = moors(slot, "Porto")
        result = (await app.revise_many([plain]))[0] if as_batch else await app.revise(**plain)
        assert result["new_evidence"] == loud["new_evidence"] + "_2"
