"""The journal: intent written before the stores are touched, and the revision log.

Ladybug and LanceDB share no transaction, so every change to a data root (a
revision, a load, an undo) is first written as an *intent* — the full
before/after of every node state, weight and confidence it changes, every node
and edge it adds, and a tombstone (all properties and edges) of every node it
deletes — to ``journal/pending.json``, fsynced. Then the stores are written;
then one line is appended to ``revisions.jsonl`` (fsynced) and the pending file
is removed. The log line is the commit point.

On start-up (:func:`recover`), a pending intent whose epoch is in the log was
committed (only the clean-up was lost); any other is rolled back by applying
its inverse, which restores the stores to the state before it began. Every
store operation of an intent is idempotent, so a crash during recovery is
recovered the same way.
"""

from __future__ import annotations

import json
import os
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Iterator, Optional

PENDING = "pending.json"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _private(path, flags):
    """``open``'s opener: new files readable and writable by their owner only."""
    return os.open(path, flags, 0o600)


def write_atomic(path: Path, data: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", opener=_private) as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def inverse(intent: dict) -> dict:
    """The intent that undoes ``intent``."""
    return {
        "epoch": intent["epoch"],
        "add_nodes": intent.get("del_nodes", []),
        "del_nodes": intent.get("add_nodes", []),
        "add_edges": intent.get("del_edges", []),
        "del_edges": intent.get("add_edges", []),
        "updates": [{"id": u["id"], "key": u["key"], "before": u["after"], "after": u["before"]}
                    for u in intent.get("updates", [])],
    }


def set_aside_path(directory: Path) -> Path:
    """A new name for an intent FALSIFY did not write, kept for a human to look at."""
    return directory / f"pending.invalid-{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9}.json"


class Journal(ABC):
    """What every journal provides: the pending intent (``begin``/``pending``/``commit``/
    ``clear``), the revision log (``entries``, ``entries_backwards``, ``epoch``) and the
    data root's meta file (``meta``, always the local ``falsify.json``). What is kept where
    differs per backend: :class:`FileJournal` (the embedded backend and an attached state
    directory), :class:`memory_core.store.backends.postgres.PgJournal` (the database)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.dir = self.root / "journal"
        self.meta_path = self.root / "falsify.json"
        # the data root's own log file: the file journal's log; a journal that keeps its log
        # elsewhere (the database) never writes it
        self.log_path = self.root / "revisions.jsonl"

    def close(self) -> None:
        """Let go of what the journal holds open (a no-op for files)."""

    # ---- meta / epoch ----------------------------------------------------
    def meta(self) -> dict:
        if self.meta_path.exists():
            return json.loads(self.meta_path.read_text(encoding="utf-8"))
        return {}

    @abstractmethod
    def epoch(self) -> int:
        """The last committed epoch (0 for a fresh root)."""

    def last_entry(self) -> Optional[dict]:
        return next(self.entries_backwards(), None)

    def last_undoable(self) -> Optional[dict]:
        """The newest revision or load not undone yet, scanning from the end: an undo
        is always logged after the change it reverts, so by the time the scan reaches
        a change, every undo of it has been seen."""
        undone = set()
        for entry in self.entries_backwards():
            if entry.get("kind") == "undo":
                undone.add(entry.get("undoes"))
            elif entry.get("intent") and entry.get("epoch") not in undone:
                return entry
        return None

    # ---- the revision log ------------------------------------------------
    @abstractmethod
    def entries(self) -> Iterator[dict]:
        """The log's entries, oldest first."""

    @abstractmethod
    def entries_backwards(self) -> Iterator[dict]:
        """The log's entries, newest first; the cost follows how far back the caller looks."""

    @abstractmethod
    def committed(self, epoch: int) -> bool:
        """Whether ``epoch`` is in the log."""

    @abstractmethod
    def repair_log(self) -> bool:
        """Cut what a crash mid-commit left of an entry; True if there was something to cut."""

    @abstractmethod
    def log_problems(self, limit: int) -> list[str]:
        """What is wrong with the stored log itself (lines that are not JSON, a torn end),
        naming at most ``limit`` lines one by one (``check``)."""

    # ---- pending intent --------------------------------------------------
    @abstractmethod
    def begin(self, intent: dict) -> None:
        """Record ``intent`` durably, before the stores are touched."""

    @abstractmethod
    def pending(self) -> Optional[dict]:
        """The intent not committed yet (``{"torn": True}`` for one cut short), or None."""

    @abstractmethod
    def set_aside_pending(self) -> str:
        """Keep a pending intent FALSIFY did not write out of the way, untouched; returns
        the name it is kept under."""

    @abstractmethod
    def commit(self, entry: dict) -> None:
        """Append the log entry (the commit point) and clear the pending intent."""

    @abstractmethod
    def clear(self) -> None:
        """Drop the pending intent."""


class FileJournal(Journal):
    """The journal in the data root's files: ``journal/pending.json`` and ``revisions.jsonl``."""

    def __init__(self, root: Path):
        super().__init__(root)
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)

    # ---- meta / epoch ----------------------------------------------------
    def epoch(self) -> int:
        """The last committed epoch (0 for a fresh root). The meta file is updated
        right after each commit; a crash between the two leaves it one behind, so
        the log's last line is read too (from the end of the file: O(1), not O(log))."""
        last = self.last_entry()
        return max(int(last.get("epoch", 0)) if last else 0, int(self.meta().get("epoch", 0)))

    def entries_backwards(self, block: int = 1 << 16) -> Iterator[dict]:
        """The log's entries, newest first, read from the end of the file in blocks:
        the cost follows how far back the caller looks, not the log's length."""
        if not self.log_path.exists():
            return
        with open(self.log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            pos, tail = f.tell(), b""
            while pos > 0:
                step = min(block, pos)
                pos -= step
                f.seek(pos)
                pieces = (f.read(step) + tail).split(b"\n")
                # the first piece may be the end of a line that starts further back
                tail = pieces.pop(0) if pos > 0 else b""
                for line in reversed(pieces):
                    if line.strip():
                        try:
                            yield json.loads(line)
                        except ValueError:
                            continue  # a torn last line is not committed

    def _set_meta_epoch(self, epoch: int) -> None:
        meta = self.meta()
        if meta.get("epoch", 0) < epoch:
            meta["epoch"] = epoch
            write_atomic(self.meta_path, json.dumps(meta, indent=2))

    # ---- pending intent --------------------------------------------------
    @property
    def _pending_file(self) -> Path:
        return self.dir / PENDING

    def begin(self, intent: dict) -> None:
        write_atomic(self._pending_file, json.dumps(intent))

    def pending(self) -> Optional[dict]:
        if not self._pending_file.exists():
            return None
        try:
            return json.loads(self._pending_file.read_text(encoding="utf-8"))
        except ValueError:
            # torn write of the intent itself: nothing was touched yet
            return {"torn": True}

    def commit(self, entry: dict) -> None:
        """Append the log line (the commit point), then clear the pending intent."""
        line = json.dumps(entry, sort_keys=True) + "\n"
        with open(self.log_path, "a", encoding="utf-8", opener=_private) as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self._set_meta_epoch(int(entry["epoch"]))
        self.clear()

    def set_aside_pending(self) -> str:
        aside = set_aside_path(self.dir)
        self._pending_file.rename(aside)
        return aside.name

    def clear(self) -> None:
        if self._pending_file.exists():
            self._pending_file.unlink()
            _fsync_dir(self.dir)

    def repair_log(self) -> bool:
        """Cut a torn last line (a crash mid-append): it never committed."""
        if not self.log_path.exists():
            return False
        data = self.log_path.read_bytes()
        if not data or data.endswith(b"\n"):
            return False
        cut = data.rfind(b"\n") + 1
        with open(self.log_path, "r+b") as f:
            f.truncate(cut)
            f.flush()
            os.fsync(f.fileno())
        return True

    def log_problems(self, limit: int) -> list[str]:
        if not self.log_path.exists():
            return []
        data = self.log_path.read_bytes()
        invalid = []
        for n, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue  # blank lines: every reader of the log skips them
            try:
                json.loads(line)
            except ValueError:
                invalid.append(n)
        problems = [f"revisions.jsonl line {n} is not valid JSON" for n in invalid[:limit]]
        if len(invalid) > limit:
            problems.append(f"revisions.jsonl has {len(invalid) - limit} more lines that are not valid JSON")
        if data and not data.endswith(b"\n"):
            problems.append("revisions.jsonl ends with a torn line")
        return problems

    def committed(self, epoch: int) -> bool:
        """Whether ``epoch`` is in the log. Epochs only grow, so the scan from the end
        stops at the first older one (a pending intent is at most one behind)."""
        for entry in self.entries_backwards():
            logged = int(entry.get("epoch", -1))
            if logged <= epoch:
                return logged == epoch
        return False

    # ---- the revision log ------------------------------------------------
    def entries(self) -> Iterator[dict]:
        if not self.log_path.exists():
            return
        with open(self.log_path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except ValueError:
                    continue  # a torn last line is not committed
