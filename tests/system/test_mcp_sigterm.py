"""``python main.py mcp`` stopped by SIGTERM takes its ``server.json`` away (the warm CLI's
discovery file), so no later command is sent to a server that is gone."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from backend_helpers import POSTGRES
from harness import REPO, backend_env, clean_env, copy_root, loaded_root

pytestmark = [pytest.mark.slow, pytest.mark.skipif(POSTGRES, reason="one backend is enough for a signal")]


def test_sigterm_removes_server_json(tmp_path_factory):
    root = copy_root(loaded_root(tmp_path_factory), tmp_path_factory.mktemp("mcp-term") / "root")
    proc = subprocess.Popen(
        [sys.executable, "main.py", "--root", str(root), "mcp"],
        cwd=REPO,
        env=backend_env(root, clean_env()),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # the discovery file appears once the root is open (bounded wait: the process may be slow to start)
        for _ in range(2400):
            if (root / "server.json").exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert (root / "server.json").exists(), (
            proc.stderr.read().decode(errors="replace") if proc.poll() else ""
        )
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    assert proc.returncode == -signal.SIGTERM
    assert not (root / "server.json").exists()


def test_ctrl_c_stops_the_stdio_server_on_a_terminal(tmp_path_factory):
    """Ctrl-C (SIGINT) on ``python main.py mcp`` whose standard input is a terminal stops it as
    SIGTERM does, at once: exit 130 ("interrupted"), the writer lock and ``server.json`` released.
    (Its standard input was read by a blocking read in a worker thread that no cancellation
    reaches: the server stopped answering but ran on, holding the root, until the terminal went
    away, and then exited 1 with an internal error.)"""
    import fcntl
    import os
    import pty

    import forkserver

    root = copy_root(loaded_root(tmp_path_factory), tmp_path_factory.mktemp("mcp-int") / "root")
    terminal, its_end = pty.openpty()
    errors = root.parent / "server.stderr"
    proc = forkserver.ForkPopen(
        [sys.executable, "main.py", "--root", str(root), "mcp"],
        cwd=REPO,
        env=backend_env(root, clean_env()),
        stdin=its_end,
        stdout=subprocess.DEVNULL,
        stderr=open(errors, "w"),
        start_new_session=True,
    )
    os.close(its_end)
    try:
        for _ in range(2400):  # the root is open (bounded wait: the process may be slow to start)
            if (root / "server.json").exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert (root / "server.json").exists(), errors.read_text()[-3000:]
        proc.send_signal(signal.SIGINT)
        code = proc.wait(120)  # bounded: the terminal stays open, so only the signal can end it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
        os.close(terminal)
    stderr = errors.read_text()
    assert code == 130, (code, stderr[-3000:])
    assert stderr.strip().endswith("interrupted"), stderr[-3000:]
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr[-3000:]
    assert not (root / "server.json").exists()
    lock = os.open(root / "writer.lock", os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: another process may take the root now
    finally:
        os.close(lock)
