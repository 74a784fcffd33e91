"""MCP and warm-server figures (issues 13 and 15.4), measured in one run.

    python -m bench.mcp [--facts N] [--cli-runs N] [--json]

1. imports: what a fresh process pays to import cognee, the MCP SDK and the CLI module.
2. cold_start: ``python main.py --root DIR mcp`` started by the SDK's stdio client:
   wall time until ``initialize`` answers, until ``tools/list`` answers, and until the
   first tool call (``status``, which waits for the root to open: cognee's import
   and the stores) answers.
3. revise: N facts through MCP (the stdio server above) and the same N facts through
   the direct API (``Falsify.revise`` in this process) on two identical roots; the
   first call of each path is a warm-up and not counted. MCP's overhead per call is
   the difference of the means.
4. warm_cli: ``python main.py --root DIR status --json`` wall time while ``serve``
   runs on the root (answered by the server) and without it (cold, as before).

Figures are measured on this machine in this run (load average printed); nothing is
asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import machine

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "examples" / "company_x.json"


def env() -> dict:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_", "EMBEDDING_")) and k not in ("FALSIFY_HOME", "FALSIFY_NO_SERVER")
    }


def cli(root, *args, extra_env=None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), *map(str, args)],
        cwd=REPO,
        env={**env(), **(extra_env or {})},
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, proc


def import_cost(statement: str, root: Path) -> float:
    code = (
        "import time, sys\n"
        "from memory_core.store import backends, data_root, settings\n"
        f"data_root.configure({str(root)!r}, backends.choose(settings.current()))\n"
        "t = time.perf_counter()\n"
        f"{statement}\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env(), capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def stats(values: list[float]) -> dict:
    ms = [v * 1000 for v in values]
    return {
        "n": len(ms),
        "mean_ms": round(statistics.fmean(ms), 1),
        "p50_ms": round(statistics.median(ms), 1),
        "min_ms": round(min(ms), 1),
        "max_ms": round(max(ms), 1),
    }


def facts(n: int) -> list[str]:
    return [
        f"Field note {i}: inspectors logged routine maintenance of the valve line at plant {i} in 2022."
        for i in range(n + 1)
    ]


async def through_mcp(root: Path, n: int) -> dict:
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[str(REPO / "main.py"), "--root", str(root), "mcp"],
        env=env(),
        cwd=str(REPO),
    )
    out: dict = {}
    start = time.perf_counter()
    async with (
        stdio_client(params, errlog=open(os.devnull, "w")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        out["initialize_s"] = round(time.perf_counter() - start, 2)
        await session.list_tools()
        out["tools_list_s"] = round(time.perf_counter() - start, 2)
        await session.call_tool("status", {})
        out["first_tool_call_s"] = round(time.perf_counter() - start, 2)
        times = []
        for i, fact in enumerate(facts(n)):
            t = time.perf_counter()
            result = await session.call_tool("revise", {"fact": fact})
            if result.is_error:
                raise RuntimeError(result.content[0].text)
            if i:  # the first call warms the pipeline up
                times.append(time.perf_counter() - t)
        out["revise"] = stats(times)
    return out


async def direct(root: Path, n: int) -> dict:
    from memory_core.api import Falsify

    async with Falsify.open(root, purpose="bench.mcp") as fx:
        times = []
        for i, fact in enumerate(facts(n)):
            t = time.perf_counter()
            await fx.revise(fact)
            if i:
                times.append(time.perf_counter() - t)
    return {"revise": stats(times)}


def warm_cli(root: Path, runs: int) -> dict:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), "serve", "--port", "0"],
        cwd=REPO,
        env={**env(), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    while not lines.get(timeout=600).startswith("FALSIFY viewer: "):
        pass
    try:
        warm = []
        cpu_before = os.times()
        for _ in range(runs):
            took, out = cli(root, "status", "--json")
            assert out.returncode == 0, out.stderr
            warm.append(took)
        cpu_after = os.times()
        cpu = (
            cpu_after.children_user
            - cpu_before.children_user
            + cpu_after.children_system
            - cpu_before.children_system
        ) / runs
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(120)
    cold = []
    for _ in range(max(1, runs // 2)):
        took, out = cli(root, "status", "--json")
        assert out.returncode == 0, out.stderr
        cold.append(took)
    return {
        "status_through_server": stats(warm),
        "status_through_server_cpu_s": round(cpu, 3),
        "status_cold": stats(cold),
        "speedup": round(statistics.median(cold) / statistics.median(warm), 1),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp")
    parser.add_argument("--facts", type=int, default=10, help="revisions timed per path (after one warm-up)")
    parser.add_argument("--cli-runs", type=int, default=6, help="warm status runs (cold: half as many)")
    parser.add_argument("--only", choices=("warm_cli",), help="run one section only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.only == "warm_cli":
        work = Path(tempfile.mkdtemp(prefix="falsify-bench-mcp-"))
        try:
            assert cli(work / "cli", "load", SEED)[1].returncode == 0
            report = {"machine": machine(), "warm_cli": warm_cli(work / "cli", args.cli_runs)}
        finally:
            shutil.rmtree(work, ignore_errors=True)
        report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        w, m = report["warm_cli"], report["machine"]
        print(
            json.dumps(report, indent=2)
            if args.json
            else f"bench.mcp --only warm_cli, {m['cpu_count']} CPU(s), {m['date']} (load average "
            f"{m['load_average_at_start']} -> {m['load_average_at_end']}), commit {m['commit']}\n"
            f"status --json: through the server p50 {w['status_through_server']['p50_ms']} ms "
            f"(cpu {w['status_through_server_cpu_s']} s), cold p50 {w['status_cold']['p50_ms']} ms ({w['speedup']}x)"
        )
        return 0

    report: dict = {"machine": machine()}
    work = Path(tempfile.mkdtemp(prefix="falsify-bench-mcp-"))
    try:
        roots = {name: work / name for name in ("mcp", "direct", "cli", "imports")}
        for name in ("mcp", "direct", "cli"):
            took, out = cli(roots[name], "load", SEED)
            assert out.returncode == 0, out.stderr
        report["imports"] = {
            "import_cognee_s": round(import_cost("import cognee", roots["imports"]), 2),
            "import_mcp_sdk_s": round(import_cost("import mcp.server.mcpserver", roots["imports"]), 2),
            "import_cli_module_s": round(import_cost("import memory_core.shell.cli", roots["imports"]), 2),
        }
        mcp = asyncio.run(through_mcp(roots["mcp"], args.facts))
        report["cold_start"] = {k: mcp.pop(k) for k in ("initialize_s", "tools_list_s", "first_tool_call_s")}
        # the direct API in this process (cognee configured for its own root)
        from memory_core.store import backends, data_root, settings

        data_root.configure(roots["direct"], backends.choose(settings.current()))
        report["revise"] = {
            "through_mcp": mcp["revise"],
            "direct_api": asyncio.run(direct(roots["direct"], args.facts))["revise"],
        }
        report["revise"]["mcp_overhead_ms"] = round(
            report["revise"]["through_mcp"]["mean_ms"] - report["revise"]["direct_api"]["mean_ms"], 1
        )
        report["warm_cli"] = warm_cli(roots["cli"], args.cli_runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]

    if args.json:
        print(json.dumps(report, indent=2))
    else:
        m, i, c, r, w = (
            report["machine"],
            report["imports"],
            report["cold_start"],
            report["revise"],
            report["warm_cli"],
        )
        print(
            f"bench.mcp on {m['platform']}, {m['cpu_count']} CPU(s), {m['date']} "
            f"(load average {m['load_average_at_start']} -> {m['load_average_at_end']}), commit {m['commit']}"
        )
        print(
            f"imports in a fresh process: cognee {i['import_cognee_s']} s, MCP SDK {i['import_mcp_sdk_s']} s, "
            f"CLI module {i['import_cli_module_s']} s"
        )
        print(
            f"cold MCP server: initialize {c['initialize_s']} s, tools/list {c['tools_list_s']} s, "
            f"first tool call (root open) {c['first_tool_call_s']} s"
        )
        print(
            f"revise, {r['through_mcp']['n']} facts: MCP mean {r['through_mcp']['mean_ms']} ms "
            f"(p50 {r['through_mcp']['p50_ms']}), direct API mean {r['direct_api']['mean_ms']} ms "
            f"(p50 {r['direct_api']['p50_ms']}); MCP overhead {r['mcp_overhead_ms']} ms per call"
        )
        print(
            f"status --json: through the server p50 {w['status_through_server']['p50_ms']} ms "
            f"(client cpu {w['status_through_server_cpu_s']} s), "
            f"cold p50 {w['status_cold']['p50_ms']} ms ({w['speedup']}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
