"""In a batch, a fact the batch recorded is weighed by its source, as one revision at a time weighs it.

Under ``trust_ranked`` a contradiction is decided by the sources' trust. A later line of a batch
contradicting an earlier line's record read that record's source from the store as the batch
found it at its start, where the record was not yet: it counted as trust 0.5, so a less trusted
source beat a more trusted one (Cairo from a 0.95 source, Quarry Hill from a 0.99 source, then
Oslo from the 0.95 source again: Oslo was believed in the batch, Quarry Hill one at a time).
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def hives(prefix: str) -> str:
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"Where does Ulla {prefix} keep her hives?"},
            "evidence": [
                {
                    "key": f"{prefix}E",
                    "claim": f"Ulla {prefix} keeps her hives at Marrow Fen.",
                    "subject": f"Ulla {prefix}",
                    "predicate": "keeps hives at",
                    "object": "Marrow Fen",
                }
            ],
        }
    )


def moved(prefix: str, place: str, **kw) -> dict:
    return dict(
        fact=f"Ulla {prefix} keeps her hives at {place}.",
        triple=f"Ulla {prefix}|keeps hives at|{place}",
        policy="trust_ranked",
        **kw,
    )


async def alive(app, prefix: str) -> set[str]:
    return {
        n["text"].split(" at ", 1)[1].rstrip(".")
        for n in (await app.status())["nodes"]
        if n["type"] == "evidence" and n["state"] == "alive" and n["text"].startswith(f"Ulla {prefix} ")
    }


def lines(prefix: str) -> list[dict]:
    return [
        moved(prefix, "Cairo Moor", source=f"{prefix}almanac", trust=0.95),
        moved(prefix, "Quarry Hill", source=f"{prefix}registry", trust=0.99),
        moved(prefix, "Oslo Brae", source=f"{prefix}almanac"),
    ]


async def test_a_batch_weighs_its_own_records_by_their_sources_as_one_at_a_time(app, prefix):
    one, many = f"{prefix}one", f"{prefix}bat"
    await app.load(hives(one))
    results_one = [await app.revise(**line) for line in lines(one)]
    await app.load(hives(many))
    results_many = await app.revise_many(lines(many))
    assert await alive(app, one) == {"Quarry Hill"}
    assert await alive(app, many) == {"Quarry Hill"}
    reasons = [[d["reason"].split(" ", 1)[1] for d in r.get("decisions") or []] for r in results_many]
    assert reasons == [[d["reason"].split(" ", 1)[1] for d in r.get("decisions") or []] for r in results_one]
    assert reasons[2] == ["kept: trust 0.99 > 0.95 (trust_ranked)"]
