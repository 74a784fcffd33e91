"""The lifecycle seen from other processes: a host program's event loop while FALSIFY opens
(tests/support/lifecycle_host.py, forked from the fork server, cognee imported there), a closed
facade's root used by another process at once, a host's cognee never taken over, the stdio
MCP server recovering from a busy root and serving no HTTP writer unless asked, the viewer
never printing its token."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import stdio_client

import forkserver
from conftest import REPO, clean_env
from harness import EXAMPLE, copy_root, loaded_root, run_cli
from harness import clean_env as host_env
from test_mcp import SEED, call, server_params

pytestmark = pytest.mark.slow

HOST = REPO / "tests" / "support" / "lifecycle_host.py"


def host(mode: str, tmp_path, **kw) -> dict:
    proc = forkserver.run(
        [sys.executable, str(HOST), mode, "--root", str(tmp_path)],
        cwd=tmp_path,
        env=host_env(),
        capture_output=True,
        text=True,
        timeout=900,
        **kw,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_event_loop_keeps_running_while_falsify_opens_and_works(tmp_path):
    """Nothing of cognee's stack is imported, no engine is built and the model never runs on
    the loop's thread, from a cold open to the close (the control phase shows the watch sees
    the model when it does run there). The pauses are printed, not asserted: what a worker
    thread cannot hide is C code holding Python's GIL (docs/python-api.md, "Lifecycle")."""
    out = host("loop", tmp_path)
    print(
        f"\nlongest pause of the event loop per phase (ms): {out['gaps_ms']}; phases took (ms) "
        f"{out['phase_ms']}; load average {out['load']}"
    )
    seen = [entry for entry in out["on_loop"] if entry[0] != "control"]
    assert seen == [], seen
    assert any(phase == "control" and "embed" in what for phase, what in out["on_loop"]), out["on_loop"]
    assert out["ticks"]["open"] > 0  # the loop ran while the root opened


def test_an_opening_cancelled_while_cognee_is_imported_times_out_and_the_next_opens(tmp_path):
    """``asyncio.wait_for(Falsify.open(root), 0.3)`` in a process that has not imported cognee: the
    host gets its TimeoutError (not an ImportError from a half-imported cognee), and opening again
    at once works: it waits for the import already under way."""
    out = host("cancel_open", tmp_path)
    assert out == {"first": "timed out", "again": 0}, out


