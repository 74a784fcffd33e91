"""Ctrl-C reaching a ``revise`` past its commit point (its line is in ``revisions.jsonl``): the
change holds, so the command finishes and reports it (exit 0, its normal output, a note that the
interruption came too late), never "interrupted" (exit 130), which would have a caller retry a
change that was applied (docs/guarantees.md, point 2). Three ways a command runs: in its own
process (``--cold``), in a child of the warm launcher (the caller relays the signal), and answered
by a server holding the root (the client passes the interruption on).

The writing process is stopped (SIGSTOP) as soon as the log has grown, then the caller gets SIGINT
and the writer is resumed: the interruption reaches the command while it still runs, past its
commit point, however fast the machine is."""

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
from backend_helpers import POSTGRES
from harness import REPO, clean_env, copy_root, loaded_root, nodes_by_key
from test_launcher import Launcher, launched_env, runtime  # noqa: F401  (runtime: the fixture)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(POSTGRES, reason="one backend is enough for a signal")]

FACT = "Forensic audit: the March QA report was back-dated."


def _state(pid: int) -> str:
    """The process's state letter (T: stopped), '' when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _writer_pid(root: Path) -> int:
    """The pid of the process holding the root's writer lock (its record: ``pid N (...)``)."""
    return int((root / "writer.lock").read_text().split()[1])


def _status(root: Path) -> dict:
    done = forkserver.run(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), "status", "--json"],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _interrupted_past_commit(root: Path, env: dict, cold: bool = False):
    """``revise FACT --target E_qa``, with SIGINT to the caller while the writer, stopped as soon as
    the log grew, is past its commit point. Returns the caller's (exit code, stdout, stderr), or
    None when the command ended before the writer could be stopped (nothing to conclude)."""
    log = root / "revisions.jsonl"
    size = log.stat().st_size
    caller = forkserver.popen(
        [sys.executable, str(REPO / "main.py"), "--root", str(root)]
        + (["--cold"] if cold else [])
        + ["revise", FACT, "--target", "E_qa"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writer = None
    try:
        while caller.poll() is None and log.stat().st_size == size:
            time.sleep(0.0005)
        if caller.poll() is None:
            writer = _writer_pid(root)
            os.kill(writer, signal.SIGSTOP)
            while _state(writer) not in ("T", "t", "Z", "X", ""):
                time.sleep(0.001)
        stopped = writer is not None and _state(writer) in ("T", "t") and caller.poll() is None
        if stopped:
            caller.send_signal(signal.SIGINT)
    finally:
        if writer is not None:
            os.kill(writer, signal.SIGCONT)
    out, err = caller.communicate(timeout=300)
    assert log.stat().st_size > size, (caller.returncode, err[-2000:])  # committed
    return (caller.returncode, out, err) if stopped else None


def _undo(root: Path) -> None:
    done = forkserver.run(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), "undo"],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def _finishes_and_reports(root: Path, env: dict, cold: bool = False) -> None:
    for _attempt in range(3):  # a command that ended before its writer was stopped proves nothing: again
        result = _interrupted_past_commit(root, env, cold)
        if result is not None:
            break
        _undo(root)
    else:
        pytest.fail("the command ended each time before its writer could be stopped past its commit point")
    code, out, err = result
    assert code == 0, (code, out[-1000:], err[-2000:])
    assert "interrupted" not in err.replace("interrupted too late", ""), err[-2000:]
    assert "E_qa" in out and "refuted" in out, out[-2000:]  # the revision's normal report
    assert nodes_by_key(_status(root))["E_qa"]["state"] == "refuted"  # and the change is kept


def test_ctrl_c_past_the_commit_point_of_a_cold_command(tmp_path_factory, tmp_path):
    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "root")
    _finishes_and_reports(root, clean_env(), cold=True)


def test_ctrl_c_past_the_commit_point_of_a_launched_command(runtime, tmp_path_factory, tmp_path):  # noqa: F811
    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "root")
    launcher = Launcher(runtime, launched_env(runtime))
    try:
        _finishes_and_reports(root, launched_env(runtime))
    finally:
        launcher.stop()


def test_ctrl_c_past_the_commit_point_of_a_command_a_server_answers(tmp_path_factory, tmp_path):
    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "root")
    server = forkserver.popen(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), "mcp"],
        cwd=REPO,
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "server.stderr", "w"),
    )
    try:
        for _ in range(6000):  # the server answers the root's CLI once server.json is there
            if (root / "server.json").exists() or server.poll() is not None:
                break
            time.sleep(0.05)
        assert (root / "server.json").exists(), (tmp_path / "server.stderr").read_text()[-2000:]
        _finishes_and_reports(root, clean_env())
        assert _writer_pid(root) == server.pid  # the server, not a process of the command's own, wrote it
    finally:
        server.stdin.close()
        try:
            server.wait(120)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(60)
