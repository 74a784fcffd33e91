"""A past epoch's search ranks each node that existed then by the text it had then.

``recall(epoch=N)`` reuses the vectors the vector store holds instead of embedding every past
node again (memory_core/ops/history.py, ``PastStore.vectors``): a stored row's vector is reused
for a past node only when the row's own text is the node's text then. Through the in-process
API on the session's shared root (every key and text carries the test's prefix): a load, its
undo (both nodes' rows deleted), and a load of the same question again in which one of the two
nodes has another text (its row, under the same id, now holds the new text's vector). At the
first load's epoch each node is found by its text of then, at distance 0: the node added again
is not searched by its row's new vector (a reuse by id would be), the one never added again is
embedded (no row holds its text).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def inquiry(prefix: str, evidence: list[tuple[str, str]]) -> dict:
    return {
        "question": {"key": f"{prefix}Q", "text": f"What did the harbour log of {prefix} record?"},
        "evidence": [
            {"key": f"{prefix}{key}", "claim": claim, "source_id": "harbour log"} for key, claim in evidence
        ],
    }


async def test_a_past_epoch_searches_each_node_by_its_text_then(app, prefix):
    kept_then = f"The lighthouse keeper of {prefix} painted the lantern room crimson."
    gone = f"The ferry of {prefix} ran aground on the eastern shoal."
    kept_now = f"The bakery of {prefix} doubled its bread prices in spring."
    then = (await app.load(inquiry(prefix, [("E_kept", kept_then), ("E_gone", gone)])))["epoch"]
    assert (await app.undo())["undone"] == then
    await app.load(inquiry(prefix, [("E_kept", kept_now)]))

    for key, claim in ((f"{prefix}E_kept", kept_then), (f"{prefix}E_gone", gone)):
        past = await app.recall(claim, epoch=then, inquiry=f"{prefix}Q")
        assert past["epoch"] == then
        assert past["relevance"]["nearest"] == key, past["relevance"]
        assert past["relevance"]["best_distance"] == 0.0, past["relevance"]
        row = next(m for m in past["falsify"]["matches"] if m["key"] == key)
        assert (row["text"], row["distance"]) == (claim, 0.0)

    # now the node's row holds its new text: nothing of the inquiry is near the old one
    now = await app.recall(kept_then, inquiry=f"{prefix}Q")
    assert now["relevance"]["best_distance"] > 0.2, now["relevance"]