def test_a_host_sharing_its_process_cancels_calls_runs_them_at_once_and_keeps_its_output(tmp_path):
    """The process's first revise cancelled while cognee sets itself up: the set-up goes on, the
    next calls work; a load and a revise, an undo and a load, a revise and an undo at once on one
    facade: one change at a time (distinct epochs, the log in order, check clean); a host task
    printing while two revisions run: every line reaches the host's standard output."""
    proc = forkserver.run(
        [sys.executable, str(HOST), "shared", "--root", str(tmp_path)],
        cwd=tmp_path,
        env=host_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.strip().splitlines()
    out = json.loads(lines[-1])
    assert out["first"] == "cancelled" and out["epoch_after_cancel"] == 1
    assert out["again"] == [["E_qa"]]
    epochs = [e for pair in out["epochs"] for e in pair]
    assert sorted(epochs) == list(range(2, 8)), out["epochs"]
    assert out["log_epochs"] == list(range(1, 8)) and out["check"] == []
    assert out["printed"] > 0 and sum(line.startswith("host tick") for line in lines) == out["printed"]
    assert lines[-2] == "host after"


def test_close_frees_the_root_for_another_process_at_once(tmp_path):
    """A host closes its facade and keeps running: another process opens the root at once
    (no 'Could not set lock on file'), writes, and the host then opens the root again."""
    proc = forkserver.popen(
        [sys.executable, str(HOST), "release", "--root", str(tmp_path)],
        cwd=tmp_path,
        env=host_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "closed", line
        other = run_cli(
            tmp_path / "root",
            "revise",
            "Forensic audit: the March QA report was back-dated.",
            "--target",
            "E_qa",
            "--json",
        )
        assert other.returncode == 0, other.stderr
        assert json.loads(other.stdout)["refuted"] == ["E_qa"]
        proc.stdin.write("go\n")
        proc.stdin.flush()
        out = json.loads(proc.stdout.read().strip().splitlines()[-1])
        assert proc.wait(300) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out["refused"] == ["revise", "load", "undo", "status"]  # the closed facade wrote nothing
    assert out["epoch_at_close"] == 1 and out["epoch_now"] == 2  # the other process's revision
    assert out["states"]["E_qa"] == "refuted"


@pytest.mark.parametrize("mode", ["host_config", "host_imported"])
def test_open_never_takes_over_a_hosts_cognee(tmp_path, mode):
    out = host(mode, tmp_path)
    assert out["raised"] is True and out["class"] == "HostConfigError" and out["exit_code"] == 6, out
    assert "Falsify.attach" in out["message"] and "nothing was changed" in out["message"]
    if mode == "host_config":
        assert "SYSTEM_ROOT_DIRECTORY=" in out["message"] and "DATA_ROOT_DIRECTORY=" in out["message"]
    else:
        assert "cognee already imported" in out["message"]
    assert out["environment_changed"] == [] and out["created"] is False


async def test_mcp_tries_a_failed_opening_again(tmp_path_factory, tmp_path):
    """Another process holds the root when the MCP server starts: the first call names the
    holder; once it is gone, the next call opens the root (the failure was not kept)."""
    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "root")  # examples/company_x.json loaded
    holder = forkserver.popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, os, sys, time\n"
                f"fd = os.open({str(root / 'writer.lock')!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                "os.ftruncate(fd, 0); os.pwrite(fd, f'pid {os.getpid()} (python main.py revise)'.encode(), 0)\n"
                "print('held', flush=True); sys.stdin.readline()\n"
            ),
        ],
        cwd=tmp_path,
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        params = server_params(root)
        params.env = clean_env(FALSIFY_LOCK_TIMEOUT="1")
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            busy = await session.call_tool("status", {})
            assert busy.is_error and busy.content[0].text.startswith("error: ")
            assert f"pid {holder.pid} (python main.py revise)" in busy.content[0].text
            holder.stdin.write("done\n")
            holder.stdin.flush()
            holder.wait(30)
            status = await call(session, "status")
            assert {n["key"] for n in status["nodes"]} >= {"E_qa", "K"}
            # the warm CLI's channel came up once the root opened: the CLI is answered by this server
            for _ in range(100):
                if (root / "server.json").exists():
                    break
                await anyio.sleep(0.1)
            warm = run_cli(root, "status", "--json", env=clean_env(FALSIFY_LOCK_TIMEOUT="1"))
            assert warm.returncode == 0 and json.loads(warm.stdout)["nodes"] == status["nodes"]
    finally:
        if holder.poll() is None:
            holder.kill()


