"""The journal of a test root, read the same way on both backends.

On the embedded backend a root's revision log is ``ROOT/revisions.jsonl`` and a pending
intent is ``ROOT/journal/pending.json``; on PostgreSQL (``FALSIFY_TEST_BACKEND=postgres``,
tests/conftest.py) they are the rows of ``falsify_log`` and ``falsify_intent`` in the
root's own database (tests/support/pg_server.py: one database per root path). These helpers let
one test body check one property on either backend. They read with plain SQL /
file reads, never through FALSIFY (which would open the stores and recover the root).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

BACKEND = os.environ.get("FALSIFY_TEST_BACKEND", "ladybug")
POSTGRES = BACKEND == "postgres"


def database_url(root) -> str:
    """The URL of ``root``'s own database (postgres sessions only)."""
    import pg_server

    return pg_server.root_env(root)["FALSIFY_DATABASE_URL"]


def sql(root, statement: str, params=()) -> list:
    import psycopg2

    conn = psycopg2.connect(database_url(root))
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(statement, params)
            return cur.fetchall() if cur.description else []
    finally:
        conn.close()


def has_pending_intent(root) -> bool:
    """Whether the root's journal holds an intent (an interrupted change)."""
    root = Path(root)
    if POSTGRES:
        return bool(sql(root, "SELECT to_regclass('falsify_intent') IS NOT NULL")[0][0]) and bool(
            sql(root, "SELECT count(*) FROM falsify_intent")[0][0]
        )
    return (root / "journal" / "pending.json").exists()


def log_entries(root) -> list[dict]:
    """The committed revision log, oldest first (a torn last line of the embedded log is
    not an entry)."""
    root = Path(root)
    if POSTGRES:
        if not sql(root, "SELECT to_regclass('falsify_log') IS NOT NULL")[0][0]:
            return []
        return [row[0] for row in sql(root, "SELECT entry FROM falsify_log ORDER BY seq")]
    path = root / "revisions.jsonl"
    if not path.exists():
        return []
    entries = []
    for line in path.read_bytes().splitlines():
        if line.strip():
            try:
                entries.append(json.loads(line))
            except ValueError:
                pass
    return entries


def log_is_whole(root) -> bool:
    """The log parses to its last byte: the embedded log ends with a newline (no torn
    line); a PostgreSQL log row is inserted whole or not at all, so it always is."""
    if POSTGRES:
        return True
    path = Path(root) / "revisions.jsonl"
    return not path.exists() or path.read_bytes().endswith(b"\n")
