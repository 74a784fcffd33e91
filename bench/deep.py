"""Deep-graph revision benchmark: the rules where MQuAKE-hard is one level deep.

    python -m bench.deep [--cases N] [--sequences N] [--pure] [--quick] [--json] [--out FILE]

MQuAKE-hard's graph is one level deep (each conclusion rests on one group of four
hops) and its expected sets come from the subject+predicate rule the structured
judge applies, so a broken cascade can still score 100 % there. This benchmark has
chains of conclusions, alternative justifications, cycles, non-critical
dependencies and competing hypotheses, and its expected outcome after every
revision comes from the independent reference (:mod:`bench.reference`: the rules
re-implemented over the whole graph, no code shared with ``memory_core``):

* **mquake_deep** (real data): the first N per_case cases of MQuAKE-hard, loaded as
  in ``bench.mquake`` (hops as evidence with their Wikidata triples, each case's
  conclusion resting on its four hops), plus for each pair of consecutive cases
  (a, b): ``D`` resting on both conclusions (a chain), ``A`` resting on either
  (two groups: alternatives), ``Ca``/``Cb`` a cycle held up by ``a``'s conclusion,
  ``Z`` resting on ``A`` or on ``D`` (three levels), a non-critical edge ``A``->``Ca``
  (decay), and one hypothesis per case supported by its hops with unequal weights
  (all rivals under one question). Each case's edits go through
  ``Falsify.revise(claim, triple=...)`` (detection and the structured judge, the
  cognee pipeline, the journalled write); the reference is told which evidence the
  edit contradicts by the same subject+predicate rule. After every revision the
  whole stored graph (presence, state, weight, confidence of every loaded node)
  is compared with the reference; then the case is undone.
* **generated**: N random sequences from :mod:`bench.graphs` (pinned revisions,
  several per sequence, targets include earlier new facts), compared after every
  revision (:mod:`bench.wholegraph`), then undone.

``--pure`` computes the same scenarios with the pure engine
(``memory_core.core.revision.plan_revision``, driven as the store adapter drives
it) instead of the stores: no I/O, seconds; ``tests/system/test_bench_quick.py`` shows it
fails on a broken rule. Figures: conclusions that died vs the reference
(precision, recall, collateral, misses), revisions after which the whole graph
equals the reference, latency. Every figure printed is measured in the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from bench.common import log, machine, peak_rss_mb, save, scores, stdout_to_stderr, summary
from bench.reference import ALIVE, Model
from bench.wholegraph import Engine, run_sequence, sequence_case

QUESTION = "mquake-deep"
HOP_WEIGHTS = (0.9, 0.6, 0.3, 1.0)
QUICK_CASES, QUICK_SEQUENCES = 10, 5
FULL_CASES = int(os.environ.get("FALSIFY_DEEP_CASES", "60"))
FULL_SEQUENCES = int(os.environ.get("FALSIFY_DEEP_SEQUENCES", "300"))
SEED_BASE = 5000


# ---------------------------------------------------------------------------
# the MQuAKE-derived deep graph


def deep_investigation(data, n_cases: int) -> tuple[dict, list[dict], dict]:
    """(investigation, the cases used, evidence key -> (s, p, o))."""
    from bench.mquake.dataset import concl_key, ev_key

    cases = data.raw["scenarios"]["per_case"][:n_cases]
    conclusions = {n["id"]: n for n in data.conclusions}
    hops: dict[str, list[str]] = {}
    for e in data.edges:
        hops.setdefault(e["from"], []).append(e["to"])
    by_case = {n.get("case_id"): k for k, n in conclusions.items()}
    case_concl = [by_case.get(c["case_id"]) for c in cases]
    used_ev = sorted({h for k in case_concl if k for h in hops.get(k, [])})
    evidence, triples = [], {}
    for eid in used_ev:
        n = data.nodes[eid]
        key = ev_key(eid)
        s, p, o = n["triple"]
        triples[key] = (s, p, o)
        evidence.append(
            {
                "key": key,
                "claim": n["claim"],
                "subject": s,
                "predicate": p,
                "object": o,
                "source_id": f"mquake:{n['origin']}",
            }
        )
    concl, edges, hyps = [], [], []
    for i, k in enumerate(case_concl):
        if k is None:
            continue
        ck = concl_key(k)
        concl.append({"key": ck, "statement": conclusions[k]["claim"]})
        for h in hops[k]:
            edges.append({"type": "depends_on", "from": ck, "to": ev_key(h), "group": "chain"})
        hk = f"H:{cases[i]['case_id']}"
        hyps.append(
            {
                "key": hk,
                "statement": f"the answer of case {cases[i]['case_id']} is right",
                "prior": round(0.1 + 0.8 * (i % 5) / 4, 2),
            }
        )
        for j, h in enumerate(hops[k]):
            edges.append(
                {"type": "supports", "from": ev_key(h), "to": hk, "weight": HOP_WEIGHTS[(i + j) % 4]}
            )
    keys = [concl_key(k) if k else None for k in case_concl]
    for i in range(0, len(keys) - 1, 2):
        a, b = keys[i], keys[i + 1]
        if a is None or b is None:
            continue
        tag = f"{i // 2}"
        d, alt, c1, c2, z = (f"D:{tag}", f"A:{tag}", f"Ca:{tag}", f"Cb:{tag}", f"Z:{tag}")
        concl += [
            {"key": d, "statement": f"both answers of pair {tag} hold", "confidence": 0.8},
            {"key": alt, "statement": f"one answer of pair {tag} holds", "confidence": 0.8},
            {"key": c1, "statement": f"cycle {tag}, held up by the first answer"},
            {"key": c2, "statement": f"cycle {tag}, resting on its partner"},
            {"key": z, "statement": f"pair {tag} has an answer, one way or the other"},
        ]
        edges += [
            {"type": "depends_on", "from": d, "to": a, "group": "both"},
            {"type": "depends_on", "from": d, "to": b, "group": "both"},
            {"type": "depends_on", "from": alt, "to": a, "group": "first"},
            {"type": "depends_on", "from": alt, "to": b, "group": "second"},
            {"type": "depends_on", "from": c1, "to": a, "group": "direct"},
            {"type": "depends_on", "from": c1, "to": c2, "group": "loop"},
            {"type": "depends_on", "from": c2, "to": c1},
            {"type": "depends_on", "from": z, "to": alt, "group": "x"},
            {"type": "depends_on", "from": z, "to": d, "group": "y"},
            {"type": "depends_on", "from": alt, "to": c1, "critical": False},
        ]
    inv = {
        "question": {"key": QUESTION, "text": f"MQuAKE-hard, {len(cases)} cases, with derived conclusions"},
        "hypotheses": hyps,
        "evidence": evidence,
        "conclusions": concl,
        "edges": edges,
    }
    return inv, cases, triples


def contradicted(model: Model, triples: dict, fact: tuple[str, str, str]) -> list[str]:
    """The reference's detection: alive evidence with the fact's subject and
    predicate and another object (what the structured judge calls contradicts)."""
    s, p, o = fact
    return sorted(
        k for k, (s2, p2, o2) in triples.items() if model.alive(k) and (s2, p2) == (s, p) and o2 != o
    )


def picture(model: Model, keys: set[str]) -> dict:
    stored = model.stored()
    return {
        k: (
            stored[k].state,
            round(stored[k].weight, 6),
            None
            if stored[k].confidence is None or stored[k].kind != "conclusion"
            else round(stored[k].confidence, 6),
        )
        if k in stored
        else None
        for k in keys
    }


def status_picture(status: dict, keys: set[str]) -> dict:
    got = {
        n["key"]: (
            n["state"],
            round(float(n["feedback_weight"]), 6),
            None if n.get("confidence") is None else round(float(n["confidence"]), 6),
        )
        for n in status["nodes"]
        if n["key"] in keys
    }
    return {k: got.get(k) for k in keys}


class Tally:
    def __init__(self):
        self.tp = self.fp = self.fn = 0
        self.revisions = self.agreeing = 0
        self.ms: list[float] = []
        self.wrong: list[dict] = []

    def case(self, conclusions: set[str], expected: dict, observed: dict, loaded: dict) -> None:
        """After a case's last edit: the conclusions alive at load that are not
        alive now, expected (reference) vs observed."""
        was_alive = {k for k in conclusions if loaded.get(k) and loaded[k][0] == ALIVE}
        exp_dead = {k for k in was_alive if expected[k] is None or expected[k][0] != ALIVE}
        obs_dead = {k for k in was_alive if observed[k] is None or observed[k][0] != ALIVE}
        self.tp += len(exp_dead & obs_dead)
        self.fp += len(obs_dead - exp_dead)
        self.fn += len(exp_dead - obs_dead)

    def score(self, expected: dict, observed: dict, where: str) -> None:
        """After a revision: ``expected``/``observed``: key -> (state, weight,
        confidence) or None (forgotten), for every loaded node."""
        self.revisions += 1
        diffs = sorted(k for k in expected if expected[k] != observed[k])
        if diffs:
            if len(self.wrong) < 20:
                self.wrong.append(
                    {
                        "where": where,
                        "differences": [
                            {"key": k, "expected": expected[k], "observed": observed[k]} for k in diffs[:8]
                        ],
                    }
                )
        else:
            self.agreeing += 1

    def report(self) -> dict:
        return {
            "revisions": self.revisions,
            **scores(self.tp, self.fp, self.fn),
            "true_positives": self.tp,
            "collateral": self.fp,
            "misses": self.fn,
            "graph_equal_to_reference": self.agreeing,
            "graph_equal_rate": round(self.agreeing / self.revisions, 6) if self.revisions else None,
            "latency_ms": summary(self.ms),
            "first_differences": self.wrong,
        }


async def mquake_deep_stores(fx, data, n_cases: int) -> dict:
    from bench.reference import from_investigation

    inv, cases, triples = deep_investigation(data, n_cases)
    base = from_investigation(inv)
    base.load_settle()
    start = time.perf_counter()
    result = await fx.load(inv)
    load_s = time.perf_counter() - start
    keys = set(base.nodes)
    conclusions = {k for k, n in base.nodes.items() if n.kind == "conclusion"}
    loaded = picture(base, keys)
    initial = status_picture(await fx.status(), keys)
    tally = Tally()
    load_ok = initial == loaded
    undo_problems = []
    for case in cases:
        model = base.copy()
        case_triples = dict(triples)
        recorded = 0
        for eid in case["apply"]:
            claim, triple, key = data.fact(eid)
            s, p, o = triple.split("|")
            if key in model.nodes:
                continue  # the same new fact twice: already applied, nothing changes
            targets = contradicted(model, case_triples, (s, p, o))
            model.revise(targets, key, question=QUESTION)
            case_triples[key] = (s, p, o)
            t = time.perf_counter()
            res = await fx.revise(claim, triple=triple, key=key)
            tally.ms.append((time.perf_counter() - t) * 1000)
            recorded += res.get("epoch") is not None
            if res.get("epoch") is None:  # not recorded: the reference must not have it either
                model.nodes[key].forgotten = True
            expected, observed = picture(model, keys), status_picture(await fx.status(), keys)
            tally.score(expected, observed, f"case {case['case_id']} edit {eid}")
        tally.case(conclusions, picture(model, keys), status_picture(await fx.status(), keys), loaded)
        for _ in range(recorded):
            await fx.undo()
        back = status_picture(await fx.status(), keys)
        if back != loaded:
            undo_problems.append(
                f"case {case['case_id']}: {sorted(k for k in keys if back[k] != loaded[k])[:5]}"
            )
    return {
        "cases": len(cases),
        "nodes": len(result["added"]),
        "edges": len(result["edges_added"]),
        "load_seconds": round(load_s, 2),
        "load_equal_to_reference": load_ok,
        "undo_problems": undo_problems[:10],
        **tally.report(),
    }


def mquake_deep_pure(data, n_cases: int) -> dict:
    from bench.reference import from_investigation

    inv, cases, triples = deep_investigation(data, n_cases)
    base = from_investigation(inv)
    base.load_settle()
    keys = set(base.nodes)
    conclusions = {k for k, n in base.nodes.items() if n.kind == "conclusion"}
    loaded = picture(base, keys)
    tally = Tally()
    for case in cases:
        model, engine = base.copy(), Engine(base)
        case_triples = dict(triples)
        epoch = 1
        for eid in case["apply"]:
            claim, triple, key = data.fact(eid)
            s, p, o = triple.split("|")
            if key in model.nodes:
                continue
            targets = contradicted(model, case_triples, (s, p, o))
            # the engine decides the targets by the same rule, over its own states
            engine_targets = sorted(
                k
                for k, (s2, p2, o2) in case_triples.items()
                if k in engine.stored() and engine.nodes[k].state == ALIVE and (s2, p2) == (s, p) and o2 != o
            )
            model.revise(targets, key, question=QUESTION)
            case_triples[key] = (s, p, o)
            t = time.perf_counter()
            if engine_targets:
                engine.revise(engine_targets, key, epoch)
                tally.ms.append((time.perf_counter() - t) * 1000)
            else:
                from memory_core.core.beliefs import Node

                engine.nodes[key] = Node(key, "evidence", question=QUESTION)
            epoch += 1
            observed = {
                k: (
                    (
                        str(engine.nodes[k].state),
                        round(engine.nodes[k].weight, 6),
                        None
                        if engine.nodes[k].confidence is None or engine.nodes[k].kind != "conclusion"
                        else round(engine.nodes[k].confidence, 6),
                    )
                    if k in engine.stored()
                    else None
                )
                for k in keys
            }
            tally.score(picture(model, keys), observed, f"case {case['case_id']} edit {eid}")
        tally.case(conclusions, picture(model, keys), observed, loaded)
    return {"cases": len(cases), "nodes": len(keys), **tally.report()}


# ---------------------------------------------------------------------------
# generated sequences


async def generated_stores(fx, n: int, shared: bool) -> dict:
    failing, revisions, agreeing, ms = [], 0, 0, []
    for seed in range(SEED_BASE, SEED_BASE + n):
        prefix = f"g{seed}_"
        inv, picks = sequence_case(seed, prefix, shared=shared, min_conclusions=2)
        t = time.perf_counter()
        report = await run_sequence(fx, inv, picks, prefix)
        ms.append((time.perf_counter() - t) * 1000)
        revisions += report["revisions"]
        agreeing += sum(1 for s in report["steps"] if not s["differences"])
        if report["differences"]:
            failing.append({"seed": seed, "differences": report["differences"][:5]})
        for _ in range(report["revisions"] + 1):
            await fx.undo()
    return {
        "sequences": n,
        "revisions": revisions,
        "revisions_equal_to_reference": agreeing,
        "sequences_with_differences": len(failing),
        "first_failing": failing[:10],
        "sequence_ms": summary(ms),
    }


def generated_pure(n: int, shared: bool) -> dict:
    from bench.graphs import loaded_model, pick_target

    failing, revisions, agreeing = [], 0, 0
    for seed in range(SEED_BASE, SEED_BASE + n):
        inv, picks = sequence_case(seed, "", shared=shared, min_conclusions=2)
        model = loaded_model(inv)
        engine = Engine(model)
        bad = None
        for step, pick in enumerate(picks, start=1):
            target = pick_target(model, pick)
            if target is None:
                break
            model.revise(target, f"F{step}")
            engine.revise(target, f"F{step}", step)
            revisions += 1
            want = {k: (n.state, round(n.weight, 6), n.confidence) for k, n in model.stored().items()}
            got = {k: (str(n.state), round(n.weight, 6), n.confidence) for k, n in engine.stored().items()}
            if want != got:
                bad = {
                    "seed": seed,
                    "step": step,
                    "differences": sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))[:8],
                }
                break
            agreeing += 1
        if bad:
            failing.append(bad)
    return {
        "sequences": n,
        "revisions": revisions,
        "revisions_equal_to_reference": agreeing,
        "sequences_with_differences": len(failing),
        "first_failing": failing[:10],
    }


# ---------------------------------------------------------------------------


def shared_ok() -> bool:
    from bench.wholegraph import accepts_shared_antecedents

    return accepts_shared_antecedents()


async def run_stores(args, data) -> dict:
    from memory_core.api import Falsify

    out = {}
    async with Falsify.open(args.root, purpose="bench.deep") as fx:
        await fx.warm_up()
        if args.cases:
            log(f"mquake_deep: {args.cases} cases through the real pipeline")
            out["mquake_deep"] = await mquake_deep_stores(fx, data, args.cases)
        if args.sequences:
            log(f"generated: {args.sequences} sequences through the real pipeline")
            out["generated"] = await generated_stores(fx, args.sequences, shared_ok())
    return out


def human(result: dict) -> str:
    m = result["machine"]
    lines = [
        f"FALSIFY deep-graph benchmark ({m['date']}, {'pure engine' if result['pure'] else 'real stores'})",
        f"commit {m.get('commit')}; {m['platform']}, {m['cpu_count']} CPU ({m['cpu_model']}), Python {m['python']}",
        "expected outcome after every revision: bench.reference (the rules re-implemented over the whole graph)",
    ]
    d = result.get("mquake_deep")
    if d:
        lines.append(
            f"\n[mquake_deep] {d['cases']} MQuAKE-hard cases + derived chains/alternatives/cycles/hypotheses "
            f"({d['nodes']} nodes), {d['revisions']} revisions"
        )
        lines.append(
            "  conclusions that died in a case (vs the reference, per case): precision "
            f"{d['precision']:.2%} recall {d['recall']:.2%} collateral "
            f"{d['collateral']} misses {d['misses']} (true positives {d['true_positives']})"
        )
        lines.append(
            f"  whole graph equal to the reference after {d['graph_equal_to_reference']}/{d['revisions']} "
            f"revisions; latency p50 {d['latency_ms'].get('p50')} ms p95 {d['latency_ms'].get('p95')} ms"
        )
        if "load_equal_to_reference" in d:
            lines.append(
                f"  load equal to the reference: {d['load_equal_to_reference']}; undo problems: "
                f"{len(d['undo_problems'])}"
            )
        for w in d["first_differences"][:3]:
            lines.append(f"  differs: {w['where']}: {w['differences'][:3]}")
    g = result.get("generated")
    if g:
        lines.append(
            f"\n[generated] {g['sequences']} sequences, {g['revisions']} revisions: "
            f"{g['revisions_equal_to_reference']} equal to the reference, "
            f"{g['sequences_with_differences']} sequences with a difference"
        )
        for f in g["first_failing"][:3]:
            lines.append(f"  seed {f['seed']}: {f.get('differences')}")
    lines.append(f"\nwall {result['seconds']} s, peak RSS {result['peak_rss_mb']} MB")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.deep", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--cases", type=int, help=f"MQuAKE-hard cases in mquake_deep (default {FULL_CASES}; 0: skip)"
    )
    p.add_argument("--sequences", type=int, help=f"generated sequences (default {FULL_SEQUENCES}; 0: skip)")
    p.add_argument("--quick", action="store_true", help=f"{QUICK_CASES} cases, {QUICK_SEQUENCES} sequences")
    p.add_argument("--pure", action="store_true", help="the pure engine instead of the stores (no I/O)")
    p.add_argument("--root", help="data root (new or empty; default a temporary directory)")
    p.add_argument("--data", help="MQuAKE-hard file (default $FALSIFY_BENCH_DATA or ../shared/bench/...)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", help="also write the result as JSON to this file")
    args = p.parse_args(argv)
    args.cases = args.cases if args.cases is not None else (QUICK_CASES if args.quick else FULL_CASES)
    args.sequences = (
        args.sequences if args.sequences is not None else (QUICK_SEQUENCES if args.quick else FULL_SEQUENCES)
    )
    from bench.mquake.dataset import Dataset, data_path

    data = None
    if args.cases:
        path = data_path(args.data)
        if not path.is_file():
            print(f"benchmark data not found: {path} (set --data or $FALSIFY_BENCH_DATA)", file=sys.stderr)
            return 2
        data = Dataset.read(path)
    start = time.perf_counter()
    result = {"machine": machine(), "pure": args.pure}
    temp: Optional[Path] = None
    with stdout_to_stderr(args.json) as out:
        if args.pure:
            if args.cases:
                result["mquake_deep"] = mquake_deep_pure(data, args.cases)
            if args.sequences:
                result["generated"] = generated_pure(args.sequences, shared=True)
        else:
            if not args.root:
                temp = Path(tempfile.mkdtemp(prefix="falsify-deep-"))
                args.root = str(temp / "root")
            try:
                result.update(asyncio.run(run_stores(args, data)))
            finally:
                if temp is not None:
                    shutil.rmtree(temp, ignore_errors=True)
        result["seconds"] = round(time.perf_counter() - start, 1)
        result["peak_rss_mb"] = peak_rss_mb()
        save(result, args.out)
        out.write((json.dumps(result, indent=1) if args.json else human(result)) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
