"""Running MQuAKE-hard through the real product: loading, revising, undoing,
what is dead in the store; the detection study; per-operation timings."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Optional

from bench.common import disk_usage, log, pct, summary
from bench.mquake.dataset import Dataset, Group, concl_key, ev_key, question_key, suffix

SWEEP = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
RECALL_K = 5
GRAPH_DIR = "cognee_system/databases/cognee_graph_ladybug"


@contextlib.contextmanager
def embedding_memo(app):
    """While active, the stores' vector adapter embeds each distinct text once and returns
    the same model's vector for it again (``memory_core.store.embedder.reuse_vectors``);
    yields counts ``{"texts_embedded", "texts_reused"}``, filled in at the end. For loading
    the x10 graph's identical replicas."""
    from memory_core.store.embedder import reuse_vectors

    stats: dict = {}
    with reuse_vectors(app.store.vector, {}, learn=True) as stand_in:
        try:
            yield stats
        finally:
            if stand_in is not None:
                stats.update(texts_embedded=stand_in.embedded, texts_reused=stand_in.reused)


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
    def __init__(self, app, data: Dataset, replicas: int, edit_trust: Optional[float] = None):
        from memory_core.store.models import node_id

        # trust_ranked: the stored facts' sources are trusted 0.9, every edit comes from a
        # source trusted ``edit_trust`` (less): each edit is recorded, refuted, and nothing else changes
        self.edit_trust = edit_trust
        self.app = app
        self.data = data
        self.replicas = replicas
        self.clock = StepClock()
        self.disk: list[dict] = []
        app.hook = self.clock
        self.conclusion_ids = {
            node_id("conclusion", concl_key(n["id"], r)): (n["id"], r)
            for r in range(replicas)
            for n in data.conclusions
        }
        self.node_id = node_id
        self.conclusion_of = {
            concl_key(n["id"]): n["id"] for n in data.conclusions
        }  # replica 0's keys -> ids

    async def load(self) -> dict:
        loads = []
        # the replicas of an x10 graph have the same claim and statement texts (their keys and
        # subjects differ): their vectors are embedded once and reused for replicas 1-9, during the
        # load only (the revisions afterwards embed with the model as always). Embedding was 75% of
        # a replica's load (62 of 82 s, cProfile, 2-core machine at load 8).
        memo = embedding_memo(self.app) if self.replicas > 1 else contextlib.nullcontext({})
        with memo as memo_stats:
            for r in range(self.replicas):
                loads.append(await self._load_replica(r))
        nodes = sum(x["nodes"] for x in loads)
        seconds = sum(x["seconds"] for x in loads)
        out = {
            "replicas": loads,
            "nodes": nodes,
            "edges": sum(x["edges"] for x in loads),
            "seconds": round(seconds, 3),
            "cpu_seconds": round(sum(x["cpu_seconds"] for x in loads), 3),
            "nodes_per_s": round(nodes / seconds, 1),
        }
        if memo_stats:
            out["embedding_memo"] = dict(memo_stats)
        return out

    async def _load_replica(self, r: int) -> dict:
        inv = self.data.investigation(r, trusted=0.9 if self.edit_trust is not None else None)
        cpu = time.process_time()
        start = time.perf_counter()
        result = await self.app.load(inv)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        if result["invalidated"] or result["notes"]:
            raise RuntimeError(
                f"unexpected load result for replica {r}: {result['invalidated'][:5]} {result['notes'][:5]}"
            )
        log(
            f"  loaded replica {r}: {len(result['added'])} nodes, {len(result['edges_added'])} edges in {seconds:.1f} s"
        )
        return {
            "replica": r,
            "nodes": len(result["added"]),
            "edges": len(result["edges_added"]),
            "seconds": round(seconds, 3),
            "cpu_seconds": round(cpu, 3),
        }

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
        if self.edit_trust is None:
            res = await self.app.revise(fact=claim, triple=triple, key=key)
        else:
            res = await self.app.revise(
                fact=claim,
                triple=triple,
                key=key,
                source="mquake:edit",
                trust=self.edit_trust,
                policy="trust_ranked",
            )
        end = time.perf_counter()
        cpu = time.process_time() - cpu
        return {
            "edit": edit_id,
            "ms": round((end - start) * 1000, 3),
            "cpu_ms": round(cpu * 1000, 3),
            "epoch": res.get("epoch"),
            "already_applied": bool(res.get("already_applied")),
            "judge": res.get("judge"),
            "candidates": len(res.get("candidates", [])),
            "refuted": res.get("refuted", []),
            "invalidated": res.get("invalidated", []),
            "forgotten": res.get("forgotten", []),
            "note": res.get("note"),
            "timings": res.get("timings", {}),
            "steps": write_steps(start, end, self.clock.events),
        }

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
        new = {
            rev_key
            for rev_key in (self.data.fact(rev["edit"])[2] for rev in revisions if rev["epoch"] is not None)
        }
        refuted = {
            k for rev in revisions for k in rev["refuted"]
        } - new  # a new fact that lost is removed by undo
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
            reported = {
                self.conclusion_of.get(k, k) for rev in mine for k in rev["invalidated"]
            }  # keys -> ids
            expected = group.expected if self.edit_trust is None else set()  # trust_ranked: every edit loses
            collateral = sorted(observed - expected)
            missed = sorted(expected - observed)
            refuted_wrong = []
            for rev in mine:
                edit = self.data.edits[rev["edit"]]
                want = (
                    [ev_key(edit["contradicts"])]
                    if self.edit_trust is None
                    else [self.data.fact(rev["edit"])[2]]
                )
                if not rev["already_applied"] and (rev["refuted"] != want or rev["epoch"] is None):
                    refuted_wrong.append({"edit": rev["edit"], "refuted": rev["refuted"], "expected": want})
            tp += len(observed & expected)
            fp += len(collateral) + len(other_replicas)
            fn += len(missed)
            entry = {
                "group": group.name,
                "apply": group.apply,
                "expected": sorted(expected),
                "observed": sorted(observed),
                "collateral": collateral,
                "missed": missed,
                "other_replicas_dead": other_replicas,
                "log_disagrees": sorted(reported ^ observed),
                "refuted_wrong": refuted_wrong,
                "revision_ms": [r["ms"] for r in mine],
                "already_applied": sum(r["already_applied"] for r in mine),
            }
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
                log(
                    f"  {gi + 1}/{len(groups)} groups, {len(revisions)} revisions, p50 {pct(ms, 0.5):.0f} ms, "
                    f"{time.perf_counter() - started:.0f} s; root {disk['total'] / 1e6:.1f} MB "
                    f"(graph {disk.get(GRAPH_DIR, 0) / 1e6:.1f} MB)"
                )
        return {
            "groups": per_group,
            "revisions": revisions,
            "undo_ms": undo_ms,
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "restore_problems": restore_problems,
            "seconds": round(time.perf_counter() - started, 1),
        }


