"""A facade opened without the writer lock (``Falsify.open(root, lock=False)``) reads and writes
nothing: every write (load, revise, revise_many, resolve, undo, check --repair, a host's revision
Tasks) is refused as a second writer is (``RootBusy``, exit code 3), naming why, and nothing is
written; status, recall, explain, the history and check keep working. Before, it wrote: no lock
fenced those writes (on PostgreSQL, effectively a second writer of the database)."""

from __future__ import annotations

import pytest

from conftest import seed_with_prefix
from test_write_rollback import FACT, state
from memory_core import Falsify, RootBusy, revision_tasks


async def test_a_lockless_facade_refuses_every_write_and_still_reads(root, app, prefix):
    await app.load(seed_with_prefix(prefix))
    before = await state(app, prefix)
    fx = await Falsify.open(root, lock=False)
    try:
        writes = {
            "load": lambda: fx.load(seed_with_prefix(prefix + "x")),
            "load_file": lambda: fx.load_file("no-such-investigation.json"),
            "revise": lambda: fx.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_quorble"),
            "revise_many": lambda: fx.revise_many([{"fact": FACT, "target": f"{prefix}E_qa"}]),
            "resolve": lambda: fx.resolve(f"{prefix}E_qa", f"{prefix}E_email"),
            "undo": lambda: fx.undo(),
            "check": lambda: fx.check(repair=True),
        }
        for name, call in writes.items():
            with pytest.raises(RootBusy) as refused:
                await call()
            assert str(refused.value).startswith(f"{name}: ") and "read-only (lock=False" in str(
                refused.value
            )
            assert refused.value.exit_code == 3
        with pytest.raises(RootBusy, match="read-only"):
            revision_tasks(fx)
        assert revision_tasks(fx, dry_run=True)  # a dry run writes nothing
        # reads work
        assert {n["key"] for n in (await fx.status())["nodes"]} >= {f"{prefix}E_qa", f"{prefix}E_email"}
        assert (await fx.explain(f"{prefix}E_qa"))["key"] == f"{prefix}E_qa"
        assert (await fx.recall("Was the QA report back-dated?"))["falsify"] is not None
        assert fx.timeline()[-1]["epoch"] == before["epoch"]
        assert "problems" in await fx.check()
    finally:
        await fx.close()
    assert await state(app, prefix) == before  # nothing written
    assert app.journal.pending() is None
