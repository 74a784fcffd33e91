"""The revision log read from its end (no cognee, no stores): the same entries as a
forward read, whatever the block size, with a torn last line skipped; last_undoable
finds the newest change not undone."""

from __future__ import annotations

import json
import random

import pytest

from memory_core.store.journal import FileJournal as Journal


def write_log(root, entries, torn: str = "") -> Journal:
    journal = Journal(root)
    journal.log_path.write_text("".join(json.dumps(e) + "\n" for e in entries) + torn, encoding="utf-8")
    return journal


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 16])
def test_backwards_is_forwards_reversed(tmp_path, block):
    rng = random.Random(block)
    entries = [{"epoch": i, "kind": "revision", "pad": "x" * rng.randrange(0, 300)} for i in range(1, 60)]
    journal = write_log(tmp_path, entries, torn='{"epoch": 60, "kind": "revi')
    assert (
        list(journal.entries_backwards(block=block))
        == list(reversed(list(journal.entries())))
        == entries[::-1]
    )
    assert journal.last_entry() == entries[-1] and journal.epoch() == 59


def test_empty_and_missing_log(tmp_path):
    journal = Journal(tmp_path)
    assert journal.last_entry() is None and journal.last_undoable() is None and journal.epoch() == 0
    journal.log_path.write_text("\n\n", encoding="utf-8")
    assert list(journal.entries_backwards()) == []


def test_last_undoable_skips_what_was_undone(tmp_path):
    change = lambda e, kind="revision": {"epoch": e, "kind": kind, "intent": {"epoch": e}}
    undo = lambda e, of: {"epoch": e, "kind": "undo", "undoes": of, "intent": {"epoch": e}}
    log = [change(1, "load"), change(2), change(3), undo(4, 3), undo(5, 2)]
    assert write_log(tmp_path, log).last_undoable()["epoch"] == 1
    assert write_log(tmp_path, log[:4]).last_undoable()["epoch"] == 2
    assert write_log(tmp_path, log + [change(6)]).last_undoable()["epoch"] == 6
    assert write_log(tmp_path, log + [undo(6, 1)]).last_undoable() is None
    no_intent = [change(1), {"epoch": 2, "kind": "revision"}]  # an entry without an intent cannot be undone
    assert write_log(tmp_path, no_intent).last_undoable()["epoch"] == 1


def test_committed_finds_an_epoch_from_the_end(tmp_path):
    journal = write_log(
        tmp_path, [{"epoch": e, "kind": "revision"} for e in (1, 2, 3, 5)], torn='{"epoch": 6'
    )
    assert [journal.committed(e) for e in range(0, 8)] == [False, True, True, True, False, True, False, False]


def test_epoch_follows_the_log_file_whoever_wrote_it(tmp_path, monkeypatch):
    """The last entry's epoch is remembered while the log file is unchanged (a large last
    entry is parsed once), and read again when another journal (another process) appends,
    when the file is replaced, or when a torn line is cut."""
    entry = lambda e: {"epoch": e, "kind": "revision", "intent": {"epoch": e}}
    mine = write_log(tmp_path, [entry(1), entry(2)])
    assert mine.epoch() == 2
    parsed = []
    real = Journal.last_entry
    monkeypatch.setattr(Journal, "last_entry", lambda self: parsed.append(1) or real(self))
    assert mine.epoch() == mine.epoch() == 2 and parsed == []  # unchanged file: not parsed again
    other = Journal(tmp_path)  # another process's journal on the same root appends
    other.commit(entry(3))
    assert other.epoch() == 3 and parsed == []  # its own commit told it
    assert mine.epoch() == 3 and parsed == [1]
    replaced = tmp_path / "replaced.jsonl"
    replaced.write_text(json.dumps(entry(1)) + "\n", encoding="utf-8")
    replaced.replace(mine.log_path)
    mine.meta_path.write_text(json.dumps({"epoch": 1}), encoding="utf-8")
    assert mine.epoch() == 1
    with open(mine.log_path, "a", encoding="utf-8") as f:
        f.write('{"epoch": 2, "kind": "revi')  # torn: not an entry
    assert mine.epoch() == 1
