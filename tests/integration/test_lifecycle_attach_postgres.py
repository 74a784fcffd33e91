"""A host attached on PostgreSQL takes the database's writer lock, as an opening does.

``Falsify.attach(state_dir)`` with ``FALSIFY_BACKEND=postgres`` keeps the beliefs, the revision
log and the intent in the database, but it locked only the state directory (a flock): a second
host attached from another state directory, or a CLI on the same database, wrote beside it, the
two writers' intents took the same row, and the journal's writes were not fenced. Now an
attached facade takes the backend's writer lock: on PostgreSQL, the database's. Here the
session's facade holds the database: attaching from another state directory is refused
(``RootBusy``, exit 3), and nothing is written. PostgreSQL sessions only.
"""

from __future__ import annotations

import pytest

from backend_helpers import POSTGRES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not POSTGRES, reason="the database's writer lock: FALSIFY_TEST_BACKEND=postgres"),
]


async def test_a_host_attached_to_a_database_another_opening_holds_is_refused(app, tmp_path, monkeypatch):
    from memory_core import Falsify, RootBusy
    from memory_core.store import data_root, settings

    epoch = app.journal.epoch()
    monkeypatch.setenv("FALSIFY_LOCK_TIMEOUT", "0.5")  # the session's facade never lets go: no long wait
    # attaching marks the process as attached (even when refused): unmarked after, so the session's
    # later openings of its root (Falsify.open) go on
    monkeypatch.setattr(data_root, "_attached", data_root._attached)
    try:
        with pytest.raises(RootBusy) as refused:
            attached = await Falsify.attach(tmp_path / "state")
            await attached.close()  # the old code attached: let go, so the session goes on
        assert refused.value.exit_code == 3 and "in use by" in str(refused.value), refused.value
    finally:
        monkeypatch.undo()
        settings.reload()  # the session's own lock timeout again
    assert app.journal.epoch() == epoch and app.journal.pending() is None
    await app.status()  # the session's facade still answers
