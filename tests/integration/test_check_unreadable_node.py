"""``check --repair`` on stored nodes FALSIFY cannot read: their ``key`` property lost behind
its back (the session's root, through the Python API).

Such a node is no belief (the store reads none from it), so check names it as missing from
the graph, and the repair restores it from the revision log's image (both stores, its
key, its valid time). A repair pass used to read it as a belief on the way there, to
re-index its lost vector row or to restore its logged ``valid_to``, and failed with an
``AttributeError`` on ``None``: the repair stopped, nothing was restored.
"""

from __future__ import annotations

import json

import pytest

from backend_helpers import POSTGRES, sql
from conftest import investigation

pytestmark = pytest.mark.slow


async def _drop_key(app, root, ident: str, **changed) -> None:
    """Remove the node's ``key`` property (and set ``changed`` ones), behind FALSIFY's back."""
    if POSTGRES:
        sql(
            root,
            "UPDATE graph_node SET properties = (properties - 'key') || %s::jsonb WHERE id = %s",
            (json.dumps(changed), ident),
        )
        return
    rows = await app.store.graph.query("MATCH (n:Node {id: $i}) RETURN n.properties", {"i": ident})
    blob = dict(json.loads(rows[0][0]), **changed)
    del blob["key"]
    await app.store.graph.query(
        "MATCH (n:Node {id: $i}) SET n.properties = $p", {"i": ident, "p": json.dumps(blob)}
    )
    await app.store.checkpoint()


async def test_repair_restores_nodes_whose_key_was_lost(app, root, prefix):
    from memory_core.core.identity import collection
    from memory_core.store.models import node_id

    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "E_plain", "claim": f"The ferry {prefix} leaves at noon."},
                {
                    "key": "E_timed",
                    "claim": f"Dana chairs the board of {prefix}.",
                    "subject": f"board {prefix}",
                    "predicate": "chair",
                    "object": "Dana",
                    "valid_from": "2010-01-01",
                    "valid_to": "2012-01-01",
                },
            ],
        )
    )
    plain, timed = node_id("evidence", f"{prefix}E_plain"), node_id("evidence", f"{prefix}E_timed")
    # one loses its key and its vector row, the other its key and its logged valid_to
    await _drop_key(app, root, plain)
    await app.store.delete_vectors(collection("evidence"), [plain])
    await _drop_key(app, root, timed, valid_to="1999-01-01")
    mine = lambda problems: sorted(p for p in problems if prefix in p or plain in p or timed in p)  # noqa: E731
    found = mine((await app.check())["problems"])
    assert f"{plain} (evidence) has no row in vector collection Evidence_claim" in found, found
    assert any(p.startswith(f"{prefix}E_plain is missing from the graph") for p in found), found
    assert any(p.startswith(f"{prefix}E_timed is missing from the graph") for p in found), found

    repaired = await app.check(repair=True)
    assert any(f"{prefix}E_plain" in r and f"{prefix}E_timed" in r for r in repaired["repaired"]), repaired
    assert mine(repaired["problems_after_repair"]) == [], repaired
    assert mine((await app.check())["problems"]) == []
    nodes = {n["key"]: n for n in (await app.status())["nodes"]}
    assert nodes[f"{prefix}E_plain"]["state"] == "alive"
    assert nodes[f"{prefix}E_timed"]["valid_to"] == "2012-01-01"
    assert [h["key"] for h in await app.search(f"The ferry {prefix} leaves at noon.", top_k=1)] == [
        f"{prefix}E_plain"
    ]