async def detection(app, data: Dataset, edit_ids: list[str], threshold: float) -> dict:
    """For every edit: is the evidence it contradicts among gate 1's candidates
    for the new fact's claim (limit 5), at ``threshold`` and over a sweep?"""
    from memory_core.judging.detect import candidates_from
    from memory_core.judging.retrieval import Query, VectorRetriever, gate1_many
    from memory_core.store.models import collection

    async def gate1(store, claim, threshold, limit, exclude):
        # the vector ranking alone, cut at the threshold: the sweep's own terms (the hybrid gate 1,
        # vector + lexical fused, is measured by bench.gate1); the claim's vector is returned for
        # the searches below (embedded once, inside the timed search, as gate 1 embeds it)
        [vector] = await store.embed([claim])
        [found] = await gate1_many(
            store,
            [Query(claim, vector=vector, exclude=frozenset(exclude))],
            limit,
            threshold,
            (VectorRetriever(),),
        )
        return candidates_from(found)[0], vector

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
        cands, vector = await gate1(app.store, claim, threshold, limit=RECALL_K, exclude=set())
        search_ms.append((time.perf_counter() - start) * 1000)
        cands_gate1 += len(cands)
        hit = any(c.key == target for c in cands)
        found_gate1 += hit
        # the sweep: the same search gate 1 makes (limit 5), filtered at each threshold
        hits = await app.store.search_vector(name, vector, RECALL_K)
        # where the contradicted evidence ranks when gate 1 misses it (up to 50)
        deep = await app.store.search_vector(name, vector, 50)
        keys = await app.store.raw_nodes(str(h.id) for h in [*hits, *deep])
        top = [(keys.get(str(h.id), {}).get("key"), float(h.score)) for h in hits]
        ordered = [(keys.get(str(h.id), {}).get("key"), float(h.score)) for h in deep]
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
            misses.append(
                {
                    "edit": eid,
                    "claim": claim,
                    "contradicts": target,
                    "contradicted_claim": data.nodes[edit["contradicts"]]["claim"],
                    "rank": rank,
                    "distance": None if distance is None else round(distance, 4),
                }
            )
    n = len(edit_ids)
    return {
        "edits": n,
        "threshold": threshold,
        "limit": RECALL_K,
        "recall_at_5": round(found_gate1 / n, 6) if n else None,
        "found": found_gate1,
        "mean_candidates": round(cands_gate1 / n, 3) if n else None,
        "sweep": [
            {
                "threshold": t,
                "recall_at_5": round(found_at[t] / n, 6),
                "mean_candidates": round(cands_at[t] / n, 3),
            }
            for t in sweep
        ]
        if n
        else [],
        "rank_of_contradicted": {
            "1": sum(1 for r in ranks if r == 1),
            "2-5": sum(1 for r in ranks if r and 2 <= r <= 5),
            "6-50": sum(1 for r in ranks if r and r > 5),
            "beyond_50": sum(1 for r in ranks if r is None),
        },
        "contradicted_distance": summary(distances),
        "gate1_ms": summary(search_ms),
        "misses": misses[:25],
        "miss_count": len(misses),
    }


