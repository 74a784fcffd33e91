"""MQuAKE-hard revision benchmark: multi-hop consequences of counterfactual edits.

    python -m bench.mquake [--scenario per_case|batch_1|batch_10|batch_100|all_edits]
                           [--limit N] [--judge structured|text] [--replicas 1|10]
                           [--root DIR] [--json] [--out FILE] [--quick] [--full]

Data: ``../shared/bench/out_mquake_hard_beliefs.json`` (relative to the repo
root; ``--data FILE`` or ``$FALSIFY_BENCH_DATA`` point elsewhere): 429 real
MQuAKE-CF cases (4-hop chains), 1,716 counterfactual edits, and the expected
invalidated conclusions of every scenario.

What is loaded (through the product's loader, ``Falsify.load``), per replica
one investigation file:

* one question node;
* every Evidence with ``initially_asserted`` (the 615 hops of the pre-edit
  chains and the 344 facts edits overwrite that lie on no chain), with
  subject/predicate/object = its Wikidata triple, so the structured judge can
  decide;
* the 429 pre-edit Conclusions, each with ``depends_on`` edges (critical, one
  ``group`` per chain: all four hops are needed together) to its hops.

What is NOT loaded, and why: the 770 ``edit_new`` Evidence nodes (the edits'
new facts) are not believed before an edit; the edits add them, through
``app.revise``. The 429 post-edit Conclusions rest on those new facts; the
product has no "not yet asserted" state, so loading them would either assert
the new facts up front (then the edits change nothing) or load conclusions
with dangling support. They are left out; the benchmark scores the pre-edit
conclusions, which is what the scenarios' expected sets describe.

Each edit goes through the real revision pipeline, the same code as
``python main.py revise FACT --triple S|P|O --key K`` (two-gate detection with
the structured judge, the cascade as cognee Tasks, the journalled write). A
pre-edit conclusion counts as invalidated when it is not alive afterwards
(invalidated, or forgotten from both stores). Per-case scenarios start every
case from the loaded graph: after a case, ``app.undo()`` reverts its
revisions one by one (checked: every conclusion and refuted evidence is
alive again and the new facts are gone; at the end the whole graph is
compared with the graph as loaded).

``--judge text`` measures detection with text only: for every edit, is the
evidence it contradicts among gate 1's candidates (``memory_core.judging.detect.gate1``,
limit 5) for the new fact's claim, at the threshold in use and over a sweep.

``--replicas 10`` loads the graph ten times (disjoint keys and subjects,
suffix ``#rN``, each replica its own investigation) and applies the same
revisions to replica 0; every other replica must stay untouched. ``--full``
runs everything ``make bench`` should run, including the x1/x10 scaling pair
(two subprocesses: one process serves one data root).

Every figure printed is measured in the run that prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import datetime as _dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
# The environment as it was before FALSIFY configured cognee in this process
# (configure() sets EMBEDDING_*, HOME, cache paths for its root): child runs
# start from this one, or they would take the offline embedder for a hosted one.
START_ENV = dict(os.environ)
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "out_mquake_hard_beliefs.json"
SCENARIOS = ("per_case", "batch_1", "batch_10", "batch_100", "all_edits")
QUICK_CASES = 20
QUICK_BATCHES = ("batch_10",)
SWEEP = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
RECALL_K = 5
SCALING_CASES = 50
QUESTION = "mquake-hard"
GRAPH_DIR = "cognee_system/databases/cognee_graph_ladybug"
BENCH_MAX_DB_SIZE = 1 << 40  # 1 TiB of address space for Ladybug's page accounting (see main())


def data_path(arg: Optional[str] = None) -> Path:
    return Path(arg or os.environ.get("FALSIFY_BENCH_DATA") or DEFAULT_DATA)


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# the data set, as investigation files


def suffix(replica: int) -> str:
    return f"#r{replica}" if replica else ""


def ev_key(node_id: str, replica: int = 0) -> str:
    """Investigation keys may not contain '|': ``ev:Q1|P2|Q3`` -> ``ev:Q1/P2/Q3``."""
    return node_id.replace("|", "/") + suffix(replica)


def concl_key(node_id: str, replica: int = 0) -> str:
    return node_id + suffix(replica)


def question_key(replica: int = 0) -> str:
    return QUESTION + suffix(replica)


@dataclass
class Group:
    """Edits applied together from the loaded graph, and what must die."""

    name: str
    apply: list[str]
    expected: set[str]  # pre-edit conclusion ids (dataset ids) expected not alive


class Dataset:
    def __init__(self, raw: dict):
        self.raw = raw
        self.nodes = {n["id"]: n for n in raw["nodes"]}
        self.evidence = [n for n in raw["nodes"] if n["kind"] == "Evidence" and n.get("initially_asserted")]
        self.conclusions = [n for n in raw["nodes"] if n["kind"] == "Conclusion" and n.get("phase") == "pre_edit"]
        pre = {n["id"] for n in self.conclusions}
        self.edges = [e for e in raw["edges"] if e["type"] == "depends_on" and e["from"] in pre]
        self.edits = {e["id"]: e for e in raw["edits"]}
        self.skipped = {
            "edit_new_evidence": sum(1 for n in raw["nodes"] if n["kind"] == "Evidence" and not n.get("initially_asserted")),
            "post_edit_conclusions": sum(1 for n in raw["nodes"] if n["kind"] == "Conclusion" and n.get("phase") != "pre_edit"),
            "post_edit_edges": len(raw["edges"]) - len(self.edges),
        }
        asserted = {n["id"] for n in self.evidence}
        bad = [e for e in self.edges if e["to"] not in asserted]
        if bad:
            raise ValueError(f"a pre-edit conclusion rests on evidence that is not initially asserted: {bad[0]}")

    @classmethod
    def read(cls, path: Path) -> "Dataset":
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    @property
    def node_count(self) -> int:
        return 1 + len(self.evidence) + len(self.conclusions)

    def investigation(self, replica: int = 0) -> dict:
        """The investigation file of one replica (the product's own format)."""
        sfx = suffix(replica)
        return {
            "question": {"key": question_key(replica),
                         "text": f"MQuAKE-hard: answers of 429 four-hop questions{' (replica ' + str(replica) + ')' if replica else ''}"},
            "evidence": [{"key": ev_key(n["id"], replica), "claim": n["claim"],
                          "subject": n["triple"][0] + sfx, "predicate": n["triple"][1], "object": n["triple"][2],
                          "source_id": f"mquake:{n['origin']}"} for n in self.evidence],
            "conclusions": [{"key": concl_key(n["id"], replica), "statement": n["claim"]} for n in self.conclusions],
            "edges": [{"type": "depends_on", "from": concl_key(e["from"], replica), "to": ev_key(e["to"], replica),
                       "critical": True, "group": "chain"} for e in self.edges],
        }

    def fact(self, edit_id: str, replica: int = 0) -> tuple[str, str, str]:
        """(claim, 'S|P|O', key) of an edit's new fact."""
        new = self.edits[edit_id]["new_fact"]
        s, p, o = new["triple"]
        return new["claim"], f"{s}{suffix(replica)}|{p}|{o}", ev_key(new["id"], replica)

    def groups(self, scenario: str, limit: Optional[int] = None) -> list[Group]:
        sc = self.raw["scenarios"]
        if scenario == "per_case":
            cases = sc["per_case"][:limit] if limit else sc["per_case"]
            return [Group(f"case {c['case_id']}", list(c["apply"]), set(c["expected_invalidated"])) for c in cases]
        if scenario == "all_edits":
            apply = [e["id"] for e in self.raw["edits"]]
            if limit:  # a prefix: expected set from the dataset's own rule
                return [Group("all_edits", apply[:limit], self.expected_for(apply[:limit]))]
            return [Group("all_edits", apply, set(sc["all_edits"]["expected_invalidated_pre_edit"]))]
        for batch in sc["batches"]:
            if batch["name"] == scenario:
                return [Group(scenario, list(batch["apply"]), set(batch["expected_invalidated"]))]
        raise SystemExit(f"unknown scenario {scenario!r}")

    def expected_for(self, apply: list[str]) -> set[str]:
        """The dataset's rule (for a prefix of all_edits): a conclusion dies iff
        a hop has the (subject, relation) of an applied edit and another object."""
        keys = {}
        for eid in apply:
            s, r, o = self.edits[eid]["new_fact"]["triple"]
            keys.setdefault((s, r), set()).add(o)
        dead = set()
        for e in self.edges:
            s, r, o = self.nodes[e["to"]]["triple"]
            if (s, r) in keys and o not in keys[(s, r)]:
                dead.add(e["from"])
        return dead


# ---------------------------------------------------------------------------
# small statistics


def pct(values: list[float], q: float) -> Optional[float]:
    if not values:
        return None
    values = sorted(values)
    if len(values) == 1:
        return values[0]
    pos = (len(values) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(pct(values, 0.5), 3), "p95": round(pct(values, 0.95), 3),
            "mean": round(statistics.fmean(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def scores(tp: int, fp: int, fn: int) -> dict:
    return {"precision": round(tp / (tp + fp), 6) if tp + fp else 1.0,
            "recall": round(tp / (tp + fn), 6) if tp + fn else 1.0}


def machine() -> dict:
    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        from importlib.metadata import version
        cognee_version = version("cognee")
    except Exception:  # noqa: BLE001
        cognee_version = None
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    commit = None
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "memory_core"], cwd=REPO, capture_output=True, text=True)
        if head.returncode == 0:
            commit = head.stdout.strip() + (" (memory_core has uncommitted changes)" if dirty.stdout.strip() else "")
    except OSError:
        pass
    return {"commit": commit, "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "platform": platform.platform(), "python": platform.python_version(), "cpu_count": os.cpu_count(),
            "cpu_model": model, "memory_gb": mem, "cognee": cognee_version,
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def disk_usage(root: Path) -> dict:
    """Bytes on disk under the data root, by top-level part (graph, vectors, ...)."""
    sizes: dict[str, int] = {}
    for path in Path(root).rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(root).parts
                part = "/".join(rel[:3]) if rel[0] == "cognee_system" else rel[0]
                sizes[part] = sizes.get(part, 0) + path.stat().st_blocks * 512
        except OSError:
            continue
    return {"total": sum(sizes.values()), **dict(sorted(sizes.items(), key=lambda kv: -kv[1])[:6])}


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: KiB


# ---------------------------------------------------------------------------
# the real product


class StepClock:
    """``app.hook``: the writer calls it after each step of the write path."""

    def __init__(self):
        self.events: list[tuple[str, float]] = []

    def __call__(self, name: str) -> None:
        self.events.append((name, time.perf_counter()))

    def reset(self) -> None:
        self.events = []


def write_steps(start: float, end: float, events: list[tuple[str, float]]) -> dict:
    """Milliseconds per write-path step: 'before_journal' runs from the call to the
    intent being journalled (validation, detection, subgraph, rules, intent); each
    writer step until its hook; 'commit' from the last step to the return."""
    result, last = {}, start
    for i, (name, t) in enumerate(events):
        result["before_journal" if i == 0 else name] = round((t - last) * 1000, 3)
        last = t
    result["commit_and_return"] = round((end - last) * 1000, 3)
    return result


class Runner:
    def __init__(self, app, data: Dataset, replicas: int):
        from memory_core.store.models import node_id

        self.app = app
        self.data = data
        self.replicas = replicas
        self.clock = StepClock()
        self.disk: list[dict] = []
        app.hook = self.clock
        self.conclusion_ids = {node_id("conclusion", concl_key(n["id"], r)): (n["id"], r)
                               for r in range(replicas) for n in data.conclusions}
        self.node_id = node_id

    async def load(self) -> dict:
        loads = []
        for r in range(self.replicas):
            text = json.dumps(self.data.investigation(r))
            cpu = time.process_time()
            start = time.perf_counter()
            result = await self.app.load(text, what=f"mquake replica {r}")
            seconds = time.perf_counter() - start
            cpu = time.process_time() - cpu
            if result["invalidated"] or result["notes"]:
                raise RuntimeError(f"unexpected load result for replica {r}: {result['invalidated'][:5]} {result['notes'][:5]}")
            loads.append({"replica": r, "nodes": len(result["added"]), "edges": len(result["edges_added"]),
                          "seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3)})
            log(f"  loaded replica {r}: {len(result['added'])} nodes, {len(result['edges_added'])} edges in {seconds:.1f} s")
        nodes = sum(x["nodes"] for x in loads)
        seconds = sum(x["seconds"] for x in loads)
        return {"replicas": loads, "nodes": nodes, "edges": sum(x["edges"] for x in loads), "seconds": round(seconds, 3),
                "cpu_seconds": round(sum(x["cpu_seconds"] for x in loads), 3),
                "nodes_per_s": round(nodes / seconds, 1)}

    async def dead_conclusions(self) -> set[tuple[str, int]]:
        """(conclusion id, replica) of every pre-edit conclusion not alive in the store
        (invalidated, or forgotten: gone from the graph)."""
        from memory_core.store.belief_store import state_of

        found = await self.app.store.raw_nodes(self.conclusion_ids)
        dead = set()
        for i, who in self.conclusion_ids.items():
            props = found.get(i)
            if props is None or state_of(props) != "alive":
                dead.add(who)
        return dead

    async def revise(self, edit_id: str) -> dict:
        claim, triple, key = self.data.fact(edit_id)
        self.clock.reset()
        cpu = time.process_time()
        start = time.perf_counter()
        res = await self.app.revise(fact=claim, triple=triple, key=key)
        end = time.perf_counter()
        cpu = time.process_time() - cpu
        return {"edit": edit_id, "ms": round((end - start) * 1000, 3), "cpu_ms": round(cpu * 1000, 3),
                "epoch": res.get("epoch"),
                "already_applied": bool(res.get("already_applied")), "judge": res.get("judge"),
                "candidates": len(res.get("candidates", [])), "refuted": res.get("refuted", []),
                "invalidated": res.get("invalidated", []), "forgotten": res.get("forgotten", []),
                "note": res.get("note"), "timings": res.get("timings", {}),
                "steps": write_steps(start, end, self.clock.events)}

    async def undo(self, count: int) -> list[float]:
        times = []
        for _ in range(count):
            start = time.perf_counter()
            res = await self.app.undo()
            times.append(round((time.perf_counter() - start) * 1000, 3))
            if res.get("undone") is None:
                raise RuntimeError(f"undo had nothing to revert: {res}")
        return times

    async def restored(self, revisions: list[dict]) -> list[str]:
        """Problems left after undoing a group (empty list: back to the loaded graph)."""
        from memory_core.store.belief_store import state_of

        problems = [f"{c}{suffix(r)} not alive after undo" for c, r in sorted(await self.dead_conclusions())]
        refuted = {k for rev in revisions for k in rev["refuted"]}
        new = {rev_key for rev_key in (self.data.fact(rev["edit"])[2] for rev in revisions if rev["epoch"] is not None)}
        found = await self.app.store.find_keys(sorted(refuted | new))
        for key in sorted(refuted):
            if key not in found or state_of(found[key]) != "alive":
                problems.append(f"{key} not alive after undo")
        problems += [f"new fact {key} still stored after undo" for key in sorted(new) if key in found]
        return problems

    async def run(self, groups: list[Group], undo: bool = True, progress: int = 25) -> dict:
        revisions, undo_ms, per_group, restore_problems = [], [], [], []
        tp = fp = fn = 0
        started = time.perf_counter()
        for gi, group in enumerate(groups):
            mine = [await self.revise(e) for e in group.apply]
            dead = await self.dead_conclusions()
            observed = {c for c, r in dead if r == 0}
            other_replicas = sorted(f"{c}{suffix(r)}" for c, r in dead if r != 0)
            reported = {k for rev in mine for k in rev["invalidated"]}
            collateral = sorted(observed - group.expected)
            missed = sorted(group.expected - observed)
            refuted_wrong = []
            for rev in mine:
                edit = self.data.edits[rev["edit"]]
                if not rev["already_applied"] and rev["refuted"] != [ev_key(edit["contradicts"])]:
                    refuted_wrong.append({"edit": rev["edit"], "refuted": rev["refuted"], "expected": [ev_key(edit["contradicts"])]})
            tp += len(observed & group.expected)
            fp += len(collateral) + len(other_replicas)
            fn += len(missed)
            entry = {"group": group.name, "apply": group.apply, "expected": sorted(group.expected),
                     "observed": sorted(observed), "collateral": collateral, "missed": missed,
                     "other_replicas_dead": other_replicas, "log_disagrees": sorted(reported ^ observed),
                     "refuted_wrong": refuted_wrong, "revision_ms": [r["ms"] for r in mine],
                     "already_applied": sum(r["already_applied"] for r in mine)}
            if undo:
                undone = await self.undo(sum(1 for r in mine if r["epoch"] is not None))
                undo_ms += undone
                problems = await self.restored(mine)
                entry["restore_problems"] = problems
                restore_problems += [f"{group.name}: {p}" for p in problems]
            per_group.append(entry)
            revisions += mine
            if collateral or missed or other_replicas:
                log(f"  !! {group.name}: collateral {collateral + other_replicas} missed {missed}")
            if progress and (gi + 1) % progress == 0:
                ms = [r["ms"] for r in revisions]
                disk = disk_usage(self.app.paths.root)
                self.disk.append({"groups": gi + 1, "revisions": len(revisions), **disk})
                log(f"  {gi + 1}/{len(groups)} groups, {len(revisions)} revisions, p50 {pct(ms, 0.5):.0f} ms, "
                    f"{time.perf_counter() - started:.0f} s; root {disk['total'] / 1e6:.1f} MB "
                    f"(graph {disk.get(GRAPH_DIR, 0) / 1e6:.1f} MB)")
        return {"groups": per_group, "revisions": revisions, "undo_ms": undo_ms, "tp": tp, "fp": fp, "fn": fn,
                "restore_problems": restore_problems, "seconds": round(time.perf_counter() - started, 1)}


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
        "groups": len(groups), "revisions": len(run["revisions"]), "recorded": len(revs),
        "already_applied": sum(r["already_applied"] for r in run["revisions"]),
        **scores(run["tp"], run["fp"], run["fn"]),
        "true_positives": run["tp"], "collateral": run["fp"], "misses": run["fn"],
        "groups_wrong": [g["group"] for g in groups if g["collateral"] or g["missed"] or g["other_replicas_dead"]],
        "log_disagreements": sum(1 for g in groups if g["log_disagrees"]),
        "refuted_wrong": sum(len(g["refuted_wrong"]) for g in groups),
        "restore_problems": run["restore_problems"][:20], "restore_problem_count": len(run["restore_problems"]),
        "latency_ms": summary(ms), "cpu_ms": summary([r["cpu_ms"] for r in revs]),
        "first_revision_ms": ms[0] if ms else None,
        "latency_first_half_p50": round(pct(ms[: len(ms) // 2], 0.5), 3) if len(ms) > 1 else None,
        "latency_second_half_p50": round(pct(ms[len(ms) // 2:], 0.5), 3) if len(ms) > 1 else None,
        "undo_ms": summary(run["undo_ms"]),
        "task_ms_p50": {k: round(pct(v, 0.5), 3) for k, v in tasks.items()},
        "outside_tasks_ms_p50": round(pct(outside, 0.5), 3) if outside else None,
        "write_steps_ms_p50": {k: round(pct(v, 0.5), 3) for k, v in steps.items()},
        "seconds": run["seconds"],
    }


# ---------------------------------------------------------------------------
# the lower bound: the pure core, no stores


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
    base_edges = [Edge(DEPENDS_ON, concl_key(e["from"]), ev_key(e["to"]), critical=True, group="chain") for e in data.edges]
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
            verdicts = [(k, "contradicts", 0.9) for k in sp.get(sp_key(s, p), [])
                        if view.nodes[k].state == ALIVE and normalise_term(objects[k][2]) != normalise_term(o)]
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
    return {"groups": per_group, "latency_ms": summary(times), **scores(tp, fp, fn),
            "collateral": fp, "misses": fn, "revision_ms": times}


def ratio_to_lower_bound(run: dict, lb: dict) -> dict:
    store_ms = [r["ms"] for r in run["revisions"]]
    lb_ms = lb["revision_ms"]
    pairs = [(a, b) for a, b, r in zip(store_ms, lb_ms, run["revisions"]) if r["epoch"] is not None and b > 0]
    ratios = [a / b for a, b in pairs]
    return {"pairs": len(pairs), "median_ratio": round(pct(ratios, 0.5), 1) if ratios else None,
            "p95_ratio": round(pct(ratios, 0.95), 1) if ratios else None}


# ---------------------------------------------------------------------------
# detection with text only (gate 1)


async def detection(app, data: Dataset, edit_ids: list[str], threshold: float) -> dict:
    """For every edit: is the evidence it contradicts among gate 1's candidates
    for the new fact's claim (limit 5), at ``threshold`` and over a sweep?"""
    from memory_core.judging.detect import gate1
    from memory_core.store.models import collection

    name = collection("evidence")
    found_at = {t: 0 for t in SWEEP}
    cands_at = {t: 0 for t in SWEEP}
    found_gate1, cands_gate1, ranks, distances, search_ms, misses = 0, 0, [], [], [], []
    sweep = sorted(set(SWEEP) | {threshold})
    found_at = {t: 0 for t in sweep}
    cands_at = {t: 0 for t in sweep}
    for eid in edit_ids:
        edit = data.edits[eid]
        claim = edit["new_fact"]["claim"]
        target = ev_key(edit["contradicts"])
        start = time.perf_counter()
        cands = await gate1(app.store, claim, threshold, limit=RECALL_K, exclude=set())
        search_ms.append((time.perf_counter() - start) * 1000)
        cands_gate1 += len(cands)
        hit = any(c.key == target for c in cands)
        found_gate1 += hit
        # the sweep: the same search gate 1 makes (limit 5), filtered at each threshold
        hits = await app.store.search(name, claim, RECALL_K)
        keys = await app.store.raw_nodes(str(h.id) for h in hits)
        top = [(keys.get(str(h.id), {}).get("key"), float(h.score)) for h in hits]
        # where the contradicted evidence ranks when gate 1 misses it (up to 50)
        deep = await app.store.search(name, claim, 50)
        deep_keys = await app.store.raw_nodes(str(h.id) for h in deep)
        ordered = [(deep_keys.get(str(h.id), {}).get("key"), float(h.score)) for h in deep]
        rank = next((i + 1 for i, (k, _) in enumerate(ordered) if k == target), None)
        ranks.append(rank)
        distance = next((d for k, d in ordered if k == target), None)
        if distance is not None:
            distances.append(distance)
        for t in sweep:
            passing = [k for k, d in top if d < t]
            cands_at[t] += len(passing)
            found_at[t] += target in passing
        if not hit:
            misses.append({"edit": eid, "claim": claim, "contradicts": target,
                           "contradicted_claim": data.nodes[edit["contradicts"]]["claim"], "rank": rank,
                           "distance": None if distance is None else round(distance, 4)})
    n = len(edit_ids)
    return {
        "edits": n, "threshold": threshold, "limit": RECALL_K,
        "recall_at_5": round(found_gate1 / n, 6) if n else None, "found": found_gate1,
        "mean_candidates": round(cands_gate1 / n, 3) if n else None,
        "sweep": [{"threshold": t, "recall_at_5": round(found_at[t] / n, 6), "mean_candidates": round(cands_at[t] / n, 3)}
                  for t in sweep] if n else [],
        "rank_of_contradicted": {"1": sum(1 for r in ranks if r == 1), "2-5": sum(1 for r in ranks if r and 2 <= r <= 5),
                                 "6-50": sum(1 for r in ranks if r and r > 5), "beyond_50": sum(1 for r in ranks if r is None)},
        "contradicted_distance": summary(distances),
        "gate1_ms": summary(search_ms),
        "misses": misses[:25], "miss_count": len(misses),
    }


# ---------------------------------------------------------------------------
# whole-graph comparison (undo must give back the loaded graph)


def graph_fingerprint(status: dict) -> tuple[dict, set]:
    nodes = {n["key"]: (n["type"], n["state"], n["feedback_weight"], n["epoch"], n.get("confidence"), n["text"])
             for n in status["nodes"]}
    edges = {(e["type"], e["from"], e["to"], e.get("critical"), e.get("group")) for e in status["edges"]}
    return nodes, edges


def graph_diff(before: dict, after: dict) -> dict:
    (n1, e1), (n2, e2) = graph_fingerprint(before), graph_fingerprint(after)
    missing = sorted(set(n1) - set(n2))
    extra = sorted(set(n2) - set(n1))
    changed = sorted(k for k in set(n1) & set(n2) if n1[k] != n2[k])
    return {"identical": not (missing or extra or changed or e1 != e2), "nodes": len(n2),
            "edges": len(e2), "missing_nodes": missing[:10], "extra_nodes": extra[:10],
            "changed_nodes": [{"key": k, "before": n1[k][:5], "after": n2[k][:5]} for k in changed[:10]],
            "missing_edges": len(e1 - e2), "extra_edges": len(e2 - e1)}


# ---------------------------------------------------------------------------
# one run (one process, one data root)


@contextlib.contextmanager
def stdout_to_stderr(active: bool):
    """Keep stdout for our JSON only: anything else (cognee's migrations, native
    prints) goes to stderr while the run lasts."""
    if not active:
        yield sys.stdout
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    real = os.fdopen(os.dup(saved), "w")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield real
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def save(result: dict, out: Optional[str]) -> None:
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=1))


async def run_bench(args) -> dict:
    from memory_core.api import Falsify

    data = Dataset.read(data_path(args.data))
    scenarios = args.scenarios
    result = {"machine": machine(), "data": str(data_path(args.data)), "replicas": args.replicas,
              "kuzu_max_db_size": int(os.environ.get("KUZU_MAX_DB_SIZE", 0)) or None,
              "judge": args.judge, "scenarios": {}, "loaded": {
                  "nodes_per_replica": data.node_count, "evidence": len(data.evidence),
                  "conclusions": len(data.conclusions), "depends_on_edges": len(data.edges),
                  "not_loaded": data.skipped}}
    root = Path(args.root)
    start = time.perf_counter()
    app = await Falsify.open(root, purpose="bench.mquake")
    try:
        result["open_ms"] = round(app.opened_ms, 1)
        result["warm_up_ms"] = round(await app.warm_up(), 1)
        runner = Runner(app, data, args.replicas)
        log(f"loading {args.replicas} x {data.node_count} nodes into {root}")
        result["load"] = await runner.load()
        result["disk_after_load"] = disk_usage(root)
        initial = await app.status()
        from memory_core.judging.detect import gate1_threshold
        from memory_core.store.embedder import fingerprint

        result["embedder"] = fingerprint()
        threshold = gate1_threshold(fingerprint()["provider"])
        result["gate1_threshold"] = threshold
        if args.judge == "text" or args.detect:
            edit_ids = []
            for name in scenarios:
                for g in data.groups(name, limit_for(name, args.limit)):
                    edit_ids += [e for e in g.apply if e not in edit_ids]
            log(f"detection (text only, gate 1, limit {RECALL_K}) over {len(edit_ids)} edits")
            result["detection"] = await detection(app, data, edit_ids, threshold)
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
                if args.replicas == 1:
                    lb = lower_bound(data, groups)
                    report["lower_bound"] = {k: v for k, v in lb.items() if k not in ("groups", "revision_ms")}
                    report["lower_bound"]["agrees_with_store"] = all(
                        a["observed"] == b["observed"] for a, b in zip(run["groups"], lb["groups"]))
                    report["vs_lower_bound"] = ratio_to_lower_bound(run, lb)
                result["scenarios"][name] = report
                result["scenarios"][name]["detail"] = {
                    "groups": [{k: g[k] for k in ("group", "expected", "observed", "collateral", "missed",
                                                  "other_replicas_dead", "log_disagrees", "refuted_wrong",
                                                  "revision_ms", "already_applied", "restore_problems") if k in g}
                               for g in run["groups"]]}
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


async def components(app, data: Dataset, threshold: float, samples: int = 15) -> dict:
    """Milliseconds (p50 over ``samples``) of the operations one revision is made of,
    each timed alone on the loaded graph, to see which follow the graph's size.
    The only writes are a scratch evidence node added and deleted again (checked)."""
    import io

    from memory_core.judging.detect import DEFAULT_LIMIT, detect
    from memory_core.core.keys import sp_key
    from memory_core.store.models import collection, node_id
    from memory_core.tasks.revision_tasks import noop_tasks, run_pipeline
    from memory_core.store.writer import build_point

    edits = [data.edits[e] for c in data.raw["scenarios"]["per_case"][:samples] for e in c["apply"][:1]]
    times: dict[str, list[float]] = {}

    async def timed(name, coro_or_fn, *args):
        start = time.perf_counter()
        value = coro_or_fn(*args)
        if asyncio.iscoroutine(value):
            value = await value
        times.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        return value

    async def noop():
        with contextlib.redirect_stdout(io.StringIO()):
            await run_pipeline(noop_tasks(), [{}], "falsify_bench_noop")

    from memory_core.store.belief_store import state_of

    for i, edit in enumerate(edits):
        claim = edit["new_fact"]["claim"]
        s, p, o = edit["new_fact"]["triple"]
        target = node_id("evidence", ev_key(edit["contradicts"]))
        await timed("journal_epoch (reads the log from its end)", app.journal.epoch)
        await timed("journal_meta_epoch (falsify.json only)", lambda: app.journal.meta().get("epoch"))
        await timed("pipeline_runner_noop (run_custom_pipeline, one no-op task)", noop)
        await timed("vector_search_limit8", app.store.search, collection("evidence"), claim, DEFAULT_LIMIT)
        await timed("nodes_by_sp", app.store.nodes_by_sp, sp_key(s, p))
        await timed("detect (gate 1 + sp lookup + structured judge)", detect, app.store, claim, (s, p, o),
                    threshold, DEFAULT_LIMIT, {"none"}, False)
        await timed("affected_view (one contradicted hop)", app.store.affected_view, [target])
        props = (await app.store.raw_nodes([target]))[target]
        await timed("raw_nodes_1", app.store.raw_nodes, [target])
        await timed("set_states_1 (same value)", app.store.set_states,
                    {target: (state_of(props), int(props.get("truth_epoch") or 0))})
        await timed("set_weights_1 (same value)", app.store.set_weights, {target: float(props.get("feedback_weight", 0.5))})
        scratch = f"bench:scratch:{i}"
        sid = node_id("evidence", scratch)
        point = build_point("evidence", sid, {"key": scratch, "claim": claim, "question_key": question_key(0)})
        await timed("add_points_1 (add_data_points: graph + embed + vector upsert)", app.store.add_points, [point])
        await timed("delete_1 (graph + vector rows)", app.store.delete, {sid: "evidence"})
    left = await app.store.find_keys([f"bench:scratch:{i}" for i in range(len(edits))])
    vectors = await app.store.vector_ids(collection("evidence"))
    stray = [k for k in (node_id("evidence", f"bench:scratch:{i}") for i in range(len(edits))) if k in vectors]
    result = {name: round(pct(v, 0.5), 3) for name, v in times.items()}
    result["samples"] = len(edits)
    result["scratch_left_behind"] = len(left) + len(stray)
    return result


def journal_cost(app) -> dict:
    """What reading the revision log costs now (``revise`` calls journal.epoch() once
    per revision; it reads the log's last line, from the end of the file)."""
    size = app.journal.log_path.stat().st_size if app.journal.log_path.exists() else 0
    times = []
    for _ in range(5):
        start = time.perf_counter()
        app.journal.epoch()
        times.append((time.perf_counter() - start) * 1000)
    return {"log_bytes": size, "log_entries": sum(1 for _ in app.journal.entries()),
            "epoch_read_ms_p50": round(pct(times, 0.5), 3)}


# ---------------------------------------------------------------------------
# scaling: the same revisions on x1 and x10 graphs (one process per root)


def run_child(args, replicas: int, root: Path) -> dict:
    cmd = [sys.executable, "-m", "bench.mquake", "--scenario", "per_case", "--limit", str(args.scaling_cases),
           "--replicas", str(replicas), "--root", str(root), "--json", "--keep-revisions", "--no-detect",
           "--progress", "0", "--components"]
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
    by_edit = {r: {rev["edit"]: rev for rev in runs[r]["scenarios"]["per_case"]["detail"]["revisions"]} for r in runs}
    ratios, x1, x10 = [], [], []
    for edit, rev in by_edit[1].items():
        other = by_edit[10].get(edit)
        if other and rev["epoch"] is not None and other["epoch"] is not None:
            ratios.append(other["ms"] / rev["ms"])
            x1.append(rev["ms"])
            x10.append(other["ms"])
    out = {"cases": args.scaling_cases, "pairs": len(ratios),
           "median_ratio_x10_over_x1": round(pct(ratios, 0.5), 3) if ratios else None,
           "p50_ratio_x10_over_x1": round(pct(x10, 0.5) / pct(x1, 0.5), 3) if ratios else None}
    for r, run in runs.items():
        sc = run["scenarios"]["per_case"]
        out[f"x{r}"] = {"nodes": run["load"]["nodes"], "load_nodes_per_s": run["load"]["nodes_per_s"],
                        "latency_ms": sc["latency_ms"], "precision": sc["precision"], "recall": sc["recall"],
                        "collateral": sc["collateral"], "misses": sc["misses"],
                        "task_ms_p50": sc["task_ms_p50"], "outside_tasks_ms_p50": sc["outside_tasks_ms_p50"],
                        "journal": run["journal"], "peak_rss_mb": run["peak_rss_mb"],
                        "components": run.get("components"), "undo_ms": sc["undo_ms"],
                        "after_undo_identical": run["after_undo"]["identical"]}
    return out


# ---------------------------------------------------------------------------
# output


def fmt(value, unit="") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.1f}{unit}" if value >= 10 else f"{value:.2f}{unit}"
    return f"{value}{unit}"


def human(result: dict) -> str:
    m = result["machine"]
    lines = [f"FALSIFY MQuAKE-hard revision benchmark ({m['date']})",
             f"commit: {m.get('commit')}",
             f"machine: {m['platform']}, {m['cpu_count']} CPU ({m['cpu_model']}), Python {m['python']}, cognee {m['cognee']}",
             f"data: {result['data']}",
             f"Ladybug max_db_size (KUZU_MAX_DB_SIZE): {result.get('kuzu_max_db_size')} (cognee's default 34359738368; see RESULTS.md)",
             f"load average (1/5/15 min) at start {m['load_average_at_start']}, at end {m.get('load_average_at_end')}"]
    ld = result.get("load")
    if ld:
        lines.append(f"loaded: {ld['nodes']:,} nodes, {ld['edges']:,} edges in {ld['seconds']:.1f} s "
                     f"({ld['nodes_per_s']:,.0f} nodes/s, process CPU {ld.get('cpu_seconds', 0):.1f} s; replicas {result['replicas']}); "
                     f"not loaded per replica: {result['loaded']['not_loaded']}")
    for name, sc in result.get("scenarios", {}).items():
        lat = sc["latency_ms"]
        lines.append(f"\n[{name}] {sc['groups']} group(s), {sc['revisions']} revisions ({sc['recorded']} recorded, "
                     f"{sc['already_applied']} already applied)")
        lines.append(f"  precision {sc['precision']:.2%}  recall {sc['recall']:.2%}  collateral {sc['collateral']}  "
                     f"misses {sc['misses']}  (true positives {sc['true_positives']})")
        if sc["groups_wrong"]:
            lines.append(f"  WRONG groups: {', '.join(sc['groups_wrong'][:10])}")
        lines.append(f"  log/store disagreements {sc['log_disagreements']}, wrong refutations {sc['refuted_wrong']}, "
                     f"undo restore problems {sc['restore_problem_count']}")
        lines.append(f"  revision latency p50 {fmt(lat.get('p50'), ' ms')}  p95 {fmt(lat.get('p95'), ' ms')}  "
                     f"(first {fmt(sc['first_revision_ms'], ' ms')}; 1st half p50 {fmt(sc['latency_first_half_p50'], ' ms')}, "
                     f"2nd half {fmt(sc['latency_second_half_p50'], ' ms')}); undo p50 {fmt(sc['undo_ms'].get('p50'), ' ms')}")
        lines.append(f"  process CPU per revision p50 {fmt(sc['cpu_ms'].get('p50'), ' ms')} (all threads; wall time "
                     "also waits on I/O and on other processes)")
        lines.append("  per task p50 (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in sc["task_ms_p50"].items())
                     + f"; outside tasks {fmt(sc['outside_tasks_ms_p50'])}")
        lines.append("  write path p50 (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in sc["write_steps_ms_p50"].items()))
        if "lower_bound" in sc:
            lb = sc["lower_bound"]
            lines.append(f"  lower bound (pure core, no stores): p50 {lb['latency_ms'].get('p50')} ms, precision "
                         f"{lb['precision']:.2%} recall {lb['recall']:.2%}, same sets as the store: {lb['agrees_with_store']}; "
                         f"FALSIFY / lower bound median {fmt(sc['vs_lower_bound']['median_ratio'], 'x')}")
    if "after_undo" in result:
        d = result["after_undo"]
        lines.append(f"\ngraph after every undo identical to the loaded graph: {d['identical']} "
                     f"({d['nodes']} nodes, {d['edges']} edges)")
    det = result.get("detection")
    if det:
        lines.append(f"\n[detection, text only] {det['edits']} edits, gate 1 limit {det['limit']}, threshold "
                     f"{det['threshold']:g}: recall@5 {det['recall_at_5']:.2%}, mean candidates {det['mean_candidates']:.2f}, "
                     f"gate-1 p50 {fmt(det['gate1_ms'].get('p50'), ' ms')}")
        lines.append("  sweep: " + "; ".join(f"{s['threshold']:g}: {s['recall_at_5']:.2%} / {s['mean_candidates']:.2f}"
                                          for s in det["sweep"]))
        lines.append(f"  rank of the contradicted evidence: {det['rank_of_contradicted']}; its distance "
                     f"{det['contradicted_distance']}")
    sc = result.get("scaling")
    if sc and "error" in sc:
        lines.append(f"\n[scaling] FAILED: {sc['error']}")
        sc = None
    if sc:
        lines.append(f"\n[scaling] same {sc['pairs']} revisions ({sc['cases']} per_case cases) on x1 "
                     f"({sc['x1']['nodes']:,} nodes) and x10 ({sc['x10']['nodes']:,} nodes): median per-revision "
                     f"ratio x10/x1 {fmt(sc['median_ratio_x10_over_x1'])}, p50 ratio {fmt(sc['p50_ratio_x10_over_x1'])}")
        for r in ("x1", "x10"):
            s = sc[r]
            lines.append(f"  {r}: p50 {s['latency_ms']['p50']} ms, p95 {s['latency_ms']['p95']} ms, tasks {s['task_ms_p50']}, "
                         f"outside tasks {s['outside_tasks_ms_p50']} ms, journal {s['journal']}, precision "
                         f"{s['precision']:.2%} recall {s['recall']:.2%}, load {s['load_nodes_per_s']} nodes/s, "
                         f"peak RSS {s['peak_rss_mb']} MB")
    if sc and sc["x1"].get("components") and sc["x10"].get("components"):
        lines.append("  operations timed alone, p50 ms (x1 -> x10, ratio):")
        c1, c10 = sc["x1"]["components"], sc["x10"]["components"]
        for name in c1:
            if name in ("samples", "scratch_left_behind"):
                continue
            ratio = c10[name] / c1[name] if c1[name] else float("nan")
            lines.append(f"    {name}: {c1[name]:.2f} -> {c10[name]:.2f} ({ratio:.2f}x)")
    if result.get("components"):
        lines.append("\noperations of a revision, each timed alone on the loaded graph (p50 ms):")
        for name, value in result["components"].items():
            lines.append(f"  {name}: {value}")
    if "journal" in result:
        lines.append(f"\nrevision log at the end: {result['journal']}")
    lines.append(f"peak RSS {result.get('peak_rss_mb')} MB; open {result.get('open_ms')} ms, warm-up "
                 f"{result.get('warm_up_ms')} ms; wall {result.get('seconds')} s")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.mquake", description=__doc__.split("\n\n")[0])
    p.add_argument("--scenario", choices=SCENARIOS, action="append",
                   help="scenario to run (repeatable; default per_case)")
    p.add_argument("--limit", type=int, help="first N cases of per_case (or first N edits of all_edits)")
    p.add_argument("--judge", choices=("structured", "text"), default="structured",
                   help="structured: revise with --triple (the offline judge); text: gate-1 detection study only")
    p.add_argument("--replicas", type=int, choices=(1, 10), default=1, help="load the graph x1 or x10 (disjoint keys)")
    p.add_argument("--root", help="data root (must be new or empty; default: a temporary directory, removed after)")
    p.add_argument("--keep", action="store_true", help="keep the temporary root")
    p.add_argument("--data", help=f"benchmark file (default: $FALSIFY_BENCH_DATA or {DEFAULT_DATA})")
    p.add_argument("--json", action="store_true", help="print the full result as JSON on stdout")
    p.add_argument("--out", help="also write the full result as JSON to this file")
    p.add_argument("--quick", action="store_true",
                   help=f"correctness check: first {QUICK_CASES} per_case cases + {', '.join(QUICK_BATCHES)}, detection on them")
    p.add_argument("--full", action="store_true",
                   help="everything: per_case (all), batch_1/10/100, detection over all edits, x1/x10 scaling")
    p.add_argument("--detect", action="store_true", help="with --judge structured: also run the detection study")
    p.add_argument("--no-detect", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--scaling", action="store_true",
                   help="run only the x1/x10 scaling pair (two subprocesses; --full includes it)")
    p.add_argument("--scaling-cases", type=int, default=SCALING_CASES, help="per_case cases in each scaling run")
    p.add_argument("--components", action="store_true",
                   help="time each operation a revision is made of, alone, on the loaded graph")
    p.add_argument("--keep-revisions", action="store_true", help="include every revision's record in the JSON")
    p.add_argument("--profile", help="write a cProfile of the revision loop (cumulative, top 45) to this file")
    p.add_argument("--render", metavar="FILE", help="print the summary of a saved --out/--json result and exit")
    p.add_argument("--progress", type=int, default=25, help="progress line every N groups on stderr (0: none)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
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
                result = {"machine": machine(), "data": str(path), "scenarios": {},
                          "kuzu_max_db_size": int(os.environ["KUZU_MAX_DB_SIZE"])}
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
