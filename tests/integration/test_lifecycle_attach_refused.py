"""A refused ``Falsify.attach`` leaves the process as it was: a later ``Falsify.open`` of the
process's root goes on. Before, attaching marked the process as attached to the host's cognee
before taking the state's writer lock, and a refusal (``RootBusy``) left the mark: every later
opening of a root in the process raised ``RootConflict``."""

from __future__ import annotations

import pytest

from memory_core import Falsify, RootBusy
from memory_core.store import data_root
from memory_core.store.lock import WriterLock


async def test_a_refused_attach_leaves_the_process_unattached(root, app, tmp_path, monkeypatch):
    # should the mark stay all the same, the session's later openings of its root still go on
    monkeypatch.setattr(data_root, "_attached", data_root._attached)
    state = tmp_path / "quillet-state"
    state.mkdir()
    # its writer lock taken (embedded: the state directory's flock; PostgreSQL: the database's,
    # which the session's facade holds)
    held = WriterLock(state / "writer.lock", "pytest quillet holder", 0).acquire(0)
    try:
        with monkeypatch.context() as env:
            env.setenv("FALSIFY_LOCK_TIMEOUT", "0.1")
            with pytest.raises(RootBusy):
                await Falsify.attach(state)
    finally:
        held.release()
    reader = await Falsify.open(root, lock=False)  # RootConflict before
    try:
        assert reader.journal.epoch() == app.journal.epoch()
    finally:
        await reader.close()
