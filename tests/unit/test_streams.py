"""What FALSIFY's own work prints is captured for that task alone (memory_core.store.streams):
another task of the process prints where it always did, a worker thread started by the
captured task is captured too, and overlapping captures never leave the process's
standard output pointing at a dead buffer."""

from __future__ import annotations

import asyncio
import io
import sys

from memory_core.store.streams import captured


async def test_a_capture_takes_only_its_own_tasks_writes(monkeypatch):
    host = io.StringIO()
    monkeypatch.setattr(sys, "stdout", host)
    mine = io.StringIO()
    started = asyncio.Event()

    async def captured_work():
        with captured(stdout=mine):
            print("ours")
            started.set()
            await asyncio.sleep(0.01)
            await asyncio.to_thread(print, "ours from a worker thread")
            print("ours again")

    async def host_work():
        await started.wait()
        print("the host's")

    await asyncio.gather(captured_work(), host_work())
    print("the host's after")
    assert mine.getvalue().splitlines() == ["ours", "ours from a worker thread", "ours again"]
    assert host.getvalue().splitlines() == ["the host's", "the host's after"]


async def test_overlapping_captures_leave_standard_output_working(monkeypatch):
    host = io.StringIO()
    monkeypatch.setattr(sys, "stdout", host)
    first, second = io.StringIO(), io.StringIO()
    go_on = asyncio.Event()

    async def one():  # enters first, leaves last
        with captured(stdout=first):
            await go_on.wait()
            print("one")

    async def two():  # enters second, leaves first
        with captured(stdout=second):
            print("two")
        go_on.set()

    await asyncio.gather(one(), two())
    print("host")
    assert (first.getvalue(), second.getvalue(), host.getvalue()) == ("one\n", "two\n", "host\n")
    assert sys.stdout.write("x") == 1 and host.getvalue().endswith("x")
