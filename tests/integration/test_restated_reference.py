"""A fact asserted again takes the place of its earlier records that hold no more, against the
reference (rule 1f of :mod:`bench.reference`), through the real stores.

One crane's single-valued capacity goes back and forth between three values, one revision at
a time; every return is a new record of its text (``KEY_2``, ``KEY_3``, ...). After every step
the whole graph (states, weights, edges) equals the model's, given each fact's text: the
records nothing rests on stay dead under their restatement (the loaded value too, under a key
of its own, when nothing rests on it), and the loaded value the hypothesis rests on comes back
as before.
"""

from __future__ import annotations

import json
import random

import pytest

from bench.graphs import loaded_model
from bench.reference import revise_in_time
from bench.wholegraph import differences
from cranes import crane

pytestmark = pytest.mark.slow

OBJECTS = ("7 t", "9 t", "11 t")


def mine(status: dict, model) -> dict:
    """The test's part of the shared root: the nodes the model knows and their edges (a key
    revise derives from a text does not start with the test's prefix)."""
    return {
        "nodes": [n for n in status["nodes"] if n["key"] in model.nodes],
        "edges": [e for e in status["edges"] if e["from"] in model.nodes],
    }


@pytest.mark.parametrize("rested_on", [True, False], ids=["loaded-supports-H", "loaded-alone"])
async def test_values_asserted_again_take_their_records_places_as_the_reference(app, prefix, rested_on):
    p = f"{prefix}ra_"
    inv = crane(p, [("C1", "7 t", None, rested_on)])
    model = loaded_model(json.loads(inv))
    await app.load(inv)
    draw, last = random.Random(4), "7 t"
    history = []
    for _ in range(5):
        last = draw.choice([o for o in OBJECTS if o != last])
        history.append(last)
    records: dict[str, list[str]] = {}  # a text -> the keys revise derived from it
    for obj in history:
        text = f"The crane {p} lifts {obj}."
        result = await app.revise(text, triple=f"crane {p}|lifts|{obj}")
        key = result["new_evidence"]
        assert not result.get("to_decide") and not result.get("already_applied"), result
        revise_in_time(
            model,
            key,
            (f"crane {p}", "lifts", obj),
            (None, None),
            f"{p}Q",
            text=text,
        )
        records.setdefault(text, []).append(key)
        assert differences(mine(await app.status(), model), model, "") == [], obj
    alive = [
        n["key"]
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence" and n["state"] == "alive" and p in n["text"]
    ]
    last = f"The crane {p} lifts {history[-1]}."
    # the last value's newest record, and the loaded value when it is the last value and the
    # hypothesis rests on it
    assert sorted(alive) == sorted(
        [records[last][-1]] + ([f"{p}C1"] if rested_on and last.endswith(" 7 t.") else [])
    )
    assert [x for x in (await app.check())["problems"] if p in json.dumps(x)] == []
