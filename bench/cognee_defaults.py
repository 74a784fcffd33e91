"""What cognee's default configuration does to FALSIFY: ``Falsify.attach`` refuses it
(docs/cognee-tasks.md, "Why cognee's defaults are refused"); this measures why, with the
refusal switched off in this process only.

    python -m bench.cognee_defaults --root DIR --mode subprocess|access_control [--json]

``subprocess``: cognee's graph and vector engines in worker processes (its default), access
control off. ``access_control``: in-process engines, cognee's backend access control on (its
default). A host program configures cognee (its own roots, FALSIFY's packaged offline model),
attaches FALSIFY and runs the Company X story: load, status, search, a pinned revise, a
revise in words (gate 1's lexical half), check, undo, recall. Prints what worked, what
failed (the exception) and how long each took, with the machine and its load. DIR must be
new: the program configures cognee for it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AUDIT = "Forensic audit: the March QA report was back-dated."


def configure(root: Path, mode: str) -> None:
    for name, sub in (
        ("SYSTEM_ROOT_DIRECTORY", "system"),
        ("DATA_ROOT_DIRECTORY", "data"),
        ("CACHE_ROOT_DIRECTORY", "cache"),
        ("COGNEE_LOGS_DIR", "logs"),
    ):
        os.environ[name] = str(root / sub)
    os.environ.setdefault("TELEMETRY_DISABLED", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name in (
        "ENABLE_BACKEND_ACCESS_CONTROL",
        "GRAPH_DATABASE_SUBPROCESS_ENABLED",
        "VECTOR_DB_SUBPROCESS_ENABLED",
    ):
        os.environ.pop(name, None)  # cognee's defaults ...
    if mode == "subprocess":
        os.environ["ENABLE_BACKEND_ACCESS_CONTROL"] = "false"  # ... but one at a time
    else:
        os.environ["GRAPH_DATABASE_SUBPROCESS_ENABLED"] = "false"
        os.environ["VECTOR_DB_SUBPROCESS_ENABLED"] = "false"


async def story(root: Path) -> list[dict]:
    import memory_core
    from memory_core.store import data_root

    data_root.check_host_configuration = lambda: None  # measured, not supported: the refusal is off here only
    memory_core.use_offline_embedder(root / "models")
    steps: list[dict] = []

    async def step(name, make, show=None):
        start = time.perf_counter()
        try:
            value = await make()
            steps.append(
                {
                    "step": name,
                    "ok": True,
                    "ms": round((time.perf_counter() - start) * 1000),
                    "detail": show(value) if show else "",
                }
            )
            return value
        except Exception as error:  # noqa: BLE001  (what fails is the finding)
            steps.append(
                {
                    "step": name,
                    "ok": False,
                    "ms": round((time.perf_counter() - start) * 1000),
                    "detail": f"{type(error).__name__}: {' '.join(str(error).split())[:200]}",
                }
            )
            return None

    fx = await step("attach", lambda: memory_core.Falsify.attach(root / "falsify_state"))
    if fx is None:
        return steps
    await step("load", lambda: fx.load(str(REPO / "examples" / "company_x.json")))
    await step("status", lambda: fx.status(), lambda r: f"{len(r['nodes'])} nodes")
    await step("search", lambda: fx.search("QA report"), lambda r: f"{len(r)} hits")
    await step("revise pinned", lambda: fx.revise(AUDIT, target="E_qa"), lambda r: f"refuted {r['refuted']}")
    await step(
        "revise in words",
        lambda: fx.revise("The supplier email was forged."),
        lambda r: f"to_decide {r.get('to_decide')}",
    )
    await step(
        "check", lambda: fx.check(), lambda r: "clean" if r["clean"] else "; ".join(r["problems"])[:200]
    )
    await step("undo", lambda: fx.undo(), lambda r: f"undone {r['undone']}")
    await step("recall", lambda: fx.recall(), lambda r: r["falsify"]["answer"][:60])
    await fx.close()
    return steps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cognee_defaults")
    parser.add_argument("--root", required=True)
    parser.add_argument("--mode", choices=("subprocess", "access_control"), required=True)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    if root.exists() and any(root.iterdir()):
        parser.error(f"{root} is not empty: give a new directory")
    root.mkdir(parents=True, exist_ok=True)
    configure(root, args.mode)
    from bench.common import machine_line

    steps = asyncio.run(story(root))
    shared = {
        "cognee.lancedb",
        "cognee_graph_ladybug",
        "cognee_db",
    }  # the one global graph, vector and relational store
    databases = sorted(
        str(p.relative_to(root))
        for user in (root / "system" / "databases").glob("*")
        if user.is_dir() and user.name not in shared
        for p in user.iterdir()
    )
    if args.json:
        print(json.dumps({"mode": args.mode, "steps": steps, "per_dataset_databases": databases}, indent=2))
        return 0
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"cognee defaults, mode {args.mode}; {machine_line()}; {time.strftime('%Y-%m-%d %H:%M')}; load {load}"
    )
    for s in steps:
        print(f"  {s['step']:16s} {'ok    ' if s['ok'] else 'FAILED'} {s['ms']:7d} ms  {s['detail']}")
    if databases:
        print(f"  per-user/per-dataset databases cognee made: {', '.join(databases)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
