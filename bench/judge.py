"""The LLM judge's cost per revision: one call per candidate (old) vs one call per fact (new).

    python -m bench.judge [--facts 12] [--evidence 200] [--latency-ms 300] [--json]

Against the local OpenAI-compatible stub (``tests/support/llm_stub.py``, a real HTTP server on
127.0.0.1) answering every request after a fixed ``--latency-ms``. A data root is loaded
through ``Falsify.load`` with MQuAKE-hard evidence claims *without* triples (so the
structured judge cannot decide and every gate-1 candidate goes to the LLM judge): the
evidence each of the first ``--facts`` edits contradicts, plus other evidence up to
``--evidence`` claims. Each edit's new claim is then revised (``Falsify.revise``, dry
run: detection and judging through the revision pipeline, nothing written), in one run:

* old way: ``FALSIFY_LLM_PER_CANDIDATE=1``, one call per candidate, one after another;
* new way: one structured call per fact (all its candidates), verdict cache off;
* cached: the new way again with the verdict cache on, each fact twice (the second
  run must cost no call);
* many facts: ``judge_many`` over all facts' candidates with ``FALSIFY_LLM_CONCURRENCY``
  1 and 4 (wall time).

``single_call_ms`` is one bare judge call (one candidate) through the same gateway. The
printed ``latency_ratio_to_one_call`` is the new way's revision latency (p50, dry run: gate 1,
judging and the pipeline, no write) over it; ``judge_ratio_to_one_call`` the
``detect_contradictions`` step alone (gate 1 + the call); ``fact_call_ratio_to_one_call``
the fact's one LLM call alone (all its candidates) over the one-candidate call.
Every figure printed is measured in the run that prints it.
"""

from __future__ import annotations

import argparse
import dataclasses
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def log(*parts) -> None:
    print("[judge]", *parts, file=sys.stderr, flush=True)


def investigation(data, facts: int, evidence: int) -> tuple[dict, list[str]]:
    edits = []
    seen = set()
    for e in data.raw["edits"]:
        if e["contradicts"] in data.nodes and e["new_fact"]["claim"] not in seen:
            edits.append(e)
            seen.add(e["new_fact"]["claim"])
        if len(edits) == facts:
            break
    wanted = [e["contradicts"] for e in edits]
    others = [n["id"] for n in data.evidence if n["id"] not in set(wanted)]
    ids = list(dict.fromkeys(wanted + others))[: max(evidence, len(wanted))]
    ev = [{"key": f"E{i}", "claim": data.nodes[n]["claim"], "source_id": "mquake"} for i, n in enumerate(ids)]
    inv = {
        "question": {"key": "Q", "text": "MQuAKE-hard claims (no triples): bench.judge"},
        "evidence": ev,
        "conclusions": [],
        "edges": [],
    }
    return inv, [e["new_fact"]["claim"] for e in edits]


def p50(values):
    return round(statistics.median(values), 1) if values else None