def _get(url: str, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _post(url: str, body: dict, headers=None):
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


async def test_stdio_mcp_serves_no_http_writer_unless_asked(tmp_path):
    root = tmp_path / "root"
    errlog = (tmp_path / "server.stderr").open("w+")
    async with (
        stdio_client(server_params(root), errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await call(session, "add_beliefs", fragment=SEED)
        info = json.loads((root / "server.json").read_text())
        assert "viewer_token" not in info
        for path in ("/", "/api/graph"):
            assert _get(info["url"].rstrip("/") + path)[0] == 404
        status, answer = _post(info["url"] + "api/revise", {"fact": "An anonymous write.", "target": "E_qa"})
        assert status == 404, answer
        warm = run_cli(root, "status", "--json")  # the warm CLI's own channel still answers
        assert warm.returncode == 0 and json.loads(warm.stdout)["nodes"]
        assert (await call(session, "status"))["nodes"] == json.loads(warm.stdout)["nodes"]  # nothing written
    errlog.seek(0)
    assert "viewer" not in errlog.read().lower()


async def test_stdio_mcp_viewer_needs_its_token_and_never_prints_it(tmp_path):
    root = tmp_path / "root"
    command, args = forkserver.stdio_command([REPO / "main.py", "--root", root, "mcp", "--viewer"])
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command, args=args, env=clean_env(), cwd=str(REPO))
    errlog = (tmp_path / "server.stderr").open("w+")
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await call(session, "add_beliefs", fragment=SEED)
        info = json.loads((root / "server.json").read_text())
        token = info["viewer_token"]
        assert len(token) >= 16
        assert _get(info["url"] + "api/graph")[0] == 401
        assert _post(info["url"] + "api/revise", {"fact": "x", "target": "E_qa"})[0] == 401
        status, body = _get(info["url"] + "api/graph", {"Authorization": f"Bearer {token}"})
        assert status == 200 and json.loads(body)["nodes"]
        assert (
            _get(info["url"] + "api/graph", {"Authorization": f"Bearer {token}", "Origin": "null"})[0] == 403
        )
    errlog.seek(0)
    printed = errlog.read()
    assert info["url"] in printed and "?token=TOKEN" in printed
    assert token not in printed


def test_serve_prints_the_viewer_address_never_the_token(tmp_path):
    token = "test-token-0123456789abc"
    root = tmp_path / "root"
    proc = forkserver.popen(
        [
            sys.executable,
            "-m",
            "memory_core.web.server",
            "--root",
            str(root),
            "--seed",
            str(EXAMPLE),
            "--port",
            "0",
            "--mcp",
        ],
        cwd=REPO,
        env=clean_env(PYTHONUNBUFFERED="1", FALSIFY_TOKEN=token),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    printed = []
    try:
        for line in proc.stdout:  # the start-up lines, up to the MCP address (the last one printed)
            printed.append(line)
            if line.startswith("FALSIFY MCP"):
                break
        url = next(line.split(": ", 1)[1].strip() for line in printed if line.startswith("FALSIFY viewer: "))
        assert url.endswith("/") and "token" not in url
        assert any("?token=TOKEN" in line for line in printed)  # the way in, without the token
        assert _get(url + "api/graph")[0] == 401
        assert _get(url + "api/graph", {"Authorization": f"Bearer {token}"})[0] == 200
    finally:
        proc.terminate()
        try:
            rest, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
    assert not any(token in line for line in printed + [rest or ""])


def test_the_cli_offers_and_takes_the_offline_decisions(tmp_path_factory, tmp_path):
    from harness import run_batch

    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "root")
    fact = "The supplier email about the valve turned out to be genuine."
    dry, shown, done, both = run_batch(
        root,
        [
            {"name": "dry", "op": "cli", "argv": ["revise", fact, "--dry-run", "--json"]},
            {"name": "shown", "op": "cli", "argv": ["revise", fact]},
            {
                "name": "done",
                "op": "cli",
                "argv": ["revise", fact, "--record", "--supports", "B", "--weight", "0.6", "--json"],
            },
            {
                "name": "both",
                "op": "cli",
                "argv": ["revise", "Another fact.", "--record", "--target", "E_qa"],
            },
        ],
        tmp_path / "batch",
    )
    assert (
        dry["code"] == 0 and json.loads(dry["stdout"])["to_decide"]
    )  # a dry run lists what there is to decide
    assert (
        shown["code"] == 0
        and "--target" in shown["stdout"]
        and f"revise '{fact}' --record" in shown["stdout"]
    )
    assert done["code"] == 0, done["stderr"]
    result = json.loads(done["stdout"])
    assert result["judge"] == "caller" and result["epoch"] == 2
    assert (
        result["edges_added"] == [f"supports {result['new_evidence']} -> B"] and "--record" in result["note"]
    )
    assert both["code"] == 2 and "--record" in both["stderr"] and "--target" in both["stderr"]
