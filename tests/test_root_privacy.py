"""The data root is private and no log holds a secret.

* A root made by the CLI: the root and every directory in it 0700, every file 0600
  (as a database's data directory): no other local user reads the graph or the log,
  nor opens ``writer.lock`` to ``flock`` it. A root made before (0755, a 0644 lock file)
  is tightened by the next command.
* An internal error's log file (``logs/internal-error-*.log``, 0600) and its one-line
  message mask a database URL's password, a ``--token`` argument and secret variables.
* ``--database postgresql://alice:PASSWORD@...`` on a database that is not there: the
  password is in no file under the root and not on stderr.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys

import pytest

from backend_helpers import POSTGRES
from harness import clean_env, run_batch, run_cli

SECRET = "PASSWORD-s3cr3t-9f8e"


def loose(root) -> list[str]:
    """Every path under ``root`` (the root too) that group or others may access."""
    found = []
    for path in [root, *root.rglob("*")]:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            continue
        if st.st_mode & 0o077:
            found.append(f"{oct(st.st_mode & 0o777)} {path.relative_to(root)}")
    return found


@pytest.mark.slow
def test_a_root_made_by_the_cli_is_private(tmp_path):
    root = tmp_path / "root"
    r = run_batch(root, [{"name": "load", "op": "cli", "argv": ["load", "examples/company_x.json"]},
                         {"name": "check", "op": "cli", "argv": ["check"]}], tmp_path / "b")
    assert [x["code"] for x in r] == [0, 0], r
    assert loose(root) == []
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root / "writer.lock").st_mode) == 0o600
    if POSTGRES:  # a copied root would need its database copied too; the modes above are checked
        return
    old = tmp_path / "old"  # a root made before: group and others could read it and open its lock
    shutil.copytree(root, old, symlinks=True)
    for path in [old, *old.rglob("*")]:
        if not path.is_symlink():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
    status = run_cli(old, "status")
    assert status.returncode == 0, status.stderr
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(old / "writer.lock").st_mode) == 0o600


def test_an_internal_error_log_masks_secrets(tmp_path, monkeypatch):
    from memory_core.shell import cli

    monkeypatch.setattr(sys, "argv", ["main.py", "--database", f"postgresql://alice:{SECRET}@db.example/x",
                                      "serve", "--token", SECRET + "-tok", "--mcp"])
    monkeypatch.setenv("LLM_API_KEY", "sk-" + SECRET)
    try:
        raise RuntimeError(f"could not connect to postgresql://alice:{SECRET}@db.example/x "
                           f"(key sk-{SECRET}, Authorization: Bearer {SECRET}-tok)")
    except RuntimeError as error:
        line = cli.internal_error(error, tmp_path)
    logs = list((tmp_path / "logs").glob("internal-error-*.log"))
    assert len(logs) == 1
    text = logs[0].read_text()
    assert SECRET not in text and SECRET not in line, (line, text)
    assert "postgresql://alice:***@db.example/x" in text and "--token '***'" in text or "--token ***" in text
    assert stat.S_IMODE(logs[0].stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "logs").stat().st_mode) == 0o700


@pytest.mark.slow
def test_a_database_password_is_written_nowhere(tmp_path):
    root = tmp_path / "root"
    url = f"postgresql://alice:{SECRET}@127.0.0.1:9/nowhere?connect_timeout=2"
    env = {k: v for k, v in clean_env().items() if not k.startswith(("FALSIFY_DATABASE", "FALSIFY_BACKEND"))}
    proc = run_cli(root, "--database", url, "status", env=env)
    assert proc.returncode != 0
    err = proc.stderr.decode(errors="replace")
    assert SECRET not in err and "Traceback" not in err, err
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path
