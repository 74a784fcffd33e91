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
from harness import REPO, clean_env, run_batch, run_cli

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
    r = run_batch(
        root,
        [
            {"name": "load", "op": "cli", "argv": ["load", "examples/company_x.json"]},
            {"name": "check", "op": "cli", "argv": ["check"]},
        ],
        tmp_path / "b",
    )
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
    from memory_core.shell import commands

    monkeypatch.setattr(
        sys,
        "argv",
        [
            "main.py",
            "--database",
            f"postgresql://alice:{SECRET}@db.example/x",
            "serve",
            "--token",
            SECRET + "-tok",
            "--mcp",
        ],
    )
    monkeypatch.setenv("LLM_API_KEY", "sk-" + SECRET)
    try:
        raise RuntimeError(
            f"could not connect to postgresql://alice:{SECRET}@db.example/x "
            f"(key sk-{SECRET}, Authorization: Bearer {SECRET}-tok)"
        )
    except RuntimeError as error:
        line = commands.internal_error(error, tmp_path)
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


def _attacked_root(tmp_path, owner: int, mode: int, link: bool):
    """A root folder (``owner``, ``mode``) whose ``writer.lock`` may be a link to a victim file."""
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's data\n")
    os.chmod(victim, 0o644)
    root = tmp_path / "root"
    root.mkdir()
    if link:
        (root / "writer.lock").symlink_to(victim)
        os.lchown(root / "writer.lock", owner, -1)
    os.chown(root, owner, -1)
    os.chmod(root, mode)
    return root, victim


CASES = [  # (owner is another user, mode, lock is a link, what the one error line says)
    (True, 0o777, True, "belongs to another user"),
    (False, 0o777, True, "can be written by its group and other users (mode 0777)"),
    (False, 0o770, False, "can be written by its group (mode 0770): they could plant links"),
    (False, 0o700, True, "is a symbolic link, and FALSIFY never follows one for its lock file"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "other,mode,link,says", CASES, ids=["other-user", "world-writable", "group-writable", "link"]
)
def test_an_unsafe_root_is_refused_and_nothing_is_written(tmp_path, other, mode, link, says):
    if other and os.getuid() != 0:
        pytest.skip("making a folder another user's needs root")
    owner = 65534 if other else os.getuid()  # nobody
    root, victim = _attacked_root(tmp_path, owner, mode, link)
    before = sorted(p.name for p in root.iterdir())
    proc = run_cli(root, "load", str(REPO / "examples" / "company_x.json"))
    err = proc.stderr.decode(errors="replace")
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and says in lines[0] and str(root) in lines[0], err[
        -2000:
    ]
    assert "chmod 700" in lines[0] or "chown" in lines[0] or "rm " in lines[0], lines[0]
    assert victim.read_text() == "the victim's data\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert sorted(p.name for p in root.iterdir()) == before  # nothing was made in it
    assert stat.S_IMODE(os.lstat(root).st_mode) == mode and os.lstat(root).st_uid == owner


def test_the_lock_file_is_opened_without_following_a_link(tmp_path):
    """The lock itself, asked directly (a root that passed the checks, then had a link planted)."""
    from memory_core.store.lock import UnsafeRoot, WriterLock

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    (root / "writer.lock").symlink_to(victim)
    with pytest.raises(UnsafeRoot, match="is a symbolic link"):
        WriterLock(root / "writer.lock", "test", timeout=0).acquire()
    assert victim.read_text() == "keep me"
    assert UnsafeRoot.exit_code == 2
