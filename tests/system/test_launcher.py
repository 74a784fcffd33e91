"""The warm launcher (memory_core/shell/launcher.py): a command handed to it runs in a forked
child exactly as a cold one would -- the caller's arguments, environment, working directory,
standard streams, signals and exit code -- never twice, never as a second writer.

The launchers here are forked from the test session's fork server (tests/support/forkserver.py, which
has imported the launcher's preload already, so they are ready at once), each in a runtime
directory of its own; the callers are ``python main.py`` processes (forked too, or real ones
where a real process matters: the MCP SDK's stdio client, interpreter options). The test
session itself never goes through a launcher (conftest.py sets ``FALSIFY_LAUNCHER=0``).
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import forkserver
from backend_helpers import log_entries
from harness import REPO, clean_env, copy_root, loaded_root, nodes_by_key

pytestmark = pytest.mark.slow

LAUNCHER_PY = REPO / "memory_core" / "shell" / "launcher.py"


def launcher_module(path: Path = LAUNCHER_PY, name: str = "falsify_launcher_test"):
    """launcher.py as main.py loads it: on its own, standard library only."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Launcher:
    """A launcher forked from the fork server, in a private runtime directory ``base``."""

    def __init__(self, base: Path, env: dict):
        self.base, self.env = base, env
        self.log = open(base / "test-launcher.log", "a")
        code = launcher_module().fingerprint()
        self.proc = forkserver.popen(
            [sys.executable, str(LAUNCHER_PY), "--serve", str(base), code],
            cwd="/",
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        line = self.proc.stdout.readline().strip()
        assert line.startswith("ready "), (line, (base / "test-launcher.log").read_text()[-3000:])
        self.socket = Path(line[len("ready ") :])
        self.pid = self.proc.pid

    def children(self) -> list[int]:
        return children_of(self.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            end_spares(self.pid)
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def spare_of(launcher: "Launcher") -> int:
    """The launcher's one child once the command before has gone: the spare it prepared."""

    def one():
        found = [p for p in launcher.children() if not zombie(p)]
        return found[0] if len(found) == 1 else None

    def stable():
        first = one()
        time.sleep(0.3)
        return first if first is not None and one() == first else None

    return wait_for(stable, what="the spare")


def end_spares(launcher: int) -> None:
    """At a test's end, the launcher's children (its spare, importing cognee for a next command that
    will not come; no command runs by then) are killed with it: left to the launcher's exit, a
    spare finishes its imports first, on a machine the other tests share."""
    for pid in children_of(launcher):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def launchers_in(base: Path) -> list[int]:
    """The launcher processes serving runtime directory ``base`` (``launcher.py --serve BASE``),
    zombies aside."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--serve" in argv and str(base).encode() in argv and not zombie(int(entry.name)):
                found.append(int(entry.name))
    return found


@pytest.fixture
def runtime():
    """A private runtime directory for one test's launchers; any launcher still serving it at the
    end (one a command started, or one a failing test left) is stopped, so none outlives the test."""
    base = Path(tempfile.mkdtemp(prefix="fl-"))  # short: a Unix socket's path has at most 107 bytes
    os.chmod(base, 0o700)
    yield base
    for pid in launchers_in(base):
        end_spares(pid)
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 30
    while launchers_in(base) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in launchers_in(base):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(base, ignore_errors=True)


def launched_env(base: Path, **extra) -> dict:
    return clean_env(FALSIFY_LAUNCHER="1", FALSIFY_RUNTIME_DIR=str(base), **extra)


@pytest.fixture
def launcher(runtime):
    started = Launcher(runtime, launched_env(runtime))
    yield started
    started.stop()


@pytest.fixture
def root(tmp_path_factory, tmp_path):
    return copy_root(loaded_root(tmp_path_factory), tmp_path / "root")


def main_py(*args, env, cwd=REPO, input=None, timeout=180) -> subprocess.CompletedProcess:
    """``python main.py ARGS`` as a caller (a fork-server child: it starts in milliseconds)."""
    return forkserver.run(
        [sys.executable, str(REPO / "main.py"), *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        input=input,
        timeout=timeout,
    )


def hold_lock(root: Path):
    """This test process holds the root's writer lock, as a second writer would."""
    fd = os.open(root / "writer.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} (launcher test holder)".encode(), 0)
    return fd


def waits_for_the_lock(pid: int, root: Path) -> bool:
    """Whether process ``pid`` has the root's lock file open (it then tries to take it)."""
    try:
        return any(
            os.readlink(fd).endswith(str(root / "writer.lock")) for fd in Path(f"/proc/{pid}/fd").iterdir()
        )
    except OSError:
        return False


def release(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def wait_for(predicate, timeout=120.0, what="a condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def test_a_launched_command_sees_the_callers_environment_directory_stdin_and_exit_code(
    launcher, root, tmp_path
):
    env = launched_env(launcher.base, FALSIFY_GATE1_K="1")
    status = main_py("--root", root, "status", env=env)
    assert status.returncode == 0, status.stderr
    assert f"ran warm: forked by the FALSIFY launcher (pid {launcher.pid})" in status.stdout
    # the working directory: a relative --root and a relative file; standard input: load -
    fragment = {"question": {"key": "Q"}, "evidence": [{"key": "E_launched", "claim": "A launched claim."}]}
    loaded = main_py(
        "--root",
        os.path.relpath(root, tmp_path),
        "load",
        "-",
        "--json",
        env=env,
        cwd=tmp_path,
        input=json.dumps(fragment),
    )
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout)["added"] == ["E_launched"]
    # the environment: FALSIFY_HOME finds the root, FALSIFY_GATE1_K=1 bounds gate 1 as it does cold
    dry = main_py(
        "revise",
        "The March QA report was written in April.",
        "--dry-run",
        "--json",
        env=dict(env, FALSIFY_HOME=str(root)),
        cwd=tmp_path,
    )
    assert dry.returncode == 0, dry.stderr
    assert len(json.loads(dry.stdout)["candidates"]) == 1
    wide = main_py(
        "revise",
        "The March QA report was written in April.",
        "--dry-run",
        "--json",
        env=dict(env, FALSIFY_HOME=str(root), FALSIFY_GATE1_K="8"),
        cwd=tmp_path,
    )
    assert len(json.loads(wide.stdout)["candidates"]) > 1
    # exit codes and messages are the command's own, and the same cold
    for args in (
        ["revise", "A fact.", "--target", "NOPE"],
        ["status", "--bogus"],
        ["recall", "--as-of", "yesterday"],
        ["load", "missing.json"],
    ):
        warm = main_py("--root", root, *args, env=env)
        cold = main_py("--root", root, *args, env=clean_env())
        assert warm.returncode == cold.returncode == 2, (args, warm.stderr, cold.stderr)
        assert (warm.stdout, warm.stderr) == (cold.stdout, cold.stderr), args
    assert not [pid for pid in launcher.children() if zombie(pid)]  # every command's child was reaped


def test_ctrl_c_while_the_first_command_starts_the_launcher_is_answered_as_the_command_would(runtime, root):
    """SIGINT to the caller while it waits for the launcher it started (before a child runs the
    command): one line and exit 130, as the command answers Ctrl-C, no traceback; nothing ran."""
    caller = forkserver.popen(
        [
            sys.executable,
            str(REPO / "main.py"),
            "--root",
            str(root),
            "revise",
            "Some fact.",
            "--target",
            "E_qa",
        ],
        cwd=REPO,
        env=launched_env(runtime),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: launchers_in(runtime), what="the launcher the caller starts")
    caller.send_signal(signal.SIGINT)
    out, err = caller.communicate(timeout=120)
    assert caller.returncode == 130 and err == "interrupted\n" and out == "", (caller.returncode, err[-2000:])
    after = json.loads(main_py("--root", root, "status", "--json", env=clean_env()).stdout)
    assert nodes_by_key(after)["E_qa"]["state"] == "alive"  # nothing was revised


def test_ctrl_c_reaches_the_launched_command(launcher, root):
    """SIGINT to the caller reaches the command (it waits for the lock): it stops as a cold
    command does on Ctrl-C, and the caller exits with its code."""
    fd = hold_lock(root)
    try:
        env = launched_env(launcher.base, FALSIFY_LOCK_TIMEOUT="120")
        caller = forkserver.popen(
            [
                sys.executable,
                str(REPO / "main.py"),
                "--root",
                str(root),
                "revise",
                "Some fact.",
                "--target",
                "E_qa",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        child = wait_for(launcher.children, what="the launched child")[0]
        wait_for(lambda: waits_for_the_lock(child, root), what="the child waiting for the writer lock")
        caller.send_signal(signal.SIGINT)
        out, err = caller.communicate(timeout=120)
    finally:
        release(fd)
    assert caller.returncode == 130 and "interrupted" in err, (caller.returncode, err[-2000:])
    wait_for(
        lambda: not Path(f"/proc/{child}").exists() or child not in launcher.children(),
        what="the child's end",
    )
    after = json.loads(main_py("--root", root, "status", "--json", env=clean_env()).stdout)
    assert nodes_by_key(after)["E_qa"]["state"] == "alive"  # nothing was revised


def test_a_second_writer_is_refused_as_on_the_cold_path(launcher, root):
    fd = hold_lock(root)
    try:
        args = ("--root", root, "revise", "Some fact.", "--target", "E_qa")
        warm = main_py(*args, env=launched_env(launcher.base, FALSIFY_LOCK_TIMEOUT="0"))
        cold = main_py(*args, env=clean_env(FALSIFY_LOCK_TIMEOUT="0"))
    finally:
        release(fd)
    assert warm.returncode == cold.returncode == 3
    assert "is in use by pid" in warm.stderr and "launcher test holder" in warm.stderr
    assert warm.stderr == cold.stderr


def test_nothing_runs_twice_when_the_launcher_dies_mid_command(launcher, root):
    """The launcher is killed while its child waits for the lock: the child goes on, reports its
    own exit code to the caller, and the revision is recorded once; the next command starts a
    new launcher (a killed launcher is replaced)."""
    fd = hold_lock(root)
    env = launched_env(launcher.base, FALSIFY_LOCK_TIMEOUT="120")
    try:
        caller = forkserver.popen(
            [
                sys.executable,
                str(REPO / "main.py"),
                "--root",
                str(root),
                "revise",
                "Forensic audit: the March QA report was back-dated.",
                "--target",
                "E_qa",
                "--json",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(launcher.children, what="the launched child")
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.proc.wait(30)
    finally:
        release(fd)
    out, err = caller.communicate(timeout=240)
    assert caller.returncode == 0, err[-3000:]
    assert json.loads(out)["refuted"] == ["E_qa"]
    assert [entry.get("kind") for entry in log_entries(root)] == ["load", "revise"], [
        entry.get("kind") for entry in log_entries(root)
    ]  # one revision, run once
    # the dead launcher's socket is still there, and nothing listens: the next command starts a new one
    # (a real process: this one pays the cold start) and runs in it
    replaced = main_py("--root", root, "status", env=env, timeout=600)
    assert replaced.returncode == 0, replaced.stderr
    found = re.search(r"ran in the FALSIFY launcher this command started \(pid (\d+)\)", replaced.stdout)
    assert found, replaced.stdout[-500:]
    new_pid = int(found.group(1))
    try:
        assert new_pid != launcher.pid
        # that launcher imported its preload for real: every module that scanned the whole environment
        # is one whose variables it knows (else any variable, PWD included, would key it)
        keys = json.loads(next(launcher.base.glob("*.keys")).read_text())
        assert "" not in keys["prefixes"] and {"PWD", "OLDPWD", "SHLVL", "_"}.isdisjoint(keys["names"])
        # openai's import reads AZURE_OPENAI_ENDPOINT; LLM_API_KEY decides whether litellm is preloaded
        assert {"AZURE_OPENAI_ENDPOINT", "LLM_API_KEY"} <= set(keys["names"])
        assert "LITELLM_LOCAL_MODEL_COST_MAP" not in keys["names"]  # offline: litellm is not imported
        again = main_py("--root", root, "status", env=env)
        assert f"ran warm: forked by the FALSIFY launcher (pid {new_pid})" in again.stdout
    finally:
        end_spares(new_pid)
        os.kill(new_pid, signal.SIGTERM)
    wait_for(lambda: not Path(f"/proc/{new_pid}").exists() or zombie(new_pid), what="the new launcher's exit")


def test_the_socket_is_private_and_a_shared_directory_is_not_used(launcher, root, tmp_path):
    assert stat.S_IMODE(os.stat(launcher.base).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(launcher.socket).st_mode) == 0o600
    assert launcher.socket.parent == launcher.base
    shared = Path(tempfile.mkdtemp(prefix="fl-"))
    try:
        os.chmod(shared, 0o755)
        # --help prints the same note as status, and opens no root: the directory is judged first
        cold = main_py("--root", root, "--help", env=launched_env(shared))
        assert cold.returncode == 0, cold.stderr
        assert f"ran cold (runtime directory {shared} is not private" in " ".join(cold.stdout.split())
        assert not list(shared.iterdir())
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_bypasses_run_the_command_cold(launcher, root):
    """Each bypass runs the command here, whatever the command (the launcher decides before it
    reads one): ``status`` on the root for one, ``--help`` (which prints the same note, and opens
    no root) for the others."""
    for extra, args, said in (
        ({"FALSIFY_NO_SERVER": "1"}, ["status"], "(ran cold (FALSIFY_NO_SERVER=1))"),
        ({}, ["--cold", "--help"], "this one ran cold (--cold)."),
        ({"FALSIFY_LAUNCHER": "0"}, ["--help"], "this one ran cold (FALSIFY_LAUNCHER=0)."),
    ):
        done = main_py("--root", root, *args, env=dict(launched_env(launcher.base), **extra))
        assert done.returncode == 0, done.stderr
        assert said in " ".join(done.stdout.split()), done.stdout[-500:]
    # interpreter options the launcher does not have: cold (a real interpreter, started with -W)
    helped = subprocess.run(
        [sys.executable, "-W", "ignore", str(REPO / "main.py"), "--help"],
        cwd=REPO,
        env=launched_env(launcher.base),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert helped.returncode == 0 and "ran cold (interpreter options differ from the launcher's)" in " ".join(
        helped.stdout.split()
    )
    helped = main_py("--help", env=launched_env(launcher.base))
    assert f"ran warm: forked by the FALSIFY launcher (pid {launcher.pid})" in " ".join(helped.stdout.split())


def test_the_launcher_is_keyed_to_its_code_and_environment(tmp_path):
    """Another checkout, an edited file, or an environment its imports read: another launcher."""
    first = tmp_path / "a" / "memory_core"
    shutil.copytree(
        REPO / "memory_core", first, ignore=shutil.ignore_patterns("__pycache__", "static", "_model_files")
    )
    second = tmp_path / "b" / "memory_core"
    shutil.copytree(first, second)
    a = launcher_module(first / "shell" / "launcher.py", "falsify_launcher_a")
    b = launcher_module(second / "shell" / "launcher.py", "falsify_launcher_b")
    before = a.fingerprint()
    assert before != b.fingerprint()  # another checkout
    (first / "core" / "cascade.py").write_text((first / "core" / "cascade.py").read_text() + "\n# edited\n")
    assert a.fingerprint() != before  # an edited checkout
    keys = {"names": ["LITELLM_LOG"], "prefixes": ["FSSPEC_"]}
    env = {"HOME": "/h", "PATH": "/bin", "PWD": "/x", "LLM_API_KEY": "k"}
    digest = a.environment_digest(keys, env)
    assert a.environment_digest(keys, dict(env, PWD="/y", LLM_API_KEY="other", OLDPWD="/z")) == digest
    for changed in (
        {"LITELLM_LOG": "DEBUG"},
        {"FSSPEC_CONFIG_DIR": "/c"},
        {"LANG": "fr_FR.UTF-8"},
        {"PYTHONPATH": "/p"},
        {"HOME": "/other"},
    ):
        assert a.environment_digest(keys, dict(env, **changed)) != digest, changed


def test_the_launcher_exits_when_idle(runtime):
    idle = Launcher(runtime, launched_env(runtime, FALSIFY_LAUNCHER_IDLE_S="0.5"))
    try:
        assert idle.proc.wait(60) == 0
        assert not idle.socket.exists()
    finally:
        idle.stop()


async def test_an_mcp_server_spawned_by_an_agent_runs_in_the_launcher(launcher, root):
    """An agent's ``python main.py mcp`` (a real process, started by the official SDK's stdio
    client) is a light caller: the MCP server is the launcher's child, on the agent's pipes;
    its tools answer, and closing the session ends it (and the caller, with its exit code)."""
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[str(REPO / "main.py"), "--root", str(root), "mcp"],
        env=launched_env(launcher.base),
        cwd=str(REPO),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("status", {})
        assert not result.is_error, result.content[0].text
        assert {n["key"] for n in result.structured_content["nodes"]} >= {"Q", "E_qa", "K"}
        [server] = launcher.children()  # the MCP server
        result = await session.call_tool("explain", {"key": "E_qa"})
        assert not result.is_error and result.structured_content["key"] == "E_qa"
    wait_for(lambda: server not in launcher.children() or zombie(server), what="the MCP server's end")


def test_a_spare_runs_the_next_command_of_the_same_kind(launcher, root):
    """After a command on a root, the launcher prepares a spare (the next command's process, its
    settings read, the root configured, cognee imported); the next command with exactly the same
    environment and directory runs there, with the same result a fresh child gives; a command with
    one variable changed gets a fresh child."""
    env = launched_env(launcher.base)
    fresh = main_py("--root", root, "recall", "--json", env=env)
    assert fresh.returncode == 0, fresh.stderr
    spare = spare_of(launcher)
    warm = main_py("--root", root, "recall", "--json", env=env)
    assert warm.returncode == 0, warm.stderr
    assert json.loads(warm.stdout) == json.loads(fresh.stdout)
    wait_for(
        lambda: spare not in launcher.children() or zombie(spare), what="the spare's end"
    )  # it ran the recall
    spare_of(launcher)  # and the launcher prepared the next one
    noted = main_py("--root", root, "status", env=env)
    assert "cognee already imported for this root" in noted.stdout  # the spare the recall left
    spare_of(launcher)
    other = main_py("--root", root, "status", env=dict(env, FALSIFY_GATE1_K="3"))
    assert other.returncode == 0 and "(ran warm: forked by the FALSIFY launcher" in other.stdout
    assert "cognee already imported" not in other.stdout


def test_a_command_whose_caller_is_killed_dies_with_it(launcher, root):
    """As a cold process killed mid-command: the caller SIGKILLed, its child (waiting for the lock
    here) is killed too, and nothing is written."""
    fd = hold_lock(root)
    try:
        caller = forkserver.popen(
            [
                sys.executable,
                str(REPO / "main.py"),
                "--root",
                str(root),
                "revise",
                "Some fact.",
                "--target",
                "E_qa",
            ],
            cwd=REPO,
            env=launched_env(launcher.base, FALSIFY_LOCK_TIMEOUT="120"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        child = wait_for(launcher.children, what="the launched child")[0]
        wait_for(lambda: waits_for_the_lock(child, root), what="the child waiting for the writer lock")
        caller.kill()
        caller.wait(30)
        wait_for(lambda: child not in launcher.children() or zombie(child), what="the child's end")
    finally:
        release(fd)
    after = json.loads(main_py("--root", root, "status", "--json", env=clean_env()).stdout)
    assert nodes_by_key(after)["E_qa"]["state"] == "alive"
    assert [entry.get("kind") for entry in log_entries(root)] == ["load"]
