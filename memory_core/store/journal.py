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

from memory_core.core.errors import FalsifyError

PENDING = "pending.json"
# the largest epoch FALSIFY writes: every JSON reader holds it exactly. A stored epoch above it
# was not written by FALSIFY (no log could hold that many changes): damage, named by check
MAX_EPOCH = 2**53 - 1
BATCHES = ("add_nodes", "del_nodes", "add_edges", "del_edges", "updates")


def valid_epoch(value) -> bool:
    """A whole number 0..MAX_EPOCH (``True`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_EPOCH


def described(value) -> str:
    """A stored value as a message names it: short, and never a 10**30-digit string."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_EPOCH:
        return f"a {len(str(abs(value)))}-digit number"
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def intent_problem(intent) -> Optional[str]:
    """Why ``intent`` is not one :meth:`Journal.begin` wrote (None when it is one): a rollback
    acts only on an intent whose every part has the shape FALSIFY writes."""
    if not isinstance(intent, dict):
        return f"it is {type(intent).__name__}, not an object"
    if isinstance(
        intent.get("not_written_by_falsify"), str
    ):  # FileJournal.pending: valid JSON, read strictly
        return intent["not_written_by_falsify"]
    if not valid_epoch(intent.get("epoch")) or intent["epoch"] < 1:
        return f"its epoch is {described(intent.get('epoch'))}, not a whole number 1..{MAX_EPOCH}"
    for name in BATCHES:
        batch = intent.get(name, [])
        if not isinstance(batch, list):
            return f"its {name} is {described(batch)}, not a list"
        for item in batch:
            wrong = _item_problem(name, item)
            if wrong:
                return f"an entry of its {name} {wrong}"
    return None


def _edge_problem(edge) -> Optional[str]:
    if not (
        isinstance(edge, list)
        and 3 <= len(edge) <= 4
        and all(isinstance(x, str) for x in edge[:3])
        and (len(edge) == 3 or isinstance(edge[3], dict))
    ):
        return f"has edge {described(edge)}, not [from, to, type, properties]"
    return None


def _item_problem(name: str, item) -> Optional[str]:
    if name in ("add_edges", "del_edges"):
        return _edge_problem(item)
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("id"), str)
        or not isinstance(item.get("key"), str)
    ):
        return "is not an object with a string id and key"
    if name == "updates":
        for side in ("before", "after"):
            image = item.get(side)
            if (
                not isinstance(image, dict)
                or not isinstance(image.get("state"), str)
                or not valid_epoch(image.get("epoch"))
                or isinstance(image.get("weight"), bool)
                or not isinstance(image.get("weight"), (int, float))
            ):
                return f"has a {side} image {described(image)} without a state, an epoch and a weight"
        return None
    if (
        not isinstance(item.get("kind"), str)
        or not isinstance(item.get("props"), dict)
        or not isinstance(item.get("state"), str)
        or not valid_epoch(item.get("epoch"))
        or isinstance(item.get("weight"), bool)
        or not isinstance(item.get("weight"), (int, float))
        or not isinstance(item.get("edges", []), list)
    ):
        return f"({described(item.get('key'))}) lacks a kind, properties, a state, an epoch or a weight"
    for edge in item.get("edges", []):
        wrong = _edge_problem(edge)
        if wrong:
            return wrong
    return None


def entry_problem(entry) -> Optional[str]:
    """Why a parsed log line is not a log entry FALSIFY wrote (None when it is one)."""
    if not isinstance(entry, dict):
        return f"it is {type(entry).__name__}, not an object"
    if not valid_epoch(entry.get("epoch")) or entry["epoch"] < 1:
        return f"its epoch is {described(entry.get('epoch'))}, not a whole number 1..{MAX_EPOCH}"
    return None