async def components(app, data: Dataset, threshold: float, samples: int = 15) -> dict:
    """Milliseconds (p50 over ``samples``) of the operations one revision is made of,
    each timed alone on the loaded graph, to see which follow the graph's size.
    The only writes are a scratch evidence node added and deleted again (checked)."""
    import io

    from memory_core.judging.detect import DEFAULT_LIMIT, detect
    from memory_core.core.keys import sp_key
    from memory_core.store.models import collection, node_id
    from memory_core.store.pipeline import noop_tasks, run_pipeline
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
        await timed(
            "detect (gate 1 + sp lookup + structured judge)",
            detect,
            app.store,
            claim,
            (s, p, o),
            threshold,
            DEFAULT_LIMIT,
            {"none"},
            False,
        )
        await timed("affected_view (one contradicted hop)", app.store.affected_view, [target])
        props = (await app.store.raw_nodes([target]))[target]
        await timed("raw_nodes_1", app.store.raw_nodes, [target])
        await timed(
            "set_states_1 (same value)",
            app.store.set_states,
            {target: (state_of(props), int(props.get("truth_epoch") or 0))},
        )
        await timed(
            "set_weights_1 (same value)",
            app.store.set_weights,
            {target: float(props.get("feedback_weight", 0.5))},
        )
        scratch = f"bench:scratch:{i}"
        sid = node_id("evidence", scratch)
        point = build_point(
            "evidence", sid, {"key": scratch, "claim": claim, "question_key": question_key(0)}
        )
        await timed(
            "add_points_1 (add_data_points: graph + embed + vector upsert)", app.store.add_points, [point]
        )
        await timed("delete_1 (graph + vector rows)", app.store.delete, {sid: "evidence"})
    left = await app.store.find_keys([f"bench:scratch:{i}" for i in range(len(edits))])
    vectors = await app.store.vector_ids(collection("evidence"))
    stray = [
        k for k in (node_id("evidence", f"bench:scratch:{i}") for i in range(len(edits))) if k in vectors
    ]
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
    return {
        "log_bytes": size,
        "log_entries": sum(1 for _ in app.journal.entries()),
        "epoch_read_ms_p50": round(pct(times, 0.5), 3),
    }
