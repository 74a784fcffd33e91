"""Gate-1 recall: is the evidence a new fact contradicts among its candidates?

``python -m bench.gate1 [--json] [--sets demo,mquake,snli] [--limit N]``

Each set is loaded as plain evidence (claims only, no triples: gate 1 alone) into a
fresh temporary data root with the offline embedder, then every query fact is run
through gate 1's retrievers (:mod:`memory_core.judging.retrieval`) on the real stores:

* ``before``: what gate 1 did until now: the 8 nearest by cosine distance, kept if
  below 0.55.
* ``dense@k``, ``lexical@k``, ``fused@k``: the top k of the vector ranking, of the
  lexical (full-text) ranking, and of their reciprocal rank fusion (what gate 1 does now,
  k = 8 by default), with no distance cutoff.

Sets:

* ``demo``: the demo's session-2 sentence, looking for ``E_qa`` among the demo's evidence.
* ``mquake``: the 1,716 MQuAKE-hard edits: each new fact's claim looking for the claim it
  contradicts among the benchmark's 959 initially asserted evidence claims.
* ``snli``: the SNLI 1.0 test contradiction pairs of ``../shared/bench/snli``: each
  hypothesis looking for its premise among all the file's premises.

Prints the machine, the date and the load average with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "bench"
KS = (1, 3, 5, 8, 10)
OLD_CUTOFF, OLD_LIMIT = 0.55, 8


def machine() -> dict:
    cpu = ""
    try:
        cpu = next(
            line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    return {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores {cpu}".strip(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def demo_set():
    from memory_core.shell.demo import FACT, SEED

    seed = json.loads(SEED.read_text())
    corpus = {e["key"]: e["claim"] for e in seed["evidence"]}
    return corpus, [(FACT, "E_qa")]


def mquake_set(limit=None):
    data = json.loads((SHARED / "out_mquake_hard_beliefs.json").read_text())
    keys, corpus = {}, {}
    for n in data["nodes"]:
        if n["kind"] == "Evidence" and n.get("initially_asserted"):  # what is stored before the edits
            keys[n["id"]] = f"M{len(keys)}"
            corpus[keys[n["id"]]] = n["claim"]
    queries = [
        (e["new_fact"]["claim"], keys[e["contradicts"]]) for e in data["edits"] if e["contradicts"] in keys
    ]
    return corpus, queries[:limit] if limit else queries


def snli_set(limit=None):
    rows = [
        json.loads(x)
        for x in (SHARED / "snli" / "snli_1.0_test_head.jsonl").read_text().splitlines()
        if x.strip()
    ]
    keys: dict[str, str] = {}
    for r in rows:
        keys.setdefault(r["sentence1"], f"S{len(keys)}")
    corpus = {k: s for s, k in keys.items()}
    queries = [(r["sentence2"], keys[r["sentence1"]]) for r in rows if r["gold_label"] == "contradiction"]
    return corpus, queries[:limit] if limit else queries


def investigation(name: str, corpus: dict) -> dict:
    return {
        "question": {"key": f"Q_{name}", "text": f"bench.gate1 {name}"},
        "evidence": [{"key": k, "claim": c, "source_id": "bench"} for k, c in corpus.items()],
        "conclusions": [],
        "edges": [],
    }


def recall(ranked: list[list[str]], wanted: list[str], k: int) -> float:
    return round(sum(w in r[:k] for r, w in zip(ranked, wanted)) / max(1, len(wanted)), 3)


def summary(values: list[float]) -> dict:
    if not values:
        return {}
    s = sorted(values)
    return {
        "p50": round(statistics.median(s), 3),
        "p95": round(s[int(0.95 * (len(s) - 1))], 3),
        "max": round(s[-1], 3),
        "below_0.55": round(sum(v < 0.55 for v in s) / len(s), 3),
        "below_1.0": round(sum(v < 1.0 for v in s) / len(s), 3),
    }


async def measure(app, name: str, corpus: dict, queries: list) -> dict:
    from memory_core.judging.retrieval import GATE1_K, LexicalRetriever, Query, VectorRetriever, gate1_many

    started = time.perf_counter()
    await app.load(json.dumps(investigation(name, corpus)))
    load_s = time.perf_counter() - started
    store = app.store
    facts = [q for q, _ in queries]
    wanted = [w for _, w in queries]
    vectors = await store.embed(facts)
    qs = [Query(f, None, v) for f, v in zip(facts, vectors)]
    deep = max(KS)

    async def ranked(retrievers, k, floor=None):
        t = time.perf_counter()
        found = await gate1_many(store, qs, k, floor, retrievers)
        keys = [[f.props[i]["key"] for i in f.ids] for f in found]
        return keys, found, (time.perf_counter() - t) * 1000 / max(1, len(qs))

    dense, _, dense_ms = await ranked((VectorRetriever(),), deep)
    lexical, _, lexical_ms = await ranked((LexicalRetriever(),), deep)
    fused, _, fused_ms = await ranked((VectorRetriever(), LexicalRetriever()), deep)
    before, _, _ = await ranked((VectorRetriever(),), OLD_LIMIT, OLD_CUTOFF)
    # the distance of each query to the evidence it looks for (however far), from all vectors at once
    import numpy as np

    ids, rows = await store.all_vectors("Evidence_claim")
    key_of = {i: p["key"] for i, p in (await store.raw_nodes(ids)).items()}
    row_of = {key_of.get(i): n for n, i in enumerate(ids)}
    m = np.asarray(rows, dtype=np.float64)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    distances = []
    for q, w in zip(qs, wanted):
        if w in row_of:
            v = np.asarray(q.vector, dtype=np.float64)
            distances.append(float(1.0 - m[row_of[w]] @ (v / np.linalg.norm(v))))
    return {
        "set": name,
        "evidence": len(corpus),
        "queries": len(queries),
        "load_seconds": round(load_s, 1),
        "before": {
            "recall": recall(before, wanted, OLD_LIMIT),
            "candidates_per_fact": round(sum(map(len, before)) / max(1, len(before)), 2),
        },
        "recall_at": {
            m: {str(k): recall(r, wanted, k) for k in KS}
            for m, r in (("dense", dense), ("lexical", lexical), ("fused", fused))
        },
        "after": {
            "k": GATE1_K,
            "recall": recall(fused, wanted, GATE1_K),
            "candidates_per_fact": round(sum(min(len(r), GATE1_K) for r in fused) / max(1, len(fused)), 2),
        },
        "distance_to_wanted": summary(distances),
        "ms_per_fact": {
            "dense": round(dense_ms, 2),
            "lexical": round(lexical_ms, 2),
            "fused": round(fused_ms, 2),
        },
    }


async def main_async(args) -> dict:
    from memory_core.api import Falsify

    sets = {"demo": demo_set, "mquake": lambda: mquake_set(args.limit), "snli": lambda: snli_set(args.limit)}
    out = machine()
    out["results"] = []
    names = args.sets.split(",")
    for name in names:
        if len(names) > 1:  # one process serves one data root: each set in a child of its own
            import subprocess

            argv = [sys.executable, "-m", "bench.gate1", "--sets", name, "--json"]
            if args.limit:
                argv += ["--limit", str(args.limit)]
            proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"bench.gate1 {name} failed: {proc.stderr[-2000:]}")
            out["results"] += json.loads(proc.stdout)["results"]
        else:
            corpus, queries = sets[name]()
            with tempfile.TemporaryDirectory(prefix="falsify-gate1-") as tmp:
                async with await Falsify.open(Path(tmp) / "root", purpose="bench.gate1") as app:
                    out["results"].append(await measure(app, name, corpus, queries))
        print(f"[gate1] {name} done", file=sys.stderr, flush=True)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def report(out: dict) -> str:
    lines = [
        f"gate-1 recall, {out['machine']}, {out['date']}, load {out['load_average']} -> {out['load_average_after']}"
    ]
    for r in out["results"]:
        lines.append(f"{r['set']}: {r['queries']} facts, {r['evidence']} evidence")
        lines.append(
            f"  before (8 nearest, distance < 0.55): recall {r['before']['recall']}, "
            f"{r['before']['candidates_per_fact']} candidates per fact"
        )
        lines.append(
            f"  after (fused top {r['after']['k']}): recall {r['after']['recall']}, "
            f"{r['after']['candidates_per_fact']} candidates per fact"
        )
        for m, at in r["recall_at"].items():
            lines.append(f"  {m:8} " + "  ".join(f"@{k} {v}" for k, v in at.items()))
        lines.append(f"  distance to the wanted evidence: {r['distance_to_wanted']}")
        lines.append(f"  ms per fact: {r['ms_per_fact']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gate1", description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="demo,mquake,snli")
    parser.add_argument("--limit", type=int, default=None, help="at most this many query facts per set")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    out = asyncio.run(main_async(args))
    print(json.dumps(out, indent=1) if args.json else report(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
