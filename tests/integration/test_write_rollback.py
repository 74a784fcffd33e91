"""A write that fails inside a long-lived process is rolled back there, before the writer
lock is released, exactly as a killed process is rolled back at the next open.

One process (the session's opened root, the in-process API): an I/O error is raised at
every named write step of load, revise and undo (the stores' step hook, the same names
``FALSIFY_FAULT_AT`` kills at), and, on the embedded backend, a real file-size limit
(``RLIMIT_FSIZE``) makes the revision log's append itself fail part-way. After each:
no intent is left journalled, the investigation is exactly its before-state (or, for
a failure after the commit point, exactly its after-state, and the call succeeds with a
warning naming the failure), the log agrees, and ``check`` finds nothing it did not find before.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal

import pytest

from backend_helpers import POSTGRES
from conftest import seed_with_prefix

FACT = "Forensic audit: the March QA report was back-dated."

STEPS = {
    "load": ["journalled", "nodes", "node_edges", "edges", "committed"],
    "revise": ["journalled", "nodes", "node_edges", "updates", "del_nodes", "committed"],
    "undo": ["journalled", "nodes", "node_edges", "updates", "del_nodes", "committed"],
}


class InjectedIOError(OSError):
    pass


def failing_at(step: str):
    def hook(name: str) -> None:
        if name == step:
            raise InjectedIOError(5, f"injected I/O error at {step}")

    return hook


def mine(status, prefix: str) -> dict:
    nodes = {n["key"]: n for n in status["nodes"] if n["key"].startswith(prefix)}
    edges = sorted(
        json.dumps(e, sort_keys=True)
        for e in status["edges"]
        if str(e.get("from", "")).startswith(prefix) or str(e.get("to", "")).startswith(prefix)
    )
    return {"nodes": nodes, "edges": edges}


async def state(app, prefix: str) -> dict:
    return {
        "status": mine(await app.status(), prefix),
        "epoch": app.journal.epoch(),
        "log": len(list(app.journal.entries())),
    }


async def attempt(app, op: str, prefix: str, step: str):
    app.hook = failing_at(step)
    try:
        if op == "load":
            return await app.load(seed_with_prefix(prefix))
        if op == "revise":
            return await app.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
        return await app.undo()
    finally:
        app.hook = None


def kinds(problems) -> set:
    """Problems up to their numbers: the session's root is shared, and a problem other tests
    left (e.g. history lost at epoch N) keeps its kind while the epochs move on."""
    return {re.sub(r"\d+", "N", p) for p in problems}


async def assert_whole(app, expected: dict, prefix: str, problems_before: set):
    assert app.journal.pending() is None, "an intent was left journalled"
    assert await state(app, prefix) == expected
    assert kinds((await app.check())["problems"]) <= kinds(problems_before)


@pytest.mark.slow
async def test_an_io_error_at_every_write_step_is_rolled_back_in_process(app, prefix):
    problems_before = set((await app.check())["problems"])
    empty = await state(app, prefix)
    # load: fails at each step before the commit point -> nothing of it exists
    for step in STEPS["load"][:-1]:
        with pytest.raises(Exception) as failed:
            await attempt(app, "load", prefix, step)
        assert "injected I/O error" in str(failed.value) or isinstance(failed.value, OSError)
        await assert_whole(app, empty, prefix, problems_before)
    # after the commit point: the load is kept, and reported as done, with a warning naming what failed
    result = await attempt(app, "load", prefix, "committed")
    assert result["epoch"] and any(
        "injected I/O error at committed" in w and "committed and kept" in w for w in result["warnings"]
    ), result
    loaded = await state(app, prefix)
    assert loaded["epoch"] == empty["epoch"] + 1 and loaded["status"]["nodes"]
    await assert_whole(app, loaded, prefix, problems_before)
    # revise: each step before the commit point -> exactly the loaded state
    for step in STEPS["revise"][:-1]:
        with pytest.raises(Exception):
            await attempt(app, "revise", prefix, step)
        await assert_whole(app, loaded, prefix, problems_before)
    result = await attempt(app, "revise", prefix, "committed")
    assert result["refuted"] == [f"{prefix}E_qa"] and result["warnings"], result
    revised = await state(app, prefix)
    assert revised["status"]["nodes"][f"{prefix}E_qa"]["state"] == "refuted"
    assert f"{prefix}K" not in revised["status"]["nodes"]  # forgotten
    await assert_whole(app, revised, prefix, problems_before)
    # undo of that revision: each step before the commit point -> still revised
    for step in STEPS["undo"][:-1]:
        with pytest.raises(Exception):
            await attempt(app, "undo", prefix, step)
        await assert_whole(app, revised, prefix, problems_before)
    undone = await app.undo()
    assert undone["undone"] == revised["epoch"]
    assert (await state(app, prefix))["status"] == loaded["status"]


@pytest.mark.slow
@pytest.mark.skipif(POSTGRES, reason="the revision log is a file only on the embedded backend")
async def test_a_log_append_cut_short_by_the_file_size_limit_is_rolled_back(app, prefix):
    await app.load(seed_with_prefix(prefix))
    problems_before = set((await app.check())["problems"])
    before = await state(app, prefix)
    log = app.journal.log_path
    # the limit sits a few bytes past the log's end, above every store file this write touches
    size = log.stat().st_size
    biggest = max((p.stat().st_size for p in log.parent.rglob("*") if p.is_file()), default=0)
    if biggest > size:  # pad the log (blank lines: every reader skips them) above the stores' files
        # lines of spaces, not bare newlines: a reader meets a few thousand lines, not millions
        pad = biggest - size + 4096
        line = " " * 4095 + "\n"
        with open(log, "a", encoding="utf-8") as f:
            f.write(line * (pad // len(line)) + "\n" * (pad % len(line)))
        size = log.stat().st_size
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    saved = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() returns EFBIG instead of a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, hard))
    try:
        with pytest.raises(OSError):
            await app.revise(FACT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, saved)
    assert log.read_bytes().endswith(b"\n") and log.stat().st_size == size  # the torn line was cut
    await assert_whole(app, before, prefix, problems_before)
    with open(log, "r+b") as f:  # drop the padding again (blank lines only)
        data = f.read()
        f.seek(0)
        f.truncate()
        f.write(b"".join(line + b"\n" for line in data.splitlines() if line.strip()))
    assert os.path.getsize(log) > 0
