"""Delete a node behind FALSIFY's back (for tests/system/test_partial_view_forget.py).

    python tests/support/delete_behind_back.py ROOT KIND KEY

Under the root's writer lock (so no FALSIFY process is using it), removes the node
from the graph with cognee's graph engine (``delete_node``: the node and its edges)
and its row from its LanceDB vector table with ``lancedb`` directly. Nothing is
journalled or logged: the revision log still says the node exists.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


async def main(root: str, kind: str, key: str) -> None:
    from memory_core.api import Falsify

    app = await Falsify.open(root, purpose="tests/support/delete_behind_back.py")
    try:
        from memory_core.store.models import (
            collection,
            node_id,
        )  # imports cognee: once the root is configured
        import lancedb
        from cognee.infrastructure.databases.vector.config import get_vectordb_config

        ident = node_id(kind, key)
        await app.store.graph.delete_node(ident)
        db = lancedb.connect(get_vectordb_config().vector_db_url)
        db.open_table(collection(kind)).delete(f"id = '{ident}'")
        assert not await app.store.raw_nodes([ident]), "the node is still in the graph"
    finally:
        await app.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
