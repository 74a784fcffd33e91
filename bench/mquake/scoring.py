"""Scoring a run: precision/recall/collateral per scenario, the pure-core lower
bound computing the same cascades, and the whole-graph comparison after undo."""

from __future__ import annotations

import copy
import time
from typing import Optional

from bench.common import pct, scores, summary
from bench.mquake.dataset import Dataset, Group, concl_key, ev_key, question_key


def limit_for(scenario: str, limit: Optional[int]) -> Optional[int]:
    """--limit cuts per_case (cases) and all_edits (edits); batches always run whole."""
    return limit if scenario in ("per_case", "all_edits") else None


def revision_report(run: dict) -> dict:
    revs = [r for r in run["revisions"] if r["epoch"] is not None]
    ms = [r["ms"] for r in revs]
    tasks: dict[str, list[float]] = {}
    steps: dict[str, list[float]] = {}
    outside = []
    for r in revs:
        for name, value in r["timings"].items():
            tasks.setdefault(name, []).append(value)
        for name, value in r["steps"].items():
            steps.setdefault(name, []).append(value)
        outside.append(r["ms"] - sum(r["timings"].values()))
    groups = run["groups"]
    return {
        "groups": len(groups),
        "revisions": len(run["revisions"]),
        "recorded": len(revs),
        "already_applied": sum(r["already_applied"] for r in run["revisions"]),
        **scores(run["tp"], run["fp"], run["fn"]),
        "true_positives": run["tp"],
        "collateral": run["fp"],
        "misses": run["fn"],
        "groups_wrong": [
            g["group"] for g in groups if g["collateral"] or g["missed"] or g["other_replicas_dead"]
        ],
        "log_disagreements": sum(1 for g in groups if g["log_disagrees"]),
        "refuted_wrong": sum(len(g["refuted_wrong"]) for g in groups),
        "restore_problems": run["restore_problems"][:20],
        "restore_problem_count": len(run["restore_problems"]),
        "latency_ms": summary(ms),
        "cpu_ms": summary([r["cpu_ms"] for r in revs]),
        "first_revision_ms": ms[0] if ms else None,
        "latency_first_half_p50": round(pct(ms[: len(ms) // 2], 0.5), 3) if len(ms) > 1 else None,
        "latency_second_half_p50": round(pct(ms[len(ms) // 2 :], 0.5), 3) if len(ms) > 1 else None,
        "undo_ms": summary(run["undo_ms"]),
        "task_ms_p50": {k: round(pct(v, 0.5), 3) for k, v in tasks.items()},
        "outside_tasks_ms_p50": round(pct(outside, 0.5), 3) if outside else None,
        "write_steps_ms_p50": {k: round(pct(v, 0.5), 3) for k, v in steps.items()},
        "seconds": run["seconds"],
    }


def lower_bound(data: Dataset, groups: list[Group]) -> dict:
    """The same cascades computed by ``memory_core.core.revision.plan_revision`` over an
    in-memory :class:`BeliefView` of the same graph. Timed per revision: the verdict
    lookup (a dict of subject|predicate, the structured judge's rule) and the plan."""
    from memory_core.core.beliefs import ALIVE, BeliefView, Edge, Node
    from memory_core.core.vocabulary import DEPENDS_ON
    from memory_core.core.keys import normalise_term, sp_key
    from memory_core.core.revision import plan_revision

    q = question_key(0)
    base_nodes = {q: Node(q, "question", question=q, text="MQuAKE-hard")}
    triples = {}
    for n in data.evidence:
        key = ev_key(n["id"])
        base_nodes[key] = Node(key, "evidence", question=q, text=n["claim"])
        triples[key] = n["triple"]
    for n in data.conclusions:
        base_nodes[concl_key(n["id"])] = Node(concl_key(n["id"]), "conclusion", question=q, text=n["claim"])
    base_edges = [
        Edge(DEPENDS_ON, concl_key(e["from"]), ev_key(e["to"]), critical=True, group="chain")
        for e in data.edges
    ]
    base_sp: dict[str, list[str]] = {}
    for key, (s, p, _) in triples.items():
        base_sp.setdefault(sp_key(s, p), []).append(key)
    times, per_group, tp, fp, fn = [], [], 0, 0, 0
    for group in groups:
        view = BeliefView(nodes={k: copy.copy(n) for k, n in base_nodes.items()}, edges=list(base_edges))
        sp = {k: list(v) for k, v in base_sp.items()}
        objects = dict(triples)
        epoch = 1
        mine = []
        for eid in group.apply:
            claim, triple, key = data.fact(eid)
            s, p, o = triple.split("|")
            start = time.perf_counter()
            if key in view.nodes:
                mine.append(round((time.perf_counter() - start) * 1000, 4))
                continue
            verdicts = [
                (k, "contradicts", 0.9)
                for k in sp.get(sp_key(s, p), [])
                if view.nodes[k].state == ALIVE and normalise_term(objects[k][2]) != normalise_term(o)
            ]
            plan_revision(view, verdicts, epoch, claim, Node(key, "evidence", question=q, text=claim))
            sp.setdefault(sp_key(s, p), []).append(key)
            objects[key] = (s, p, o)
            mine.append(round((time.perf_counter() - start) * 1000, 4))
            epoch += 1
        dead = {n["id"] for n in data.conclusions if view.nodes[concl_key(n["id"])].state != ALIVE}
        tp += len(dead & group.expected)
        fp += len(dead - group.expected)
        fn += len(group.expected - dead)
        per_group.append({"group": group.name, "observed": sorted(dead), "revision_ms": mine})
        times += mine
    return {
        "groups": per_group,
        "latency_ms": summary(times),
        **scores(tp, fp, fn),
        "collateral": fp,
        "misses": fn,
        "revision_ms": times,
    }


def ratio_to_lower_bound(run: dict, lb: dict) -> dict:
    store_ms = [r["ms"] for r in run["revisions"]]
    lb_ms = lb["revision_ms"]
    pairs = [(a, b) for a, b, r in zip(store_ms, lb_ms, run["revisions"]) if r["epoch"] is not None and b > 0]
    ratios = [a / b for a, b in pairs]
    return {
        "pairs": len(pairs),
        "median_ratio": round(pct(ratios, 0.5), 1) if ratios else None,
        "p95_ratio": round(pct(ratios, 0.95), 1) if ratios else None,
    }


def graph_fingerprint(status: dict) -> tuple[dict, set]:
    nodes = {
        n["key"]: (n["type"], n["state"], n["feedback_weight"], n["epoch"], n.get("confidence"), n["text"])
        for n in status["nodes"]
    }
    edges = {(e["type"], e["from"], e["to"], e.get("critical"), e.get("group")) for e in status["edges"]}
    return nodes, edges


def graph_diff(before: dict, after: dict) -> dict:
    (n1, e1), (n2, e2) = graph_fingerprint(before), graph_fingerprint(after)
    missing = sorted(set(n1) - set(n2))
    extra = sorted(set(n2) - set(n1))
    changed = sorted(k for k in set(n1) & set(n2) if n1[k] != n2[k])
    return {
        "identical": not (missing or extra or changed or e1 != e2),
        "nodes": len(n2),
        "edges": len(e2),
        "missing_nodes": missing[:10],
        "extra_nodes": extra[:10],
        "changed_nodes": [{"key": k, "before": n1[k][:5], "after": n2[k][:5]} for k in changed[:10]],
        "missing_edges": len(e1 - e2),
        "extra_edges": len(e2 - e1),
    }
