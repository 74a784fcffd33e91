"""Corrupt a loaded example root on purpose, behind FALSIFY's back (for tests/system/test_check_repair.py).

    python tests/support/corrupt_root.py ROOT [FACT TARGET]

Under the root's writer lock (so no FALSIFY process is using it):
* deletes E_email's row from the ``Evidence_claim`` vector table with ``lancedb`` directly;
* adds an orphan row to that table (a copy of E_qa's row under a fresh id: no graph node);
* sets E_qa ``refuted`` through cognee's graph engine (``set_node_truth_state``) without
  touching K, which depends on E_qa critically: K stays alive, unfounded.
On PostgreSQL (``FALSIFY_BACKEND=postgres``) the same three, as SQL on cognee's tables
(the pgvector table and ``graph_node.properties``; cognee's truth-state API is Ladybug-only).
Prints the orphan row's id. With FACT and TARGET it then runs the real
``revise FACT --target TARGET`` (``memory_core.shell.cli.main``) with
``FALSIFY_FAULT_AT=nodes``: the fault hook SIGKILLs this process after the new
node is written, leaving a genuine pending journal intent (exit status -9).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


async def main(root: str) -> str:
    from memory_core.api import Falsify

    app = await Falsify.open(root, purpose="tests/support/corrupt_root.py")
    try:
        from memory_core.store.models import node_id  # imports cognee: only once the root is configured

        if os.environ.get("FALSIFY_BACKEND") == "postgres":
            return corrupt_postgres(os.environ["FALSIFY_DATABASE_URL"], node_id)
        import lancedb
        from cognee.infrastructure.databases.vector.config import get_vectordb_config

        db = lancedb.connect(get_vectordb_config().vector_db_url)
        table = db.open_table("Evidence_claim")
        table.delete(f"id = '{node_id('evidence', 'E_email')}'")
        rows = table.to_arrow().to_pylist()
        row = next(r for r in rows if r["id"] == node_id("evidence", "E_qa"))
        orphan = str(uuid.uuid4())
        table.add([dict(row, id=orphan)])
        await app.store.graph.set_node_truth_state(
            {node_id("evidence", "E_qa"): {"truth_alignment": ["refuted"], "truth_epoch": 1}}
        )
        return orphan
    finally:
        await app.close()


def corrupt_postgres(url: str, node_id) -> str:
    """The same three corruptions on PostgreSQL, as plain SQL on cognee's tables (the pgvector
    table ``Evidence_claim``: id, payload, vector; ``graph_node.properties`` JSONB, where cognee's
    readers and FALSIFY's store read the truth state)."""
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True
    orphan = str(uuid.uuid4())
    try:
        with conn.cursor() as cur:
            cur.execute('DELETE FROM "Evidence_claim" WHERE id = %s', (node_id("evidence", "E_email"),))
            assert cur.rowcount == 1, cur.rowcount
            cur.execute(
                'INSERT INTO "Evidence_claim" (id, payload, vector) '
                'SELECT %s, payload, vector FROM "Evidence_claim" WHERE id = %s',
                (orphan, node_id("evidence", "E_qa")),
            )
            assert cur.rowcount == 1, cur.rowcount
            cur.execute(
                "UPDATE graph_node SET properties = properties || %s::jsonb WHERE id = %s",
                (json.dumps({"truth_alignment": ["refuted"], "truth_epoch": 1}), node_id("evidence", "E_qa")),
            )
            assert cur.rowcount == 1, cur.rowcount
    finally:
        conn.close()
    return orphan


if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1])), flush=True)
    if len(sys.argv) > 3:
        import os

        os.environ["FALSIFY_FAULT_AT"] = "nodes"
        from memory_core.shell import cli

        code = cli.main(["--root", sys.argv[1], "revise", sys.argv[2], "--target", sys.argv[3], "--json"])
        sys.exit(f"the fault hook did not fire (revise exited {code})")