def meta_problems(meta: dict) -> list[str]:
    """What is wrong with the fields of ``falsify.json`` (a dict): each named."""
    problems = []
    if "epoch" in meta and not valid_epoch(meta["epoch"]):
        problems.append(
            f"falsify.json's epoch is {described(meta['epoch'])}, not a whole number 0..{MAX_EPOCH} "
            "(no revision log holds more changes): the file is damaged"
        )
    if "default_question" in meta and not isinstance(meta["default_question"], (str, type(None))):
        problems.append(
            f"falsify.json's default_question is {described(meta['default_question'])}, not a key"
        )
    return problems


LINES_LISTED = 10  # line numbers a message lists one by one


def _entry(line: bytes | str) -> Optional[dict]:
    """A log line as an entry, or None: blank, torn, or not an entry FALSIFY wrote (check
    names those; every reader of the log skips them)."""
    if not line.strip():
        return None
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return entry if entry_problem(entry) is None else None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _private(path, flags):
    """``open``'s opener: new files readable and writable by their owner only."""
    return os.open(path, flags, 0o600)


def _private_no_link(path, flags):
    """:func:`_private`, never through a symbolic link (a planted ``.tmp`` link is refused)."""
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


def write_atomic(path: Path, data: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", opener=_private_no_link) as f:
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
        "updates": [
            {"id": u["id"], "key": u["key"], "before": u["after"], "after": u["before"]}
            for u in intent.get("updates", [])
        ],
    }


def set_aside_path(directory: Path) -> Path:
    """A new name for an intent FALSIFY did not write, kept for a human to look at."""
    return directory / f"pending.invalid-{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9}.json"


def log_identity(journal) -> Optional[tuple]:
    """What stands for the content of ``journal``'s log file: its path, size and modification
    time, and the epoch a past view stops at (the log only grows or is rewritten, which changes
    them); None when the log is not a file here (the database's) or cannot be read. Parsing the
    log's last entry instead costs as much as a pass over it when that entry is a large batch."""
    log = getattr(journal, "log_path", None)  # a log kept in memory (a test's) has none
    try:
        seen = log.stat() if log is not None else None
    except OSError:
        return None
    if seen is None:
        return None
    return (type(journal).__name__, str(log), seen.st_size, seen.st_mtime_ns, getattr(journal, "at", None))


