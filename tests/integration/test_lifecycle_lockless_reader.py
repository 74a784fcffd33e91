"""An opening without the writer lock (``Falsify.open(root, lock=False)``: a reader) leaves the
journal's unfinished change alone: it cannot tell a crashed writer's intent from the one a live
writer is applying at that moment. Before, it rolled the change back under the writer, which then
committed it: the log said the revision had landed, the stores held the before-state, and
``check`` found the new evidence missing. The real stores, on the session root: the reader opens
while the session's facade is between its last store write and its commit point."""

from __future__ import annotations

from conftest import seed_with_prefix
from test_write_rollback import FACT, kinds, state
from memory_core import Falsify, RootBusy


async def test_a_reader_opening_while_a_revision_is_written_leaves_it_whole(root, app, prefix, monkeypatch):
    await app.load(seed_with_prefix(prefix))
    problems_before = set((await app.check())["problems"])
    before = await state(app, prefix)
    seen: dict = {}
    checkpoint = app.store.checkpoint

    async def reader_opens_then_checkpoint() -> None:
        # the writer's last await before its commit point: its intent is journalled, its writes done
        if "pending" not in seen:  # once: a rollback of this write checkpoints too
            seen["pending"] = app.journal.pending() is not None
            reader = await Falsify.open(root, lock=False)
            seen["recovered"] = reader.recovered
            await reader.close()
        await checkpoint()

    monkeypatch.setattr(app.store, "checkpoint", reader_opens_then_checkpoint)
    result = await app.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    monkeypatch.undo()
    assert seen["pending"], "the reader did not open while the revision was being written"
    assert "rolled back" not in str(seen["recovered"]), seen
    after = await state(app, prefix)
    assert after["epoch"] == before["epoch"] + 1 == result["epoch"]
    assert after["status"]["nodes"][f"{prefix}F_audit"]["state"] == "alive", after
    assert after["status"]["nodes"][f"{prefix}E_qa"]["state"] == "refuted", after
    assert app.journal.pending() is None
    assert kinds((await app.check())["problems"]) <= kinds(problems_before)


async def test_a_reader_checking_while_a_revision_is_written_reports_it_and_repairs_nothing(
    root, app, prefix, monkeypatch
):
    """``check`` of a reader finds the live writer's unfinished change (its intent) and says so;
    ``check --repair`` of a reader is refused as a second writer is (``RootBusy``), nothing
    written. Before, the repair rolled the writer's change back under it, which then committed."""
    await app.load(seed_with_prefix(prefix))
    problems_before = set((await app.check())["problems"])
    before = await state(app, prefix)
    seen: dict = {}
    checkpoint = app.store.checkpoint

    async def reader_checks_then_checkpoint() -> None:
        if "pending" not in seen:  # once: a rollback of this write checkpoints too
            seen["pending"] = app.journal.pending() is not None
            reader = await Falsify.open(root, lock=False)
            try:
                seen["check"] = await reader.check()
                try:
                    seen["repair"] = await reader.check(repair=True)
                except RootBusy as refused:
                    seen["repair"] = refused
                seen["pending_after"] = app.journal.pending() is not None
            finally:
                await reader.close()
        await checkpoint()

    monkeypatch.setattr(app.store, "checkpoint", reader_checks_then_checkpoint)
    result = await app.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    monkeypatch.undo()
    assert seen["pending"], "the reader did not check while the revision was being written"
    assert "the journal holds an unfinished intent" in seen["check"]["problems"], seen["check"]
    assert isinstance(seen["repair"], RootBusy), seen["repair"]
    assert "writer lock" in str(seen["repair"]) and seen["repair"].exit_code == 3
    assert seen["pending_after"], "the reader rolled back the writer's intent"
    after = await state(app, prefix)
    assert after["epoch"] == before["epoch"] + 1 == result["epoch"]
    assert after["status"]["nodes"][f"{prefix}F_audit"]["state"] == "alive", after
    assert after["status"]["nodes"][f"{prefix}E_qa"]["state"] == "refuted", after
    assert app.journal.pending() is None
    assert kinds((await app.check())["problems"]) <= kinds(problems_before)
