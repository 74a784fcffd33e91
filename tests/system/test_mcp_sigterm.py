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
