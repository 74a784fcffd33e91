"""Speed of one revision: the pure cascade, and the whole pipeline on real stores.

    python -m bench.revision_speed [--root DIR] [--json]

1. Pure cascade (no I/O): a background graph of N nodes plus a chain of k
   dependents hanging off one evidence node; time ``plan_revision`` for
   N in {1k, 10k, 100k} and k in {1, 10, 100, 1000}. The cost should follow k.
2. Real stores: the same shape at N in {0, 2000} background nodes and
   k in {1, 4, 16, 64}; every store call the revision makes is counted
   (graph queries, writes, vector calls) and timed. Store operations should
   follow k (one edge query per dependency level, one batch per
   write kind), not N.
Figures are measured on this machine in this run; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time

from bench.common import machine_line as machine
from memory_core.core.beliefs import BeliefView, Edge, Node


def pure_view(n_background: int, k: int) -> BeliefView:
    v = BeliefView()
    v.add_node(Node("E0", "evidence", question="Q"))
    for i in range(n_background // 2):  # independent little chains: E -> K
        v.add_node(Node(f"BE{i}", "evidence", question="Q"))
        v.add_node(Node(f"BK{i}", "conclusion", question="Q"))
        v.add_edge(Edge("depends_on", f"BK{i}", f"BE{i}"))
    prev = "E0"
    for j in range(k):
        v.add_node(Node(f"K{j}", "conclusion", question="Q"))
        v.add_edge(Edge("depends_on", f"K{j}", prev))
        prev = f"K{j}"
    return v


def bench_pure(repeat: int = 5) -> list[dict]:
    from memory_core.core.revision import plan_revision

    rows = []
    for n in (1_000, 10_000, 100_000):
        for k in (1, 10, 100, 1000):
            times = []
            for _ in range(repeat):
                v = pure_view(n, k)
                t = time.perf_counter()
                plan = plan_revision(
                    v, [("E0", "contradicts", 0.9)], 1, None, Node("F", "evidence", question="Q")
                )
                times.append((time.perf_counter() - t) * 1000)
            assert len(plan.invalidated) == k
            rows.append({"background_nodes": n, "k": k, "median_ms": round(statistics.median(times), 3)})
    return rows


class Counter:
    """Counts every call a revision makes on the store's graph and vector engines
    (the engines are swapped for counting proxies; the real engines do the work)."""

    def __init__(self, store):
        self.calls: dict[str, int] = {}
        store.graph = self._proxy(store.graph, "graph")
        store.vector = self._proxy(store.vector, "vector")

    def _proxy(self, engine, label):
        counter = self

        class Proxy:
            def __getattr__(self, name):
                attr = getattr(engine, name)
                if not callable(attr):
                    return attr

                def call(*args, **kwargs):
                    key = f"{label}.{name}"
                    counter.calls[key] = counter.calls.get(key, 0) + 1
                    return attr(*args, **kwargs)

                return call

        return Proxy()


def investigation(tag: str, n_background: int, k: int) -> str:
    ev = [
        {
            "key": f"{tag}E0",
            "claim": f"Component {tag} was certified in Bonn.",
            "subject": f"component {tag}",
            "predicate": "was certified in",
            "object": "Bonn",
        }
    ]
    co, edges = [], []
    for i in range(n_background // 2):
        ev.append({"key": f"{tag}BE{i}", "claim": f"Background fact {tag} {i}."})
        co.append({"key": f"{tag}BK{i}", "statement": f"Background conclusion {tag} {i}."})
        edges.append({"type": "depends_on", "from": f"{tag}BK{i}", "to": f"{tag}BE{i}"})
    prev = f"{tag}E0"
    for j in range(k):
        co.append({"key": f"{tag}K{j}", "statement": f"Step {j} of chain {tag}."})
        edges.append({"type": "depends_on", "from": f"{tag}K{j}", "to": prev})
        prev = f"{tag}K{j}"
    return json.dumps(
        {
            "question": {"key": f"{tag}Q", "text": f"Chain {tag}?"},
            "evidence": ev,
            "conclusions": co,
            "edges": edges,
        }
    )


async def bench_stores(root: str) -> list[dict]:
    from memory_core.api import Falsify

    app = await Falsify.open(root, purpose="bench.revision_speed")
    await app.warm_up()
    counter = Counter(app.store)
    rows = []
    try:
        for n in (0, 2000):
            for k in (1, 4, 16, 64):
                times, ops = [], []
                for rep in range(3):
                    tag = f"n{n}k{k}r{rep}_"
                    await app.load(investigation(tag, n, k))
                    counter.calls.clear()
                    t = time.perf_counter()
                    result = await app.revise(
                        f"Component {tag} was certified in Porto.",
                        triple=f"component {tag}|was certified in|Porto",
                    )
                    times.append((time.perf_counter() - t) * 1000)
                    ops.append(dict(counter.calls))
                    assert len(result["invalidated"]) == k, result
                rows.append(
                    {
                        "background_nodes": n,
                        "k": k,
                        "median_ms": round(statistics.median(times), 1),
                        "store_calls": ops[-1],
                        "total_store_calls": sum(ops[-1].values()),
                    }
                )
    finally:
        await app.close()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="data root for the store benchmark (default: a temporary directory)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    root = args.root or tempfile.mkdtemp(prefix="falsify-speed-")
    from memory_core.store import backends, data_root, settings

    data_root.configure(root, backends.choose(settings.current()))
    report = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d"),
        "pure": bench_pure(),
        "stores": asyncio.run(bench_stores(root)),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"revision speed — {report['machine']} — {report['date']}")
    print("pure cascade (plan_revision, no I/O), median ms:")
    for r in report["pure"]:
        print(f"  background {r['background_nodes']:>7}  k={r['k']:>5}  {r['median_ms']:>9.3f} ms")
    print("whole revision on real stores (cognee pipeline, Ladybug + LanceDB), median of 3:")
    for r in report["stores"]:
        calls = ", ".join(f"{k} {v}" for k, v in sorted(r["store_calls"].items()))
        print(
            f"  background {r['background_nodes']:>5}  k={r['k']:>3}  {r['median_ms']:>7.1f} ms  "
            f"{r['total_store_calls']:>3} store calls ({calls})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