class Journal(ABC):
    """What every journal provides: the pending intent (``begin``/``pending``/``commit``/
    ``clear``), the revision log (``entries``, ``entries_backwards``, ``epoch``) and the
    data root's meta file (``meta``, always the local ``falsify.json``). What is kept where
    differs per backend: :class:`FileJournal` (the embedded backend and an attached state
    directory), :class:`memory_core.store.backends.postgres.PgJournal` (the database)."""

    at: Optional[int] = None  # the epoch a past view of the log stops at (None: the log as it is now)

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
        """``falsify.json`` (an empty dict when there is none; opening the root refused a file
        that is not a JSON object)."""
        if self.meta_path.exists():
            from memory_core.core.investigation import loads_json

            try:
                meta = loads_json(self.meta_path.read_bytes(), "falsify.json")
            except ValueError:
                return {}
            return meta if isinstance(meta, dict) else {}
        return {}

    def meta_epoch(self) -> int:
        """The epoch ``falsify.json`` records, when it is a valid one (else 0: check names it)."""
        epoch = self.meta().get("epoch", 0)
        return epoch if valid_epoch(epoch) else 0

    def meta_problems(self) -> list[str]:
        return meta_problems(self.meta())

    def repair_meta(self, last_epoch: int) -> list[str]:
        """Rewrite the wrong-typed fields of ``falsify.json``: the epoch from the revision log
        (``last_epoch``), a default question that is not a key dropped. Returns what was done."""
        meta = self.meta()
        done = []
        if "epoch" in meta and not valid_epoch(meta["epoch"]):
            done.append(
                f"reset falsify.json's epoch ({described(meta['epoch'])}) to {last_epoch}, the revision log's last"
            )
            meta["epoch"] = last_epoch
        if "default_question" in meta and not isinstance(meta["default_question"], (str, type(None))):
            done.append("dropped falsify.json's default_question, which was not a key")
            del meta["default_question"]
        if done:
            write_atomic(self.meta_path, json.dumps(meta, indent=2))
        return done

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

    def log_torn(self) -> bool:
        """Whether the log ends with a line cut short (only a file can)."""
        return False

    def set_aside_log_lines(self) -> list[str]:
        """Move the lines that are not log entries out of the log (only a file has them)."""
        return []

    def check_writer(self) -> None:
        """Raise if this process may no longer write (a lock that can be lost while held: the
        PostgreSQL journal's); the embedded root's flock is held as long as its file is open."""

    def unavailable(self, error: BaseException) -> Optional[FalsifyError]:
        """The error to report when ``error`` is a lost connection to a database (only a
        database journal has one; exit 7), else None."""
        return None

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
        # the log file's identity (inode, size, mtime) and its last entry's epoch: that entry
        # is a whole load or batch (megabytes on a large root), parsed once, not per call
        self._last_epoch: Optional[tuple[tuple[int, int, int], int]] = None

    # ---- meta / epoch ----------------------------------------------------
    def epoch(self) -> int:
        """The last committed epoch (0 for a fresh root). The meta file is updated
        right after each commit; a crash between the two leaves it one behind, so
        the log's last line is read too (from the end of the file: O(1), not O(log)),
        and remembered while the file is unchanged."""
        return max(self._log_epoch(), self.meta_epoch())

    def _log_identity(self) -> Optional[tuple[int, int, int]]:
        try:
            seen = self.log_path.stat()
        except FileNotFoundError:
            return None
        return (seen.st_ino, seen.st_size, seen.st_mtime_ns)

    def _log_epoch(self) -> int:
        ident = self._log_identity()
        if ident is None:
            return 0
        if self._last_epoch is not None and self._last_epoch[0] == ident:
            return self._last_epoch[1]
        last = self.last_entry()
        epoch = last["epoch"] if last else 0
        # a file changed while it was read is read again next time
        if self._log_identity() == ident:
            self._last_epoch = (ident, epoch)
        return epoch

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
                    entry = _entry(line)
                    if entry is not None:
                        yield entry

    def _set_meta_epoch(self, epoch: int) -> None:
        meta = self.meta()
        if not valid_epoch(meta.get("epoch", 0)) or meta.get("epoch", 0) < epoch:
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
        from memory_core.core.investigation import loads_json

        data = self._pending_file.read_bytes()
        try:
            json.loads(data)
        except (ValueError, RecursionError):
            # torn write of the intent itself: nothing was touched yet
            return {"torn": True}
        try:
            return loads_json(data, "journal/pending.json")
        except ValueError as error:  # valid JSON, but not as FALSIFY writes it (a repeated field)
            return {"not_written_by_falsify": str(error)}

    def commit(self, entry: dict) -> None:
        """Append the log line (the commit point), then clear the pending intent."""
        line = json.dumps(entry, sort_keys=True) + "\n"
        with open(self.log_path, "a", encoding="utf-8", opener=_private) as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        ident = self._log_identity()
        self._last_epoch = (ident, int(entry["epoch"])) if ident is not None else None
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
        """Cut a torn last line (a crash mid-append, or damage; :func:`memory_core.store.writer.recover`
        tells which by the pending intent). Reads from the end: constant memory."""
        if not self.log_torn():
            return False
        with open(self.log_path, "r+b") as f:
            end = f.seek(0, os.SEEK_END)
            pos, cut = end, 0
            while pos > 0:
                step = min(1 << 16, pos)
                pos -= step
                f.seek(pos)
                found = f.read(step).rfind(b"\n")
                if found >= 0:
                    cut = pos + found + 1
                    break
            f.truncate(cut)
            f.flush()
            os.fsync(f.fileno())
        return True

    def _damaged_lines(self) -> list[tuple[int, str]]:
        """(line number, why) of every complete line that is not a log entry FALSIFY wrote, in
        the order a reader meets them: not JSON, not an entry (no valid epoch), or an epoch not
        after the line before it (a duplicated or misplaced line). One pass, constant memory
        per line."""
        if not self.log_path.exists():
            return []
        bad: list[tuple[int, str]] = []
        last, last_line, last_text = 0, 0, b""
        with open(self.log_path, "rb") as f:
            for n, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):
                    break  # a torn last line: repair_log's
                line = raw.strip()
                if not line:
                    continue  # blank lines: every reader of the log skips them
                try:
                    entry = json.loads(line)
                except (ValueError, RecursionError):
                    bad.append((n, "is not valid JSON"))
                    continue
                wrong = entry_problem(entry)
                if wrong:
                    bad.append((n, f"is not a log entry ({wrong})"))
                    continue
                if entry["epoch"] <= last:
                    same = line == last_text
                    bad.append(
                        (
                            n,
                            f"repeats line {last_line} (epoch {entry['epoch']})"
                            if same
                            else f"has epoch {entry['epoch']}, not after line {last_line}'s epoch {last}",
                        )
                    )
                    continue
                last, last_line, last_text = entry["epoch"], n, line
        return bad

    def log_problems(self, limit: int) -> list[str]:
        bad = self._damaged_lines()
        problems = [f"revisions.jsonl line {n} {why}" for n, why in bad[:limit]]
        if len(bad) > limit:
            problems.append(f"revisions.jsonl has {len(bad) - limit} more lines that are not log entries")
        if self.log_torn():
            problems.append("revisions.jsonl ends with a torn line")
        return problems

    def log_torn(self) -> bool:
        if not self.log_path.exists():
            return False
        with open(self.log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"

    def set_aside_log_lines(self) -> list[str]:
        """Move every damaged line (:meth:`_damaged_lines`) out of the log into
        ``revisions.set-aside-<time>.jsonl`` (each with its line number and why), keeping the
        rest in order; the log is replaced atomically. Returns what was done."""
        bad = dict(self._damaged_lines())
        if not bad:
            return []
        aside = (
            self.root / f"revisions.set-aside-{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9}.jsonl"
        )
        kept = self.log_path.with_name(self.log_path.name + ".tmp")
        with (
            open(self.log_path, "rb") as src,
            open(kept, "wb", opener=_private) as out,
            open(aside, "w", encoding="utf-8", opener=_private) as side,
        ):
            for n, raw in enumerate(src, 1):
                if n in bad:
                    side.write(
                        json.dumps({"line": n, "why": bad[n], "text": raw.decode("utf-8", "replace")}) + "\n"
                    )
                else:
                    out.write(raw)
            out.flush()
            os.fsync(out.fileno())
            side.flush()
            os.fsync(side.fileno())
        os.replace(kept, self.log_path)
        _fsync_dir(self.root)
        which = ", ".join(str(n) for n in sorted(bad)[:LINES_LISTED]) + (
            " ..." if len(bad) > LINES_LISTED else ""
        )
        return [f"set aside {len(bad)} damaged line(s) of revisions.jsonl (line {which}) in {aside.name}"]

    def committed(self, epoch: int) -> bool:
        """Whether ``epoch`` is in the log. Epochs only grow, so the scan from the end
        stops at the first older one (a pending intent is at most one behind)."""
        for entry in self.entries_backwards():
            logged = entry["epoch"]
            if logged <= epoch:
                return logged == epoch
        return False

    # ---- the revision log ------------------------------------------------
    def entries(self) -> Iterator[dict]:
        if not self.log_path.exists():
            return
        with open(self.log_path, encoding="utf-8") as f:
            for line in f:
                entry = _entry(line)
                if entry is not None:
                    yield entry
