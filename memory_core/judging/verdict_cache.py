"""The LLM judge's verdict cache, in the data root (``verdicts.sqlite``).

A verdict is keyed by (stored claim, new fact, model): re-judging the same pair
with the same model costs no call. The cache holds judgements, not beliefs, so
it is written as soon as a verdict arrives (also on a dry run, or when a later
step fails) and never needs undoing; deleting the file only costs calls again.
SQLite in WAL mode, so a server and a CLI on the same root can share it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Optional

FILENAME = "verdicts.sqlite"


def cache_key(stored: str, new: str, model: str) -> str:
    raw = json.dumps([" ".join(stored.split()), " ".join(new.split()), model], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class VerdictCache:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), timeout=10, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS verdicts (k TEXT PRIMARY KEY, model TEXT, verdict TEXT NOT NULL)"
            )
            self._db = db
        return self._db

    def get_many(self, keys: list[str]) -> dict[str, dict]:
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        with self._lock:
            db = self._conn()
            marks = ",".join("?" * len(keys))
            rows = db.execute(f"SELECT k, verdict FROM verdicts WHERE k IN ({marks})", keys).fetchall()
        found = {}
        for k, text in rows:
            try:
                found[k] = json.loads(text)
            except ValueError:
                continue
        return found

    def put_many(self, items: dict[str, dict], model: str) -> None:
        if not items:
            return
        with self._lock:
            db = self._conn()
            db.execute("BEGIN")
            try:
                db.executemany(
                    "INSERT OR REPLACE INTO verdicts (k, model, verdict) VALUES (?, ?, ?)",
                    [(k, model, json.dumps(v, ensure_ascii=False)) for k, v in items.items()],
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


_caches: dict[Path, VerdictCache] = {}


def for_root(root: Optional[Path] = None) -> VerdictCache:
    """The cache of the configured data root (one per root and process)."""
    if root is None:
        from memory_core.store import data_root

        root = data_root.paths().root
    path = Path(root) / FILENAME
    cache = _caches.get(path)
    if cache is None:
        cache = _caches[path] = VerdictCache(path)
    return cache