async def run(args, stub, root: Path) -> dict:
    from memory_core.api import Falsify
    from memory_core.judging.judges import LLMJudge, judge_many
    from memory_core.judging.detect import candidates_of, gate1_threshold, structured_pass
    from memory_core.store.embedder import fingerprint

    from .mquake import Dataset, data_path

    data = Dataset.read(data_path(args.data))
    inv, facts = investigation(data, args.facts, args.evidence)
    out: dict = {
        "facts": len(facts),
        "evidence_loaded": len(inv["evidence"]),
        "stub_latency_ms": args.latency_ms,
    }
    # loaded by the CLI in a child without the LLM settings (with an LLM model configured, cognee's
    # loader resolves that model's tokenizer, which tiktoken would download)
    start = time.perf_counter()
    inv_file = root.parent / "investigation.json"
    inv_file.write_text(json.dumps(inv))
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    proc = subprocess.run(
        [sys.executable, "main.py", "--root", str(root), "load", str(inv_file), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"loading the bench root failed: {proc.stderr[-2000:]}")
    out["load_seconds"] = round(time.perf_counter() - start, 1)
    async with await Falsify.open(root, purpose="bench.judge") as app:
        await app.warm_up()
        threshold = gate1_threshold(fingerprint()["provider"], app.store.settings)
        cands = []
        for fact in facts:
            found, props = await candidates_of(app.store, fact, None, threshold)
            cands.append([(c.key, c.claim) for c in structured_pass(None, found, props)])
        out["candidates_per_fact"] = round(sum(map(len, cands)) / max(len(facts), 1), 2)
        out["facts_with_candidates"] = sum(1 for c in cands if c)
        judge = LLMJudge(app.store.settings, cache=False)

        # one bare call (one candidate), the unit of comparison
        stub.latency = 0.0
        await judge.judge_pair("warm-up claim", "warm-up fact")  # litellm's first call pays its imports
        stub.latency = args.latency_ms / 1000
        single = []
        for fact, c in zip(facts, cands):
            if c:
                t = time.perf_counter()
                await judge.judge_pair(c[0][1], fact)
                single.append((time.perf_counter() - t) * 1000)
        out["single_call_ms"] = p50(single)
        # the new way's one call per fact alone (all of the fact's candidates), same gateway
        batch = []
        for fact, c in zip(facts, cands):
            if c:
                t = time.perf_counter()
                await judge.judge(fact, c)
                batch.append((time.perf_counter() - t) * 1000)
        out["fact_call_ms"] = p50(batch)

        async def way(name: str, changes: dict, repeat: int = 1) -> dict:
            # the opened stores' settings (read once, at open, and held by their backend), changed for
            # this way only
            saved = app.store.settings
            app.store.backend.settings = dataclasses.replace(saved, **changes)
            try:
                lat, judged, calls, per_fact = [], [], 0, []
                for fact, c in zip(facts, cands):
                    if not c:
                        continue
                    for _ in range(repeat):
                        before = stub.calls()
                        t = time.perf_counter()
                        result = await app.revise(fact, dry_run=True)
                        lat.append((time.perf_counter() - t) * 1000)
                        judged.append(result.get("timings", {}).get("detect_contradictions"))
                        n = stub.calls() - before
                        per_fact.append(n)
                        calls += n
                        llm = result.get("llm") or {}
                        if llm.get("calls") is not None and llm["calls"] != n:
                            log(f"{name}: result says {llm['calls']} calls, the stub saw {n}")
                return {
                    "calls": calls,
                    "revisions": len(lat),
                    "calls_per_fact": round(calls / max(len(lat), 1), 2),
                    "calls_per_revision": per_fact,
                    "revise_ms_p50": p50(lat),
                    "detect_ms_p50": p50([j for j in judged if j is not None]),
                }
            finally:
                app.store.backend.settings = saved

        # FALSIFY_LLM_PER_CANDIDATE and FALSIFY_VERDICT_CACHE of each way
        out["old"] = await way("old", {"llm_per_candidate": True, "verdict_cache": False})
        log("old", out["old"])
        out["new"] = await way("new", {"llm_per_candidate": False, "verdict_cache": False})
        log("new", out["new"])
        cached = await way("cached", {"llm_per_candidate": False, "verdict_cache": True}, repeat=2)
        out["cached"] = {
            "calls_first_run": sum(cached["calls_per_revision"][0::2]),
            "calls_second_run": sum(cached["calls_per_revision"][1::2]),
        }
        log("cached", out["cached"])

        items = [(fact, c) for fact, c in zip(facts, cands) if c]
        many = {}
        for conc in (1, 4):
            before = stub.calls()
            t = time.perf_counter()
            await judge_many(items, concurrency=conc, judge=judge)
            many[f"concurrency_{conc}_ms"] = round((time.perf_counter() - t) * 1000, 1)
            many[f"concurrency_{conc}_calls"] = stub.calls() - before
        many["facts"] = len(items)
        out["judge_many"] = many
    single_ms = out["single_call_ms"]
    out["calls_per_fact"] = out["new"]["calls_per_fact"]
    out["latency_ratio_to_one_call"] = (
        round(out["new"]["revise_ms_p50"] / single_ms, 2) if single_ms else None
    )
    out["judge_ratio_to_one_call"] = (
        round(out["new"]["detect_ms_p50"] / single_ms, 2)
        if single_ms and out["new"]["detect_ms_p50"]
        else None
    )
    out["fact_call_ratio_to_one_call"] = round(out["fact_call_ms"] / single_ms, 2) if single_ms else None
    out["old_latency_ratio_to_one_call"] = (
        round(out["old"]["revise_ms_p50"] / single_ms, 2) if single_ms else None
    )
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.judge", description=__doc__.split("\n\n")[0])
    p.add_argument("--facts", type=int, default=12)
    p.add_argument("--evidence", type=int, default=200)
    p.add_argument("--latency-ms", type=float, default=300.0)
    p.add_argument("--data", help="the MQuAKE-hard beliefs file (default ../shared/bench/...)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "tests" / "support"))
    from llm_stub import StubLLM

    from .mquake import machine, stdout_to_stderr

    temp = Path(tempfile.mkdtemp(prefix="falsify-judge-"))
    stub = StubLLM().start()
    os.environ.update(
        FALSIFY_EMBEDDER="local",
        LLM_API_KEY="bench",
        LLM_PROVIDER="custom",
        LLM_ENDPOINT=stub.url,
        LLM_MODEL="openai/stub",
        FALSIFY_JUDGE_TIMEOUT="60",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    os.environ.pop("FALSIFY_LLM_BUDGET_USD", None)
    out = {"machine": machine()}
    try:
        with stdout_to_stderr(args.json):
            out.update(asyncio.run(run(args, stub, temp / "root")))
    finally:
        stub.stop()
        shutil.rmtree(temp, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(
            f"{out['facts']} facts, {out['candidates_per_fact']} LLM-judged candidates per fact; stub latency "
            f"{args.latency_ms:g} ms; one bare call {out['single_call_ms']} ms (p50), one call for all of a fact's "
            f"candidates {out['fact_call_ms']} ms"
        )
        for name in ("old", "new"):
            w = out[name]
            print(
                f"{name:>4}: {w['calls_per_fact']} calls per fact, revision (dry run) p50 {w['revise_ms_p50']} ms, "
                f"judging p50 {w['detect_ms_p50']} ms"
            )
        print(
            f"new way: {out['calls_per_fact']} calls per fact, latency {out['latency_ratio_to_one_call']}x one call "
            f"(judging alone {out['judge_ratio_to_one_call']}x); cached re-run: "
            f"{out['cached']['calls_second_run']} calls"
        )
        print(
            f"judge_many over {out['judge_many']['facts']} facts: {out['judge_many']['concurrency_1_ms']} ms one at a "
            f"time, {out['judge_many']['concurrency_4_ms']} ms at concurrency 4"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
