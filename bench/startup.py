"""Start-up and resident size: what a command costs cold, warm through the launcher, and what
a long-lived server holds, by part.

    python -m bench.startup [--runs N] [--cold-runs N] [--mcp-runs N] [--json | --markdown]
    python -m bench.startup --render REPORT.json [--markdown]   (a saved --json report, printed again)

1. ``cold``: ``python main.py --cold --root R status`` (the demo root), ``--cold-runs`` times.
2. ``launcher``: the same commands with the warm launcher on (``FALSIFY_LAUNCHER=1``, a runtime
   directory of the benchmark's own): the first command (it starts the launcher and pays the
   cold start), then ``status``, ``explain E_qa``, ``recall`` and ``revise`` (the demo's fact
   pinned to E_qa; each followed by an ``undo``, not timed), ``--runs`` times each: p50, p95;
   ``--pause`` seconds between two commands (default 2, as a person types them, which leaves the
   launcher's spare for the next command the time to get ready; 0: back to back, as a script).
3. ``mcp``: an agent's ``python main.py --root R mcp`` started by the official SDK's stdio
   client: seconds to ``initialize`` and to the first tool call's answer (``status``), cold
   (``FALSIFY_LAUNCHER=0``) and warm (through the launcher), ``--mcp-runs`` times each.
4. ``resident``: a fresh process importing and opening what a server does, one part at a time
   (VmRSS after each, and the unique set size: FALSIFY's shell modules, the stand-ins of the
   packages FALSIFY never calls (litellm, dlt, pypdf, networkx), cognee's other dependencies,
   cognee itself, the opened root with LanceDB and the embedding model, the warm-up, the first
   queries, revisions), with
   where the memory is at the end (/proc/self/smaps: libraries and mapped files, glibc's heaps,
   other anonymous memory); and a real ``serve`` process's VmRSS after it answered the warm
   CLI's commands (``status``, ``recall``, and ``revise`` + ``undo`` ``--runs`` times).

Every figure is measured in the run that prints it, with the machine, the date and the load
average at the start and the end (the machine may be shared: the load says how much). Each
timing is the caller's wall time, from starting ``python main.py`` to its exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import machine, start_serve, stop_serve, summary

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "examples" / "company_x.json"
FACT = "Forensic audit: the March QA report was back-dated."


def base_env(**extra) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_", "EMBEDDING_", "FALSIFY_")) and k not in ("DEMO_MODE",)
    }
    env.update(extra)
    return env


def run(root, *args, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), *map(str, args)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{args} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return took, proc


def seconds(values: list[float]) -> dict:
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in summary(values).items()}


def cold(root: Path, runs: int) -> dict:
    env = base_env(FALSIFY_LAUNCHER="0")
    return {"status": seconds([run(root, "--cold", "status", env=env)[0] for _ in range(runs)])}


def launcher(root: Path, runtime: Path, runs: int, pause: float = 0.0) -> tuple[dict, int]:
    env = base_env(FALSIFY_LAUNCHER="1", FALSIFY_RUNTIME_DIR=str(runtime))
    took, first = run(root, "status", env=env)
    found = re.search(r"FALSIFY launcher this command started \(pid (\d+)\)", first.stdout)
    if not found:
        raise RuntimeError(f"the first command did not start the launcher: {first.stdout[-400:]}")
    out: dict = {"first_command_s": round(took, 2), "launcher_pid": int(found.group(1))}
    times: dict = {"status": [], "explain": [], "recall": [], "revise": []}
    for _ in range(runs):
        for name, args in (("status", ["status"]), ("explain", ["explain", "E_qa"]), ("recall", ["recall"])):
            time.sleep(pause)
            took, proc = run(root, *args, env=env)
            times[name].append(took)
        time.sleep(pause)
        took, proc = run(root, "revise", FACT, "--target", "E_qa", env=env)
        times["revise"].append(took)
        time.sleep(pause)
        run(root, "undo", env=env)
    warm = run(root, "status", env=env)[1]
    if "ran warm: forked by the FALSIFY launcher" not in warm.stdout:
        raise RuntimeError(f"status did not run warm: {warm.stdout[-400:]}")
    out.update({name: seconds(values) for name, values in times.items()})
    return out, out["launcher_pid"]


async def mcp_first_call(root: Path, env: dict) -> dict:
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[str(REPO / "main.py"), "--root", str(root), "mcp"],
        env=env,
        cwd=str(REPO),
    )
    start = time.perf_counter()
    out = {}
    async with (
        stdio_client(params, errlog=open(os.devnull, "w")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        out["initialize_s"] = time.perf_counter() - start
        result = await session.call_tool("status", {})
        if result.is_error:
            raise RuntimeError(result.content[0].text)
        out["first_tool_call_s"] = time.perf_counter() - start
    return out


def mcp(root: Path, runtime: Path, runs: int, pause: float = 0.0) -> dict:
    report = {}
    for name, env in (
        ("cold", base_env(FALSIFY_LAUNCHER="0")),
        ("warm", base_env(FALSIFY_LAUNCHER="1", FALSIFY_RUNTIME_DIR=str(runtime))),
    ):
        calls = []
        for _ in range(runs):
            time.sleep(pause)
            calls.append(asyncio.run(mcp_first_call(root, env)))
        report[name] = {k: seconds([c[k] for c in calls]) for k in ("initialize_s", "first_tool_call_s")}
    return report


# ---- resident size by part (in a fresh process: python -m bench.startup --parts ROOT N) --------


def _vm(field: str = "VmRSS") -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _uss() -> float:
    """This process's unique set size (MB): the pages no other process shares
    (/proc/self/smaps_rollup's Private_Clean + Private_Dirty)."""
    private = 0
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                private += int(line.split()[1])
    return private / 1024


def parts(root: Path, revisions: int) -> dict:
    """Import and open what a server does, one part at a time; VmRSS after each, and the unique
    set size (MB)."""
    import importlib

    steps: list = []
    last = _vm()
    steps.append(["the interpreter", round(last, 1), round(last, 1), round(_uss(), 1)])

    def step(name: str) -> None:
        nonlocal last
        now = _vm()
        steps.append([name, round(now - last, 1), round(now, 1), round(_uss(), 1)])
        last = now

    from memory_core.store import backends, data_root, process, settings

    data_root.claim_process()  # as serve does: a process of FALSIFY's own
    data_root.configure(root, backends.choose(settings.current()))
    import memory_core.shell.cli  # noqa: F401
    import memory_core.web.server  # noqa: F401

    step("FALSIFY's modules (CLI, web server, uvicorn)")
    from memory_core.store import lazy_imports

    data_root.defer_unused_packages()  # as data_root.import_cognee does
    step(
        "litellm, dlt, pypdf, networkx, dateparser: stand-ins, each imported on first use (never by FALSIFY offline); "
        "pyarrow, told pandas is absent until something imports it"
    )
    for name in (
        "openai",
        "pyarrow",
        "sqlalchemy",
        "sqlalchemy.ext.asyncio",
        "alembic",
        "fastapi",
        "tiktoken",
        "rdflib",
        "dateparser",
        "redis",
        "fastapi_users",
        "ladybug",
        "lance_namespace",
        "onnxruntime",
        "tokenizers",
    ):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    step("cognee's other dependencies (openai, sqlalchemy, ...)")
    data_root.import_cognee()
    step("cognee itself")

    from memory_core.api import Falsify

    async def opened():
        app = await Falsify.open(root, purpose="bench.startup")
        await app.status()
        step("the opened root (Ladybug, the relational database, LanceDB, the embedding model) and a status")
        await app.warm_up()
        step("warm_up (cognee's pipeline runner, a first search)")
        await app.recall()
        await app.explain("E_qa")
        step("a recall and an explain")
        for _ in range(revisions):
            await app.revise(FACT, target="E_qa")
            await app.undo()
        process.trim_native_heap()
        step(f"{revisions} revise + undo, then malloc_trim")
        await app.close()

    asyncio.run(opened())
    from bench.soak import native_breakdown

    return {
        "steps": steps,
        "litellm_imported": lazy_imports.loaded("litellm"),
        "deferred_imported": [d.name for d in lazy_imports.DEFERRED if lazy_imports.loaded(d.name)]
        + ([lazy_imports.PANDAS] if lazy_imports.PANDAS in sys.modules else []),
        "rss_mb": round(_vm(), 1),
        "peak_mb": round(_vm("VmHWM"), 1),
        "where": native_breakdown(),
    }


def resident(root: Path, revisions: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.startup", "--parts", str(root), str(revisions)],
        cwd=REPO,
        env=base_env(FALSIFY_LAUNCHER="0"),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def server(root: Path, runs: int) -> dict:
    """A real ``serve`` on the root, answering the warm CLI: its VmRSS and VmHWM (MB)."""
    from memory_core.store.backends.base import IDLE_TRIM_S

    env = base_env(FALSIFY_LAUNCHER="0")
    proc = start_serve(root, env)

    def memory() -> dict:
        fields = {}
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                fields[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
        return fields

    try:
        out = {"started": memory()}
        run(root, "status", env=env)
        run(root, "recall", env=env)
        out["after_status_and_recall"] = memory()
        for _ in range(runs):
            run(root, "revise", FACT, "--target", "E_qa", env=env)
            run(root, "undo", env=env)
        out["busy"] = memory()  # right after the last undo
        time.sleep(IDLE_TRIM_S + 0.5)  # the server between two requests: it has given back what it freed
        out[f"after_{runs}_revise_and_undo"] = memory()
    finally:
        stop_serve(proc)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup")
    parser.add_argument("--runs", type=int, default=20, help="warm runs of each command (default 20)")
    parser.add_argument("--cold-runs", type=int, default=3, help="cold status runs (default 3)")
    parser.add_argument("--mcp-runs", type=int, default=3, help="MCP sessions, cold and warm (default 3)")
    parser.add_argument(
        "--pause",
        type=float,
        default=2.0,
        help="seconds between two warm commands (default 2, as a person types them; 0: back to back, "
        "as a script runs them, the next command often arriving before the launcher's spare is ready)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help='print the figures as the Markdown table docs/cli.md holds ("Start-up figures")',
    )
    parser.add_argument(
        "--render",
        metavar="REPORT.json",
        help="print a report saved by --json (as text, or with --markdown as the table); measure nothing",
    )
    parser.add_argument("--parts", nargs=2, metavar=("ROOT", "REVISIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.parts:
        print(json.dumps(parts(Path(args.parts[0]), int(args.parts[1]))))
        return 0
    if args.render:
        report = json.loads(Path(args.render).read_text())
        print(markdown(report) if args.markdown else text(report))
        return 0

    began = time.perf_counter()
    report: dict = {"machine": machine()}
    work = Path(tempfile.mkdtemp(prefix="falsify-bench-startup-"))
    runtime = Path(tempfile.mkdtemp(prefix="fl-bench-"))  # short: a Unix socket's path is at most 107 bytes
    os.chmod(runtime, 0o700)
    launcher_pid = None
    try:
        root = work / "demo"
        run(root, "--cold", "load", SEED, env=base_env(FALSIFY_LAUNCHER="0"))
        report["cold"] = cold(root, args.cold_runs)
        report["launcher"], launcher_pid = launcher(root, runtime, args.runs, args.pause)
        report["launcher"]["pause_s"] = args.pause
        report["mcp"] = mcp(root, runtime, args.mcp_runs, args.pause)
        copy = work / "parts"
        shutil.copytree(root, copy)
        report["resident"] = {"by_part": resident(copy, args.runs)}
        served = work / "served"
        shutil.copytree(root, served)
        report["resident"]["serve"] = server(served, args.runs)
    finally:
        if launcher_pid:
            try:
                os.kill(launcher_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["seconds"] = round(time.perf_counter() - began, 1)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(markdown(report) if args.markdown else text(report))
    return 0


def text(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"bench.startup: {m['cpu_count']} CPU(s) {m['cpu_model']}, {m['date']}, commit {m['commit']}, load average "
        f"{m['load_average_at_start']} -> {m['load_average_at_end']}, {report['seconds']} s"
    ]
    c, w = report["cold"], report["launcher"]
    lines.append(f"cold status (--cold): p50 {c['status']['p50']} s over {c['status']['n']}")
    lines.append(
        f"launcher: first command {w['first_command_s']} s (starts the launcher); {w['pause_s']} s between "
        "commands"
    )
    for name in ("status", "explain", "recall", "revise"):
        lines.append(f"  warm {name:8s} p50 {w[name]['p50']} s, p95 {w[name]['p95']} s over {w[name]['n']}")
    for name in ("cold", "warm"):
        x = report["mcp"][name]
        lines.append(
            f"mcp {name}: initialize p50 {x['initialize_s']['p50']} s, first tool call p50 "
            f"{x['first_tool_call_s']['p50']} s over {x['first_tool_call_s']['n']}"
        )
    r = report["resident"]["by_part"]
    lines.append("resident size by part (VmRSS, MB; one fresh process; USS: its unshared pages):")
    for name, delta, total, *uss in r["steps"]:
        lines.append(
            f"  {name:60s} +{delta:7.1f} -> {total:7.1f}" + (f"  (USS {uss[0]:7.1f})" if uss else "")
        )
    lines.append(f"  where at the end: {r['where']}")
    lines.append(f"serve (VmRSS / VmHWM, MB): {report['resident']['serve']}")
    return "\n".join(lines)


def markdown(report: dict) -> str:
    """The figures as docs/cli.md shows them: one table of times, one of resident size."""
    m, c, w, mc = report["machine"], report["cold"], report["launcher"], report["mcp"]
    out = [
        f"Measured {m['date']} on {m['cpu_count']} CPU(s) {m['cpu_model']} ({m['memory_gb']} GB, Python "
        f"{m['python']}, cognee {m['cognee']}), commit {m['commit']}, load average {m['load_average_at_start']} "
        f"at the start, {m['load_average_at_end']} at the end ({report['seconds']} s).",
        "",
        "| What (demo root) | p50 | p95 | runs |",
        "|---|---|---|---|",
        f"| cold `status` (`--cold`) | {c['status']['p50']} s | {c['status']['p95']} s | {c['status']['n']} |",
        f"| first command (starts the launcher) | {w['first_command_s']} s | | 1 |",
    ]
    for name in ("status", "explain", "recall", "revise"):
        shown = {
            "explain": "`explain E_qa`",
            "revise": "`revise` (each followed by an `undo`, not timed)",
        }.get(name, f"`{name}`")
        out.append(
            f"| warm {shown} through the launcher | {w[name]['p50']} s | {w[name]['p95']} s | {w[name]['n']} |"
        )
    for name in ("cold", "warm"):
        x = mc[name]["first_tool_call_s"]
        out.append(
            f"| MCP: spawn, `initialize`, first tool call (`status`), {name} | {x['p50']} s | {x['p95']} s | "
            f"{x['n']} |"
        )
    out += [
        "",
        f"Warm commands {w['pause_s']} s apart (`--pause`).",
        "",
        "| Resident size (VmRSS, MB; one fresh process opening the demo root) | added | total | USS |",
        "|---|---|---|---|",
    ]
    for name, delta, total, *uss in report["resident"]["by_part"]["steps"]:
        out.append(f"| {name} | {delta:+.1f} | {total:.1f} | {f'{uss[0]:.1f}' if uss else ''} |")
    serve = report["resident"]["serve"]
    last = list(serve)[-1]
    out += [
        "",
        f"A real `serve` on the demo root (VmRSS / VmHWM, MB): started {serve['started']['VmRSS']} / "
        f"{serve['started']['VmHWM']}; after `status` and `recall` {serve['after_status_and_recall']['VmRSS']}; "
        f"{last.replace('_', ' ')}: {serve[last]['VmRSS']} / {serve[last]['VmHWM']} at rest"
        + (f" ({serve['busy']['VmRSS']} right after the last undo)" if "busy" in serve else "")
        + ".",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
