"""Batch revision vs one fact at a time, on the MQuAKE-hard graph (issue: bulk facts).

    python -m bench.batch [--limit N] [--json]          (also: python -m bench.mquake --scenario all_edits --batch)

Loads the MQuAKE-hard graph into two fresh data roots (one process each: a process
serves one root), then applies the edits (all 1,716, or the first N) to one root through
``revise_many`` (one batch: one pipeline run, one intent, one write per store) and to the
other one at a time through ``revise``, with the structured judge. Prints the rates and
whether the two final graphs are identical (every node's key, state, weight and
confidence, and every edge). Measured, never asserted; machine and date are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.mquake.dataset import Dataset, data_path

REPO = Path(__file__).resolve().parent.parent


def machine() -> dict:
    try:
        cpu = next(
            (
                line.split(":", 1)[1].strip()
                for line in open("/proc/cpuinfo")
                if line.startswith("model name")
            ),
            "?",
        )
    except OSError:
        cpu = platform.processor() or "?"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.machine()}",
    }


async def child(mode: str, root: str, limit: int | None, data: str | None) -> dict:
    from memory_core import Falsify
    from memory_core.store.data_root import claim_process

    claim_process()  # FALSIFY's own process, as the CLI's `revise --batch` and a server run a batch

    dataset = Dataset.read(data_path(data))
    edits = (
        [e["id"] for e in dataset.raw["edits"]][:limit] if limit else [e["id"] for e in dataset.raw["edits"]]
    )
    facts = []
    for eid in edits:
        claim, triple, key = dataset.fact(eid)
        facts.append({"fact": claim, "triple": triple, "key": key})
    async with Falsify.open(root) as fx:
        await fx.load(dataset.investigation(0))
        await fx.warm_up()
        start = time.perf_counter()
        if mode == "batch":
            results = await fx.revise_many(facts)
        else:
            results = [await fx.revise(f["fact"], triple=f["triple"], key=f["key"]) for f in facts]
        seconds = time.perf_counter() - start
        status = await fx.status()
    nodes = sorted((n["key"], n["state"], n["feedback_weight"], n.get("confidence")) for n in status["nodes"])
    edges = sorted((e["type"], e["from"], e["to"]) for e in status["edges"])
    return {
        "mode": mode,
        "facts": len(facts),
        "seconds": round(seconds, 3),
        "facts_per_s": round(len(facts) / seconds, 2) if seconds else None,
        "recorded": sum(1 for r in results if r.get("new_evidence") and not r.get("already_applied")),
        "refuted": sum(len(r.get("refuted", [])) for r in results),
        "invalidated": sum(len(r.get("invalidated", [])) for r in results),
        "final": {"nodes": nodes, "edges": edges},
    }


def run_child(mode: str, root: Path, limit, data) -> dict:
    cmd = [sys.executable, "-m", "bench.batch", "--child", mode, "--root", str(root)]
    if limit:
        cmd += ["--limit", str(limit)]
    if data:
        cmd += ["--data", data]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.batch", description=__doc__.splitlines()[0])
    p.add_argument("--limit", type=int, help="the first N edits (default: all 1,716)")
    p.add_argument("--data", help="benchmark file (default: the shared MQuAKE-hard conversion)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", choices=("batch", "sequential"), help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(asyncio.run(child(args.child, args.root, args.limit, args.data))))
        return 0
    with tempfile.TemporaryDirectory(prefix="falsify-bench-batch-") as tmp:
        batch = run_child("batch", Path(tmp) / "batch", args.limit, args.data)
        sequential = run_child("sequential", Path(tmp) / "sequential", args.limit, args.data)
    same = batch["final"] == sequential["final"]
    result = {
        "machine": machine(),
        "facts": batch["facts"],
        "batch_facts_per_s": batch["facts_per_s"],
        "sequential_facts_per_s": sequential["facts_per_s"],
        "speedup": round(batch["facts_per_s"] / sequential["facts_per_s"], 2)
        if sequential["facts_per_s"]
        else None,
        "same_final_states": same,
        "batch_seconds": batch["seconds"],
        "sequential_seconds": sequential["seconds"],
        "recorded": [batch["recorded"], sequential["recorded"]],
        "invalidated": [batch["invalidated"], sequential["invalidated"]],
    }
    if not same:
        a = set(map(tuple, batch["final"]["nodes"]))
        b = set(map(tuple, sequential["final"]["nodes"]))
        result["differences"] = {"batch_only": sorted(a - b)[:10], "sequential_only": sorted(b - a)[:10]}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        m = result["machine"]
        print(
            f"batch revision, MQuAKE-hard, {result['facts']} edits ({m['date']}, {m['cpu']}, {m['cores']} cores)"
        )
        print(
            f"  revise_many (one batch): {result['batch_facts_per_s']} facts/s ({result['batch_seconds']} s)"
        )
        print(
            f"  one at a time:           {result['sequential_facts_per_s']} facts/s ({result['sequential_seconds']} s)"
        )
        print(f"  speed-up x{result['speedup']}; same final states: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
