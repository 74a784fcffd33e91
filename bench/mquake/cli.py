"""``python -m bench.mquake``: arguments, one run per process and data root, the
x1/x10 scaling pair in child processes, output."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO, disk_usage, log, machine, pct, peak_rss_mb, save, stdout_to_stderr
from bench.mquake.dataset import DEFAULT_DATA, Dataset, data_path
from bench.mquake.report import human
from bench.mquake.runner import RECALL_K, Runner, components, detection, journal_cost
from bench.mquake.scoring import graph_diff, limit_for, lower_bound, ratio_to_lower_bound, revision_report

# The environment as it was before FALSIFY configured cognee in this process
# (configure() sets EMBEDDING_*, cache paths for its root): child runs start from
# this one, or they would take the offline embedder for a hosted one.
START_ENV = dict(os.environ)
SCENARIOS = ("per_case", "batch_1", "batch_10", "batch_100", "all_edits")
QUICK_CASES = 20
QUICK_BATCHES = ("batch_10",)
SCALING_CASES = 50
BENCH_MAX_DB_SIZE = 1 << 40  # 1 TiB of address space for Ladybug's page accounting (see main())


async def run_bench(args) -> dict:
    from memory_core.api import Falsify
    from memory_core.store.data_root import claim_process

    claim_process()  # FALSIFY's own process, as the CLI and a server run revisions

    data = Dataset.read(data_path(args.data))
    scenarios = args.scenarios
    result = {
        "machine": machine(),
        "data": str(data_path(args.data)),
        "replicas": args.replicas,
        "kuzu_max_db_size": int(os.environ.get("KUZU_MAX_DB_SIZE", 0)) or None,
        "judge": args.judge,
        "scenarios": {},
        "loaded": {
            "nodes_per_replica": data.node_count,
            "evidence": len(data.evidence),
            "conclusions": len(data.conclusions),
            "depends_on_edges": len(data.edges),
            "not_loaded": data.skipped,
        },
    }
    root = Path(args.root)
    start = time.perf_counter()
    app = await Falsify.open(root, purpose="bench.mquake")
    try:
        result["open_ms"] = round(app.opened_ms, 1)
        result["warm_up_ms"] = round(await app.warm_up(), 1)
        runner = Runner(app, data, args.replicas, edit_trust=0.2 if args.trust_ranked else None)
        result["trust_ranked"] = bool(args.trust_ranked)
        log(f"loading {args.replicas} x {data.node_count} nodes into {root}")
        result["load"] = await runner.load()
        result["disk_after_load"] = disk_usage(root)
        initial = await app.status()
        from memory_core.judging.detect import gate1_threshold
        from memory_core.store.embedder import fingerprint

        result["embedder"] = fingerprint()
        threshold = gate1_threshold(fingerprint()["provider"], app.store.settings)
        result["gate1_threshold"] = threshold
        if args.judge == "text" or args.detect:
            edit_ids = []
            for name in scenarios:
                for g in data.groups(name, limit_for(name, args.limit)):
                    edit_ids += [e for e in g.apply if e not in edit_ids]
            log(f"detection (text only, gate 1, limit {RECALL_K}) over {len(edit_ids)} edits")
            # gate 1 has no distance cutoff any more (a fused top-k): the sweep is of the vector
            # ranking, studied at the old 0.55 unless FALSIFY_GATE1_THRESHOLD sets one
            result["detection"] = await detection(
                app, data, edit_ids, threshold if threshold is not None else 0.55
            )
        if args.judge == "structured":
            for name in scenarios:
                groups = data.groups(name, limit_for(name, args.limit))
                log(f"scenario {name}: {len(groups)} group(s), {sum(len(g.apply) for g in groups)} edits")
                if args.profile:
                    import cProfile
                    import io
                    import pstats

                    prof = cProfile.Profile()
                    prof.enable()
                    run = await runner.run(groups, progress=args.progress)
                    prof.disable()
                    out = io.StringIO()
                    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(45)
                    Path(args.profile).write_text(out.getvalue())
                    log(f"profile written to {args.profile}")
                else:
                    run = await runner.run(groups, progress=args.progress)
                report = revision_report(run)
                if args.replicas == 1 and not args.trust_ranked:
                    lb = lower_bound(data, groups)
                    report["lower_bound"] = {
                        k: v for k, v in lb.items() if k not in ("groups", "revision_ms")
                    }
                    report["lower_bound"]["agrees_with_store"] = all(
                        a["observed"] == b["observed"] for a, b in zip(run["groups"], lb["groups"])
                    )
                    report["vs_lower_bound"] = ratio_to_lower_bound(run, lb)
                result["scenarios"][name] = report
                result["scenarios"][name]["detail"] = {
                    "groups": [
                        {
                            k: g[k]
                            for k in (
                                "group",
                                "expected",
                                "observed",
                                "collateral",
                                "missed",
                                "other_replicas_dead",
                                "log_disagrees",
                                "refuted_wrong",
                                "revision_ms",
                                "already_applied",
                                "restore_problems",
                            )
                            if k in g
                        }
                        for g in run["groups"]
                    ]
                }
                if args.keep_revisions:
                    result["scenarios"][name]["detail"]["revisions"] = run["revisions"]
            final = await app.status()
            result["after_undo"] = graph_diff(initial, final)
        if args.components:
            log("timing the operations a revision is made of")
            result["components"] = await components(app, data, threshold)
        result["journal"] = journal_cost(app)
        result["disk_at_end"] = disk_usage(root)
        result["disk_during_runs"] = runner.disk
    finally:
        await app.close()
    result["peak_rss_mb"] = peak_rss_mb()
    result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def run_child(args, replicas: int, root: Path) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "bench.mquake",
        "--scenario",
        "per_case",
        "--limit",
        str(args.scaling_cases),
        "--replicas",
        str(replicas),
        "--root",
        str(root),
        "--json",
        "--keep-revisions",
        "--no-detect",
        "--progress",
        "0",
        "--components",
    ]
    if args.data:
        cmd += ["--data", args.data]
    log(f"scaling: {' '.join(cmd[1:])}")
    env = dict(START_ENV, KUZU_MAX_DB_SIZE=os.environ.get("KUZU_MAX_DB_SIZE", str(BENCH_MAX_DB_SIZE)))
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"scaling run x{replicas} failed with exit code {proc.returncode}")
    return json.loads(proc.stdout)


def scaling(args, base: Path) -> dict:
    runs = {r: run_child(args, r, base / f"x{r}") for r in (1, 10)}
    by_edit = {
        r: {rev["edit"]: rev for rev in runs[r]["scenarios"]["per_case"]["detail"]["revisions"]} for r in runs
    }
    ratios, x1, x10 = [], [], []
    for edit, rev in by_edit[1].items():
        other = by_edit[10].get(edit)
        if other and rev["epoch"] is not None and other["epoch"] is not None:
            ratios.append(other["ms"] / rev["ms"])
            x1.append(rev["ms"])
            x10.append(other["ms"])
    out = {
        "cases": args.scaling_cases,
        "pairs": len(ratios),
        "median_ratio_x10_over_x1": round(pct(ratios, 0.5), 3) if ratios else None,
        "p50_ratio_x10_over_x1": round(pct(x10, 0.5) / pct(x1, 0.5), 3) if ratios else None,
    }
    for r, run in runs.items():
        sc = run["scenarios"]["per_case"]
        out[f"x{r}"] = {
            "nodes": run["load"]["nodes"],
            "load_nodes_per_s": run["load"]["nodes_per_s"],
            "latency_ms": sc["latency_ms"],
            "precision": sc["precision"],
            "recall": sc["recall"],
            "collateral": sc["collateral"],
            "misses": sc["misses"],
            "task_ms_p50": sc["task_ms_p50"],
            "outside_tasks_ms_p50": sc["outside_tasks_ms_p50"],
            "journal": run["journal"],
            "peak_rss_mb": run["peak_rss_mb"],
            "components": run.get("components"),
            "undo_ms": sc["undo_ms"],
            "after_undo_identical": run["after_undo"]["identical"],
        }
    return out


def build_parser() -> argparse.ArgumentParser:
    import bench.mquake as package

    p = argparse.ArgumentParser(prog="python -m bench.mquake", description=package.__doc__.split("\n\n")[0])
    p.add_argument(
        "--batch",
        action="store_true",
        help="with --scenario all_edits: the edits through revise_many as one batch vs one at a time on a "
        "fresh copy (bench.batch: facts/s of each, same final states)",
    )
    p.add_argument(
        "--scenario",
        choices=SCENARIOS,
        action="append",
        help="scenario to run (repeatable; default per_case)",
    )
    p.add_argument("--limit", type=int, help="first N cases of per_case (or first N edits of all_edits)")
    p.add_argument(
        "--judge",
        choices=("structured", "text"),
        default="structured",
        help="structured: revise with --triple (the offline judge); text: gate-1 detection study only",
    )
    p.add_argument(
        "--replicas", type=int, choices=(1, 10), default=1, help="load the graph x1 or x10 (disjoint keys)"
    )
    p.add_argument(
        "--root", help="data root (must be new or empty; default: a temporary directory, removed after)"
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary root")
    p.add_argument("--data", help=f"benchmark file (default: $FALSIFY_BENCH_DATA or {DEFAULT_DATA})")
    p.add_argument("--json", action="store_true", help="print the full result as JSON on stdout")
    p.add_argument("--out", help="also write the full result as JSON to this file")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"correctness check: first {QUICK_CASES} per_case cases + {', '.join(QUICK_BATCHES)}, detection on them",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="everything: per_case (all), batch_1/10/100, detection over all edits, x1/x10 scaling",
    )
    p.add_argument(
        "--detect", action="store_true", help="with --judge structured: also run the detection study"
    )
    p.add_argument("--no-detect", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--scaling",
        action="store_true",
        help="run only the x1/x10 scaling pair (two subprocesses; --full includes it)",
    )
    p.add_argument(
        "--scaling-cases", type=int, default=SCALING_CASES, help="per_case cases in each scaling run"
    )
    p.add_argument(
        "--components",
        action="store_true",
        help="time each operation a revision is made of, alone, on the loaded graph",
    )
    p.add_argument(
        "--keep-revisions", action="store_true", help="include every revision's record in the JSON"
    )
    p.add_argument(
        "--trust-ranked",
        action="store_true",
        help="stored facts' sources trusted 0.9, policy trust_ranked, every edit from a source "
        "trusted 0.2: each edit must be recorded and lose (refuted), and nothing else change",
    )
    p.add_argument(
        "--profile", help="write a cProfile of the revision loop (cumulative, top 45) to this file"
    )
    p.add_argument(
        "--render", metavar="FILE", help="print the summary of a saved --out/--json result and exit"
    )
    p.add_argument(
        "--progress", type=int, default=25, help="progress line every N groups on stderr (0: none)"
    )
    p.add_argument(
        "--backend",
        choices=("ladybug", "postgres"),
        default="ladybug",
        help="postgres: per_case on the embedded backend AND on PostgreSQL + pgvector, x1 and x10, "
        "side by side (bench/postgres.py; starts its own server unless FALSIFY_DATABASE_URL is set)",
    )
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.backend == "postgres":  # both backends in one run
        from bench import postgres

        return postgres.main(
            (["--limit", str(args.limit)] if args.limit else [])
            + (["--json"] if args.json else [])
            + (["--out", args.out] if args.out else [])
            + (["--data", args.data] if args.data else [])
        )
    if args.batch:
        from bench import batch

        if (args.scenario or ["all_edits"]) != ["all_edits"]:
            print("--batch runs the all_edits scenario only", file=sys.stderr)
            return 2
        return batch.main(
            (["--limit", str(args.limit)] if args.limit else [])
            + (["--data", args.data] if args.data else [])
            + (["--json"] if args.json else [])
        )
    if args.render:
        print(human(json.loads(Path(args.render).read_text(encoding="utf-8"))))
        return 0
    path = data_path(args.data)
    if not path.is_file():
        print(f"benchmark data not found: {path} (set --data or $FALSIFY_BENCH_DATA)", file=sys.stderr)
        return 2
    if args.quick:
        args.scenarios = ["per_case", *QUICK_BATCHES]
        args.limit = args.limit or QUICK_CASES
        args.detect = True
    elif args.full:
        args.scenarios = ["per_case", "batch_1", "batch_10", "batch_100"]
        args.detect = True
        args.scaling = True
        args.components = True
    else:
        args.scenarios = args.scenario or ["per_case"]
    if args.no_detect:
        args.detect = False
    # Ladybug 0.19.0 (pinned by cognee 1.6.5) charges every CHECKPOINT ~8 MiB of its
    # max_db_size budget for the life of the process and never gives it back
    # (LadybugDB/ladybug#924, fixed upstream by #925); cognee checkpoints after every
    # graph write and sets the budget to 32 GiB, so one process dies after ~4,000
    # checkpoints (~900 revisions). The full benchmark makes ~3,400 revisions and
    # undos in one process: it raises the (virtual) budget unless told otherwise.
    os.environ.setdefault("KUZU_MAX_DB_SIZE", str(BENCH_MAX_DB_SIZE))
    temp = None
    if args.root:
        root = Path(args.root)
        if root.exists() and any(root.iterdir()):
            print(f"--root {root} is not empty: the benchmark needs a fresh data root", file=sys.stderr)
            return 2
    else:
        temp = Path(tempfile.mkdtemp(prefix="falsify-bench-"))
        root = temp / "root"
    args.root = str(root)
    try:
        with stdout_to_stderr(args.json) as out:
            if args.scaling and not args.full:  # the scaling pair alone
                result = {
                    "machine": machine(),
                    "data": str(path),
                    "scenarios": {},
                    "kuzu_max_db_size": int(os.environ["KUZU_MAX_DB_SIZE"]),
                }
            else:
                result = asyncio.run(run_bench(args))
                save(result, args.out)
            if args.scaling:
                base = Path(tempfile.mkdtemp(prefix="falsify-bench-scaling-"))
                try:
                    result["scaling"] = scaling(args, base)
                except Exception as error:  # keep what was measured; say what failed
                    result["scaling"] = {"error": f"{type(error).__name__}: {error}"}
                    log(f"scaling failed: {error}")
                finally:
                    shutil.rmtree(base, ignore_errors=True)
                result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
                save(result, args.out)
            if args.json:
                out.write(json.dumps(result, indent=1) + "\n")
                out.flush()
            else:
                out.write(human(result) + "\n")
    finally:
        if temp is not None and not args.keep:
            shutil.rmtree(temp, ignore_errors=True)
        elif temp is not None:
            log(f"root kept: {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
