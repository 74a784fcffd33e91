"""MQuAKE-hard per_case on both backends in one run: embedded (Ladybug + LanceDB)
and PostgreSQL + pgvector through cognee's own adapters.

    python -m bench.postgres [--limit N] [--json]
    python -m bench.mquake --backend postgres [--limit N] [--json]   (the same)

For each backend it runs ``bench.mquake --scenario per_case`` on the x1 graph and on the
x10 graph (disjoint replicas), each in its own process on a fresh root (and, on
PostgreSQL, a fresh database), and prints precision, recall, collateral, p50/p90 revision
latency and the x10/x1 latency ratio side by side. With no ``FALSIFY_DATABASE_URL`` set
it starts its own PostgreSQL 16 + pgvector the way the tests do (tests/support/pg_server.py,
PostgreSQL's default durability settings: fsync on); with one set, it creates its
databases on that server (the URL's user must be allowed to CREATE DATABASE).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
START_ENV = dict(os.environ)


def pct(values: list[float], q: float):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def child(args, replicas: int, root: Path, env: dict) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "bench.mquake",
        "--scenario",
        "per_case",
        "--limit",
        str(args.limit),
        "--replicas",
        str(replicas),
        "--root",
        str(root),
        "--json",
        "--keep-revisions",
        "--no-detect",
        "--progress",
        "0",
    ]
    if args.data:
        cmd += ["--data", args.data]
    print(
        f"[bench.postgres] {env.get('FALSIFY_BACKEND', 'ladybug')} x{replicas}: {' '.join(cmd[1:])}",
        file=sys.stderr,
        flush=True,
    )
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(
            f"bench.mquake x{replicas} ({env.get('FALSIFY_BACKEND', 'ladybug')}) exited {proc.returncode}"
        )
    return json.loads(proc.stdout)


def parts_p50(revisions: list[dict]) -> dict:
    """The median of each part of a revision: the write path's steps (``steps``: before the
    journal, each writer step, the commit) and the revision's own ``timings``, in ms."""
    parts: dict[str, list[float]] = {}
    for rev in revisions:
        if rev.get("epoch") is None:
            continue
        for name, ms in (rev.get("steps") or {}).items():
            parts.setdefault(f"step.{name}", []).append(ms)
        for name, ms in (rev.get("timings") or {}).items():
            if isinstance(ms, (int, float)):
                parts.setdefault(f"timing.{name}", []).append(ms)
    return {name: round(pct(values, 0.5), 1) for name, values in sorted(parts.items())}


def summarise(runs: dict[int, dict]) -> dict:
    out = {}
    for r, run in runs.items():
        sc = run["scenarios"]["per_case"]
        out[f"x{r}"] = {
            "nodes": run["load"]["nodes"],
            "load_seconds": run["load"]["seconds"],
            "load_nodes_per_s": run["load"]["nodes_per_s"],
            "load_embedding_memo": run["load"].get("embedding_memo"),
            "revisions": len(sc["detail"]["revisions"]),
            "precision": sc["precision"],
            "recall": sc["recall"],
            "collateral": sc["collateral"],
            "misses": sc["misses"],
            "latency_ms": sc["latency_ms"],
            "undo_ms": sc.get("undo_ms"),
            "after_undo_identical": run.get("after_undo", {}).get("identical"),
            "p50_ms_by_part": parts_p50(sc["detail"]["revisions"]),
        }
    if 10 not in runs:
        out["pairs"], out["p50_ratio_x10_over_x1"] = 0, None
        return out
    by_edit = {
        r: {rev["edit"]: rev for rev in runs[r]["scenarios"]["per_case"]["detail"]["revisions"]} for r in runs
    }
    x1, x10 = [], []
    for edit, rev in by_edit[1].items():
        other = by_edit[10].get(edit)
        if other and rev["epoch"] is not None and other["epoch"] is not None:
            x1.append(rev["ms"])
            x10.append(other["ms"])
    out["pairs"] = len(x1)
    out["p50_ratio_x10_over_x1"] = round(pct(x10, 0.5) / pct(x1, 0.5), 3) if x1 else None
    return out


def run(args) -> dict:
    sys.path.insert(0, str(REPO / "tests" / "support"))
    from pg_server import PgServer  # noqa: E402

    from bench.mquake import machine

    base = Path(tempfile.mkdtemp(prefix="falsify-bench-pg-"))
    server = None
    admin = os.environ.get("FALSIFY_DATABASE_URL")
    result = {"machine": machine(), "limit": args.limit, "backends": {}}
    try:
        if not admin:
            server = PgServer(durable=True).start()
            admin = server.url()
            result["postgres"] = "PostgreSQL 16.2 + pgvector 0.6.2 from the pgserver wheel, local, fsync on"
        else:
            result["postgres"] = "the server of FALSIFY_DATABASE_URL"
        env = {k: v for k, v in START_ENV.items() if k not in ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL")}
        sizes = (1,) if args.x1_only else (1, 10)
        embedded = {r: child(args, r, base / f"ladybug-x{r}", env) for r in sizes}
        result["backends"]["embedded"] = summarise(embedded)
        pg_runs = {}
        for r in sizes:
            name = f"falsify_bench_x{r}_{os.getpid()}"
            _admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            _admin(admin, f'CREATE DATABASE "{name}"')
            _admin(_with_db(admin, name), "CREATE EXTENSION IF NOT EXISTS vector")
            try:
                pg_runs[r] = child(
                    args,
                    r,
                    base / f"postgres-x{r}",
                    dict(env, FALSIFY_BACKEND="postgres", FALSIFY_DATABASE_URL=_with_db(admin, name)),
                )
            finally:
                _admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        result["backends"]["postgres"] = summarise(pg_runs)
        result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        if server is not None:
            server.stop()
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return result


def _with_db(url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    return urlunsplit(urlsplit(url)._replace(path="/" + name))


def _admin(url: str, statement: str) -> None:
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(statement)
    finally:
        conn.close()


def human(result: dict) -> str:
    m = result["machine"]
    lines = [
        f"MQuAKE-hard per_case, first {result['limit']} cases, both backends — measured "
        f"{m.get('date', '')} on {m.get('cpu_model')} ({m.get('cpu_count', '?')} CPUs, load at start "
        f"{m.get('load_average_at_start')}), commit {m.get('commit')}",
        f"PostgreSQL: {result.get('postgres')}",
        "",
        f"{'backend':<10} {'graph':<5} {'nodes':>7} {'prec':>6} {'recall':>6} {'collat':>6} "
        f"{'p50 ms':>8} {'p95 ms':>8} {'load s':>7}",
    ]
    for name, s in result["backends"].items():
        for r in ("x1", "x10"):
            if r not in s:
                continue
            x = s[r]
            lat = x["latency_ms"] or {}
            lines.append(
                f"{name:<10} {r:<5} {x['nodes']:>7} {x['precision']:>6} {x['recall']:>6} "
                f"{x['collateral']:>6} {lat.get('p50', '-'):>8} {lat.get('p95', '-'):>8} "
                f"{x.get('load_seconds', '-'):>7}"
            )
        lines.append(
            f"{name:<10} x10/x1 p50 latency ratio: {s['p50_ratio_x10_over_x1']} ({s['pairs']} pairs)"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.postgres", description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=50, help="per_case cases in each run (default 50)")
    p.add_argument("--data", help="benchmark file (default: bench.mquake's)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--out", help="also write the result as JSON to this file")
    p.add_argument("--x1-only", action="store_true", help="skip the x10 graphs (no scaling ratio)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    result = run(args)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2) if args.json else human(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
