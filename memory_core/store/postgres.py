"""FALSIFY's own state on PostgreSQL (``FALSIFY_BACKEND=postgres``): the revision log,
the pending intent and the writer lock live in the database, so any machine that
reaches it can open the same investigations.

* :class:`PgJournal` has :class:`~memory_core.store.journal.Journal`'s interface. The
  intent is one row of ``falsify_intent``; the commit point is ONE transaction that
  inserts the log entry into ``falsify_log`` and deletes the intent, so a revision is
  either in the log or not (there is no torn line to repair). cognee's adapters
  commit their own transactions (graph, then vectors), so the graph and vector writes
  of a revision cannot join that transaction: the intent/commit-point design carries
  over unchanged (a crashed writer's intent is rolled back or cleared by the next one).
* :class:`PgWriterLock`: one writer per database across processes and machines, a
  session-level advisory lock held on a dedicated connection for as long as the
  stores are open (waits ``FALSIFY_LOCK_TIMEOUT`` seconds, then :class:`RootBusy`,
  exit 3, naming the holder). PostgreSQL releases it when the holder's connection
  ends, so a killed writer never blocks the next one.
* :func:`prepare_database`: FALSIFY's tables, an index for the store's
  subject-predicate lookup, and ``hnsw.ef_search`` for this database.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterator, Optional

from memory_core.core.errors import EmbedderMismatch, RootBusy

# pg_advisory_lock keys: one for the writer (ours), distinct from cognee's graph-write key
WRITER_LOCK_KEY = 0x46414C53  # "FALS"
# HNSW returns at most ef_search rows per scan; recall asks for up to 420 (MAX_TOP_K * 4 + 20)
EF_SEARCH = 1000

SCHEMA = """
CREATE TABLE IF NOT EXISTS falsify_log (
    seq bigserial PRIMARY KEY,
    epoch bigint NOT NULL,
    entry jsonb NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS falsify_log_epoch ON falsify_log (epoch);
CREATE TABLE IF NOT EXISTS falsify_intent (
    slot int PRIMARY KEY DEFAULT 1 CHECK (slot = 1),
    epoch bigint,
    intent jsonb NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS falsify_meta (
    key text PRIMARY KEY,
    value jsonb NOT NULL
);
"""


def connect(url: str, application_name: str = "falsify"):
    import psycopg2

    conn = psycopg2.connect(url, application_name=application_name[:63])
    conn.autocommit = True
    return conn


_prepared: set[str] = set()


def prepare_database(url: str) -> None:
    """FALSIFY's tables and settings in this database (idempotent; once per process)."""
    if url in _prepared:
        return
    conn = connect(url, "falsify setup")
    try:
        with conn.cursor() as cur:
            # one process at a time (CREATE ... IF NOT EXISTS races on the catalog)
            cur.execute("SELECT pg_advisory_lock(%s)", (WRITER_LOCK_KEY + 1,))
            try:
                cur.execute(SCHEMA)
                cur.execute("SELECT to_regclass('graph_node') IS NOT NULL")
                if cur.fetchone()[0]:
                    index_graph(cur)
                try:
                    cur.execute(f"DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET hnsw.ef_search = {EF_SEARCH}', "
                                "current_database()); END $$")
                except Exception as error:  # noqa: BLE001 - a managed server may refuse: searches stay exact-ish
                    import logging

                    logging.getLogger("falsify").warning("could not set hnsw.ef_search for this database: %s", error)
            finally:
                cur.execute("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK_KEY + 1,))
    finally:
        conn.close()
    _prepared.add(url)


def check_database_embedder(url: str, mine: dict) -> dict:
    """The database's embedder record (the first opener's, kept in ``falsify_meta``): every
    machine and data root on this database must embed with the same model, or vectors of
    two models would be compared. Raises EmbedderMismatch naming both."""
    prepare_database(url)
    conn = connect(url, "falsify embedder check")
    try:
        with conn.cursor() as cur:
            cur.execute("INSERT INTO falsify_meta (key, value) VALUES ('embedder', %s) ON CONFLICT (key) DO NOTHING",
                        (json.dumps(mine),))
            cur.execute("SELECT value FROM falsify_meta WHERE key = 'embedder'")
            recorded = cur.fetchone()[0]
    finally:
        conn.close()
    if recorded != mine:
        raise EmbedderMismatch(
            f"this database ({_redact(url)}) was built with embedder {recorded}, but the current settings "
            f"select {mine}. Vectors of different models cannot be compared: use the same EMBEDDING_* / "
            "LLM_API_KEY settings as the other users of this database, or another database.")
    return mine


def index_graph(cur) -> None:
    """The store's subject-predicate lookup (evidence by ``name``) as an index seek."""
    cur.execute("CREATE INDEX IF NOT EXISTS falsify_node_type_name ON graph_node (type, name)")


class PgWriterLock:
    def __init__(self, url: str, purpose: str = "falsify"):
        self.url = url
        self.purpose = purpose
        self._conn = None

    def acquire(self, timeout: float | None = None) -> "PgWriterLock":
        from memory_core.store.lock import default_timeout

        timeout = default_timeout() if timeout is None else timeout
        conn = connect(self.url, f"falsify pid {os.getpid()} ({self.purpose})")
        deadline = time.monotonic() + timeout
        try:
            with conn.cursor() as cur:
                while True:
                    cur.execute("SELECT pg_try_advisory_lock(%s)", (WRITER_LOCK_KEY,))
                    if cur.fetchone()[0]:
                        break
                    if time.monotonic() >= deadline:
                        cur.execute(
                            "SELECT a.application_name, a.client_addr FROM pg_locks l JOIN pg_stat_activity a "
                            "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.objid = %s "
                            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                            (WRITER_LOCK_KEY,))
                        row = cur.fetchone()
                        holder = (f"{row[0] or 'a client'}" + (f" at {row[1]}" if row[1] else "")) if row else "another process"
                        raise RootBusy(
                            f"the database {_redact(self.url)} is in use by {holder}; waited {timeout:g}s "
                            "(set FALSIFY_LOCK_TIMEOUT to wait longer)")
                    time.sleep(0.05)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return self

    def release(self) -> None:
        if self._conn is not None:
            try:
                with self._conn.cursor() as cur:
                    cur.execute("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK_KEY,))
            except Exception:  # noqa: BLE001 - closing the session releases it anyway
                pass
            finally:
                self._conn.close()
                self._conn = None

    def __enter__(self):
        return self.acquire() if self._conn is None else self

    def __exit__(self, *exc):
        self.release()


def _redact(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{host}:{parts.port or 5432}{parts.path}"


class PgJournal:
    """:class:`~memory_core.store.journal.Journal` with the log and the intent in the
    database. ``meta()`` (embedder record, default question) stays in the local root."""

    def __init__(self, root: Path, url: str):
        self.root = Path(root)
        self.url = url
        self.meta_path = self.root / "falsify.json"
        self.log_path = self.root / "revisions.jsonl"  # absent on this backend (check skips it)
        self.dir = self.root / "journal"
        from memory_core.store.lock import make_private

        make_private(self.root)  # the local root (meta, logs) is private on this backend too
        prepare_database(url)
        self._conn = connect(url, f"falsify journal pid {os.getpid()}")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _query(self, sql: str, params=()) -> list:
        with self._conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    # ---- meta / epoch ----------------------------------------------------
    def meta(self) -> dict:
        if self.meta_path.exists():
            return json.loads(self.meta_path.read_text(encoding="utf-8"))
        return {}

    def epoch(self) -> int:
        rows = self._query("SELECT max(epoch) FROM falsify_log")
        return int(rows[0][0] or 0)

    def last_entry(self) -> Optional[dict]:
        return next(self.entries_backwards(), None)

    def entries_backwards(self, block: int = 256) -> Iterator[dict]:
        """Newest first, fetched in blocks of 1, 2, 4, ... up to ``block`` rows: the cost
        follows how far back the caller looks (at most twice that), as with the embedded
        log read from its end. A fixed block of 256 made every ``last_entry()`` fetch and
        decode the whole log of a young database: on the MQuAKE x10 graph (ten load entries
        of ~1,400 nodes each) that was 57 s of JSON decoding in 16 revisions and 32 undos
        (cProfile), the x10/x1 latency ratio 2.5 against 1.08 embedded."""
        before, size = None, 1
        while True:
            if before is None:
                rows = self._query("SELECT seq, entry FROM falsify_log ORDER BY seq DESC LIMIT %s", (size,))
            else:
                rows = self._query("SELECT seq, entry FROM falsify_log WHERE seq < %s ORDER BY seq DESC LIMIT %s",
                                   (before, size))
            if not rows:
                return
            for seq, entry in rows:
                yield entry
            if len(rows) < size:
                return
            before = rows[-1][0]
            size = min(size * 2, block)

    def entries(self) -> Iterator[dict]:
        after = 0
        while True:
            rows = self._query("SELECT seq, entry FROM falsify_log WHERE seq > %s ORDER BY seq LIMIT 1000", (after,))
            if not rows:
                return
            for seq, entry in rows:
                yield entry
            after = rows[-1][0]

    # ---- pending intent --------------------------------------------------
    @property
    def pending_path(self) -> Path:
        # only used to set aside an intent FALSIFY did not write: impossible here (a jsonb row
        # written by begin()); kept for the interface
        return self.dir / "pending.json"

    def begin(self, intent: dict) -> None:
        self._query("INSERT INTO falsify_intent (slot, epoch, intent) VALUES (1, %s, %s) "
                    "ON CONFLICT (slot) DO UPDATE SET epoch = EXCLUDED.epoch, intent = EXCLUDED.intent, "
                    "written_at = now()", (intent.get("epoch"), json.dumps(intent)))

    def pending(self) -> Optional[dict]:
        rows = self._query("SELECT intent FROM falsify_intent WHERE slot = 1")
        return rows[0][0] if rows else None

    def commit(self, entry: dict) -> None:
        """The commit point: the log entry in, the intent out, in ONE transaction."""
        conn = self._conn
        conn.autocommit = False
        try:
            with conn.cursor() as cur:
                cur.execute("INSERT INTO falsify_log (epoch, entry) VALUES (%s, %s)",
                            (int(entry["epoch"]), json.dumps(entry, sort_keys=True)))
                cur.execute("DELETE FROM falsify_intent WHERE slot = 1")
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.autocommit = True

    def clear(self) -> None:
        self._query("DELETE FROM falsify_intent WHERE slot = 1")

    def repair_log(self) -> bool:
        return False  # a log row is inserted whole or not at all

    def committed(self, epoch: int) -> bool:
        return bool(self._query("SELECT 1 FROM falsify_log WHERE epoch = %s LIMIT 1", (int(epoch),)))

    def last_undoable(self) -> Optional[dict]:
        undone = set()
        for entry in self.entries_backwards():
            if entry.get("kind") == "undo":
                undone.add(entry.get("undoes"))
            elif entry.get("intent") and entry.get("epoch") not in undone:
                return entry
        return None
