"""One writer per data root, between real processes.

A ``python main.py load`` is stopped (SIGSTOP) while it holds the root's lock.
A second ``python main.py`` on the same root waits FALSIFY_LOCK_TIMEOUT, then
exits 3 naming the holder; a third, with a long timeout, is seen waiting on the
lock file and completes once the holder is resumed and done. Nothing of the
second and third process is mocked; no duration is asserted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forkserver
from harness import EXAMPLE, REPO, clean_env, run_cli

pytestmark = pytest.mark.slow


def popen(root, *argv, **env):
    return forkserver.popen(
        [sys.executable, "main.py", "--root", str(root), *argv],
        cwd=REPO,
        env=clean_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for(predicate, what: str, proc=None, limit: float = 120.0):
    deadline = time.monotonic() + limit
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process ended while waiting for {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def has_open(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_second_process_waits_then_fails_naming_the_holder(tmp_path):
    root = tmp_path / "root"
    lock = root / "writer.lock"
    holder = popen(root, "load", str(EXAMPLE), "--json")
    waiter = None
    try:
        tag = f"pid {holder.pid} (python main.py load)"
        wait_for(
            lambda: lock.exists() and lock.read_text(errors="replace").startswith(tag),
            "the holder's lock",
            holder,
        )
        os.kill(holder.pid, signal.SIGSTOP)  # holds the lock, does nothing

        busy = run_cli(root, "status", "--json", env=clean_env(FALSIFY_LOCK_TIMEOUT="1"))
        assert busy.returncode == 3, busy.stderr
        err = busy.stderr.decode()
        assert err.startswith("error: the data root ") and tag in err and "waited 1s" in err, err
        assert busy.stdout == b""

        waiter = popen(root, "status", "--json", FALSIFY_LOCK_TIMEOUT="300")
        wait_for(lambda: has_open(waiter.pid, lock.resolve()), "the waiter to reach the lock", waiter)
        assert waiter.poll() is None  # blocked behind the stopped holder
        os.kill(holder.pid, signal.SIGCONT)

        out, err = holder.communicate(timeout=300)
        assert holder.returncode == 0, err.decode()
        assert json.loads(out)["epoch"] == 1
        out, err = waiter.communicate(timeout=300)
        assert waiter.returncode == 0, err.decode()
        keys = {n["key"] for n in json.loads(out)["nodes"]}
        assert keys == {"Q", "A", "B", "C", "E_qa", "E_email", "K"}  # it ran after the whole load
        assert lock.read_text() == ""  # released: the holder's name is cleared
    finally:
        for proc in (holder, waiter):
            if proc is not None and proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.kill()
                proc.wait()


def test_a_killed_holder_never_blocks_the_next_process(tmp_path):
    """The kernel drops a dead process's flock: a SIGKILLed writer leaves the root
    usable at once (the journal recovery of its half-done change is covered by
    tests/system/test_fault_injection.py)."""
    from memory_core.store.lock import RootBusy, WriterLock

    root = tmp_path / "root"
    root.mkdir()
    code = (
        "import sys, time; sys.path.insert(0, %r); from memory_core.store.lock import WriterLock; "
        "WriterLock(%r, 'python main.py revise').acquire(); print('held', flush=True); time.sleep(600)"
        % (str(REPO), str(root / "writer.lock"))
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        with pytest.raises(RootBusy, match=rf"in use by pid {holder.pid} \(python main.py revise\)"):
            WriterLock(root / "writer.lock", "test").acquire(timeout=0.2)
        holder.kill()
        holder.wait()
        WriterLock(root / "writer.lock", "test").acquire(timeout=0).release()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
