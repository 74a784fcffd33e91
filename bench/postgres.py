"""MQuAKE-hard per_case on both backends in one run: embedded (Ladybug + LanceDB)
and PostgreSQL + pgvector through cognee's own adapters; and, with ``--warm``, the warm CLI's
commands on both backends side by side.

    python -m bench.postgres [--limit N] [--json]
    python -m bench.mquake --backend postgres [--limit N] [--json]   (the same)
    python -m bench.postgres --warm [--runs N] [--pause S] [--cold-runs N] [--serve-runs N] [--json]

``--warm``: the demo investigation (examples/company_x.json) loaded into an embedded root and a
PostgreSQL root (a database of its own), then the commands a person types, alternated between
the two backends, ``--runs`` times each: ``status``, ``explain E_qa``, ``recall``, ``revise``
(the demo's fact pinned to E_qa) and the ``undo`` of it, each the caller's wall time from
starting ``python main.py`` to its exit: through the warm launcher (one launcher per backend,
each keeping its spare for the next command, ``--pause`` seconds apart as a person types), then
answered by a ``serve`` holding each root (``--serve-runs`` times), and a cold ``status``
(``--cold-runs``); p50 and p95, with the machine, the date and the load average at the start
and the end (the machine may be shared).

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
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

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


@contextlib.contextmanager
def postgres_server(result: dict) -> Iterator[str]:
    """The PostgreSQL server a run measures on, as its admin URL: ``FALSIFY_DATABASE_URL``'s when
    it is set, else PostgreSQL 16 + pgvector started from the pgserver wheel the way the tests
    start it (tests/support/pg_server.py, fsync on) and stopped when the run ends;
    ``result["postgres"]`` says which."""
    admin = os.environ.get("FALSIFY_DATABASE_URL")
    if admin:
        result["postgres"] = "the server of FALSIFY_DATABASE_URL"
        yield admin
        return
    sys.path.insert(0, str(REPO / "tests" / "support"))
    from pg_server import PgServer  # noqa: E402

    server = PgServer(durable=True).start()
    try:
        result["postgres"] = "PostgreSQL 16.2 + pgvector 0.6.2 from the pgserver wheel, local, fsync on"
        yield server.url()
    finally:
        server.stop()


def fresh_database(admin: str, name: str) -> str:
    """A new, empty database ``name`` with pgvector (one of that name dropped first): its URL."""
    _admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _admin(admin, f'CREATE DATABASE "{name}"')
    _admin(_with_db(admin, name), "CREATE EXTENSION IF NOT EXISTS vector")
    return _with_db(admin, name)


def run(args) -> dict:
    from bench.mquake import machine

    base = Path(tempfile.mkdtemp(prefix="falsify-bench-pg-"))
    server = contextlib.ExitStack()
    result = {"machine": machine(), "limit": args.limit, "backends": {}}
    try:
        admin = server.enter_context(postgres_server(result))
        env = {k: v for k, v in START_ENV.items() if k not in ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL")}
        sizes = (1,) if args.x1_only else (1, 10)
        embedded = {r: child(args, r, base / f"ladybug-x{r}", env) for r in sizes}
        result["backends"]["embedded"] = summarise(embedded)
        pg_runs = {}
        for r in sizes:
            name = f"falsify_bench_x{r}_{os.getpid()}"
            url = fresh_database(admin, name)
            try:
                pg_runs[r] = child(
                    args,
                    r,
                    base / f"postgres-x{r}",
                    dict(env, FALSIFY_BACKEND="postgres", FALSIFY_DATABASE_URL=url),
                )
            finally:
                _admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        result["backends"]["postgres"] = summarise(pg_runs)
        result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        server.close()
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


def measured(m: dict) -> str:
    """When, where and on what a run was measured: the date, the CPU, the load average at the start
    and at the end (the machine may be shared) and the commit."""
    return (
        f"measured {m.get('date', '')} on {m.get('cpu_model')} ({m.get('cpu_count', '?')} CPUs), load average "
        f"{m.get('load_average_at_start')} at the start, {m.get('load_average_at_end')} at the end, "
        f"commit {m.get('commit')}"
    )


def human(result: dict) -> str:
    lines = [
        f"MQuAKE-hard per_case, first {result['limit']} cases, both backends — {measured(result['machine'])}",
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


# ---- the warm CLI on both backends (--warm) ------------------------------------------------

FACT = "Forensic audit: the March QA report was back-dated."
WARM_COMMANDS = (
    ("status", ["status"]),
    ("explain", ["explain", "E_qa"]),
    ("recall", ["recall"]),
    ("revise", ["revise", FACT, "--target", "E_qa"]),  # each followed by its undo (timed too)
)
BACKENDS = ("embedded", "postgres")


def _timed(root: Path, argv: list, env: dict, runs: dict, name: str, pause: float, expect: str = "") -> None:
    from bench import startup

    time.sleep(pause)
    took, proc = startup.run(root, *argv, env=env)
    if expect and expect not in proc.stdout:
        raise RuntimeError(f"{name} did not run as measured ({expect!r} not said): {proc.stdout[-400:]}")
    runs.setdefault(name, []).append(took)


def _commands(roots: dict, envs: dict, runs: int, pause: float, expect: str) -> dict:
    """Each command on each backend, alternated, ``runs`` times: {backend: {command: [seconds]}}."""
    times: dict = {b: {} for b in roots}
    for _ in range(runs):
        for name, argv in WARM_COMMANDS:
            for b in roots:
                _timed(roots[b], argv, envs[b], times[b], name, pause, expect if name == "status" else "")
                if name == "revise":
                    _timed(roots[b], ["undo"], envs[b], times[b], "undo", pause)
    return times


def warm(args) -> dict:
    from bench import startup
    from bench.common import machine, start_serve, stop_serve, summary

    base = Path(tempfile.mkdtemp(prefix="falsify-bench-pgwarm-"))
    result: dict = {"machine": machine(), "runs": args.runs, "pause_s": args.pause, "seconds": {}}
    server, admin = contextlib.ExitStack(), None
    name = f"falsify_bench_warm_{os.getpid()}"
    launchers, served = [], []
    try:
        admin = server.enter_context(postgres_server(result))
        selected = {
            "embedded": {},
            "postgres": {"FALSIFY_BACKEND": "postgres", "FALSIFY_DATABASE_URL": fresh_database(admin, name)},
        }
        roots = {b: base / b for b in BACKENDS}
        cold_env = {b: startup.base_env(FALSIFY_LAUNCHER="0", **selected[b]) for b in BACKENDS}
        for b in BACKENDS:
            startup.run(roots[b], "--cold", "load", startup.SEED, env=cold_env[b])
        cold: dict = {b: {} for b in BACKENDS}
        for _ in range(args.cold_runs):
            for b in BACKENDS:
                _timed(roots[b], ["--cold", "status"], cold_env[b], cold[b], "status", 0)
        # one launcher per backend: each keeps a spare ready for the next command on its root
        warm_env = {}
        for b in BACKENDS:
            runtime = base / f"runtime-{b}"
            runtime.mkdir(mode=0o700)
            warm_env[b] = startup.base_env(
                FALSIFY_LAUNCHER="1", FALSIFY_RUNTIME_DIR=str(runtime), **selected[b]
            )
            took, first = startup.run(roots[b], "status", env=warm_env[b])
            found = re.search(r"FALSIFY launcher this command started \(pid (\d+)\)", first.stdout)
            if not found:
                raise RuntimeError(f"the first command did not start the launcher: {first.stdout[-400:]}")
            launchers.append(int(found.group(1)))
        launcher = _commands(
            roots, warm_env, args.runs, args.pause, "ran warm: forked by the FALSIFY launcher"
        )
        serve: dict = {}
        if args.serve_runs:
            for b in BACKENDS:
                served.append(start_serve(roots[b], cold_env[b]))
            serve = _commands(roots, cold_env, args.serve_runs, args.pause, "answered by the FALSIFY server")
        for b in BACKENDS:
            result["seconds"][b] = {
                "cold": {k: summary(v) for k, v in cold[b].items()},
                "launcher": {k: summary(v) for k, v in launcher[b].items()},
                "serve": {k: summary(v) for k, v in serve.get(b, {}).items()},
            }
        result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        for proc in served:
            stop_serve(proc)
        for pid in launchers:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            _admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)') if admin else None
        finally:
            server.close()
            import shutil

            shutil.rmtree(base, ignore_errors=True)
    return result


def warm_human(result: dict) -> str:
    lines = [
        f"The warm CLI on both backends (demo root), {measured(result['machine'])}",
        f"PostgreSQL: {result.get('postgres')}; {result['runs']} runs of each command, {result['pause_s']} s apart",
        "",
        f"{'how':<9} {'command':<9} {'embedded p50':>13} {'p95':>6} {'PostgreSQL p50':>15} {'p95':>6}   (seconds)",
    ]
    seconds = result["seconds"]
    for how in ("cold", "launcher", "serve"):
        for command in ("status", "explain", "recall", "revise", "undo"):
            e = seconds["embedded"][how].get(command)
            p = seconds["postgres"][how].get(command)
            if e and p:
                lines.append(
                    f"{how:<9} {command:<9} {e['p50']:>13.2f} {e['p95']:>6.2f} {p['p50']:>15.2f} {p['p95']:>6.2f}"
                )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.postgres", description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=50, help="per_case cases in each run (default 50)")
    p.add_argument("--data", help="benchmark file (default: bench.mquake's)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--out", help="also write the result as JSON to this file")
    p.add_argument("--x1-only", action="store_true", help="skip the x10 graphs (no scaling ratio)")
    p.add_argument("--warm", action="store_true", help="the warm CLI's commands on both backends instead")
    p.add_argument("--runs", type=int, default=10, help="--warm: runs of each command (default 10)")
    p.add_argument(
        "--pause", type=float, default=2.0, help="--warm: seconds between two commands (default 2)"
    )
    p.add_argument("--cold-runs", type=int, default=3, help="--warm: cold status runs (default 3)")
    p.add_argument(
        "--serve-runs", type=int, default=5, help="--warm: runs answered by serve (default 5; 0: none)"
    )
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    result = warm(args) if args.warm else run(args)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2) if args.json else (warm_human if args.warm else human)(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
