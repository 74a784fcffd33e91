"""Question answering on MQuAKE-hard's belief graph, before and after its edits: FALSIFY's
recall against plain RAG on the same stores.

    python -m bench.recall_qa [--quick | --cases N] [--root DIR] [--json] [--out FILE]
                              [--data FILE] [--no-floor-study] [--predicate-labels]

Data: the MQuAKE-hard belief graph ``out_mquake_hard_beliefs.json`` (as ``bench.mquake``
finds it: ``--data``, ``$FALSIFY_BENCH_DATA``, else ``../shared/bench/`` beside the
repository) and, in the ``mquake/`` folder beside it, the dataset itself
(``MQuAKE-hard.json``: answers, aliases, multi-hop questions) and its relation templates
(``question_templates.json``).

What is run, on a fresh data root through the product (``Falsify.load``, ``revise_many``,
``recall``):

1. the graph is loaded as ``bench.mquake`` loads it (every initially asserted hop, with its
   Wikidata triple, and the pre-edit multi-hop conclusions resting on them), and the demo's
   investigation beside it (a second, unrelated inquiry);
2. **before the edits**: every edited hop's single-hop question, written from the dataset's
   own template for its relation (``[X]`` = the subject's label), goes through ``recall``;
   FALSIFY's and plain RAG's answers are scored against the stored value's label and aliases.
   Each case's 4-hop chain goes through ``recall(path="S|P1|P2|P3|P4")`` (Wikidata ids, as
   stored), scored against the case's ``answer``; plain RAG answers the case's multi-hop
   question (its nearest stored fact) and follows the path over every stored triple;
3. all the selected cases' edits are applied as one batch (``revise_many``, the structured
   judge: each new fact refutes the value it replaces, what rested on it is invalidated);
4. **after the edits**: the same questions, scored against the new values (``new_answer`` for
   the chains).

Scoring: FactConsolidation's normalisation (lower case, punctuation and articles removed,
whitespace collapsed), then a label or alias must occur in the answer on word boundaries
(a bare substring test would let an alias such as "en" match "Epstein"); an answer that also
names the other phase's value (the stale one after the edits, the new one before) is wrong. A
path is right when it reaches exactly one entity and that entity's label matches. "Dead
beliefs used": answers whose nodes include one that is not alive when the question is asked
(FALSIFY: any node it used; plain RAG: the fact it answered from).

Conflicting edits: by Wikidata id no subject and relation is edited to two objects, but two
subjects share a label with another subject edited otherwise ("Portal" the 2007 game and the
series: developer Epic Games vs Sony Interactive Entertainment; "A Hard Day's Night" the song
and the album: performer Madonna vs Chicago Symphony Orchestra). Their template questions are
the same text with two right answers: they are kept out of the main figures and reported
apart (right when the answer names one of the values the question's label was edited to).

The relevance floor (``--no-floor-study`` skips it): the cosine distance of the nearest alive
belief for the single-hop questions against their own graph (related), for the same questions
asked of the demo's inquiry only (``inquiry="Q"``: an unrelated graph) and for sentences of the
SNLI dev sample (``../shared/bench/snli``: unrelated text nobody here wrote) against the whole
root. docs/recall.md says how the floor was chosen from these.

Timings are wall-clock per ``recall`` call on the warm facade; the machine, the date and the
load average are printed with them. Nothing here asserts a figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from bench.common import log, machine, pct, save, stdout_to_stderr, summary
from bench.mquake.dataset import Dataset, data_path

QUICK_CASES = 6
QUICK_UNRELATED = 12
UNRELATED_SNLI = 300
UNRELATED_DEMO = 200
ARTICLES = re.compile(r"\b(a|an|the)\b")
DEMO_KEY = "Q"
MIN_ALIAS = 3


# ---- the data -----------------------------------------------------------------------------


def dataset_files(beliefs: Path) -> tuple[Path, Path]:
    folder = beliefs.parent / "mquake"
    return folder / "MQuAKE-hard.json", folder / "question_templates.json"


def normalise(text: str) -> str:
    """FactConsolidation's answer normalisation: lower case, punctuation and articles out."""
    text = "".join(c for c in text.lower() if c not in set(string.punctuation))
    return " ".join(ARTICLES.sub(" ", text).split())


def names(answer: str, golds: set[str], besides: str = "") -> bool:
    """Whether ``answer`` names one of ``golds`` (normalised, on word boundaries), outside
    the words of ``besides`` (the question's subject: "Ford" in "Ford Thunderbird" does not
    name the Ford Motor Company)."""
    text = f" {normalise(answer)} "
    if besides:
        text = text.replace(f" {normalise(besides)} ", " ")
    return any(g and f" {g} " in text for g in golds)


class Catalogue:
    """Labels and aliases of MQuAKE-hard's entities, from the dataset's own cases."""

    def __init__(self, cases: list[dict]):
        self.label: dict[str, str] = {}
        self.aliases: dict[str, set[str]] = {}
        for case in cases:
            orig = case["orig"]
            for ids, labels in (
                (orig["triples"], orig["triples_labeled"]),
                (orig["new_triples"], orig["new_triples_labeled"]),
            ):
                for (s, _, o), (sl, _, ol) in zip(ids, labels):
                    self.label.setdefault(s, sl)
                    self.label.setdefault(o, ol)
            for hop in case["single_hops"] + case["new_single_hops"]:
                self.add(hop["answer"], hop.get("answer_alias", []))
            self.add(case["answer"], case.get("answer_alias", []))
            self.add(case["new_answer"], case.get("new_answer_alias", []))
            for rewrite in case["requested_rewrite"]:
                self.label.setdefault(rewrite["target_new"]["id"], rewrite["target_new"]["str"])
                self.label.setdefault(rewrite["target_true"]["id"], rewrite["target_true"]["str"])

    def add(self, label: str, aliases) -> None:
        self.aliases.setdefault(normalise(label), set()).update(normalise(a) for a in [label, *aliases])

    def golds(self, label: str) -> set[str]:
        """The label and its aliases, normalised; aliases under 3 characters are left out
        (India's "in", English's "en" would be found in almost any sentence)."""
        return {a for a in self.aliases.get(normalise(label), set()) if len(a) >= MIN_ALIAS} | {
            normalise(label)
        }


def select(raw: dict, cases: list[dict], limit: Optional[int]) -> tuple[dict, list[dict]]:
    """The belief graph (and the dataset's cases) of the first ``limit`` cases by id (all without)."""
    if not limit:
        return raw, cases
    chosen = sorted(c["case_id"] for c in cases)[:limit]
    keep = set(chosen)
    edits = [e for e in raw["edits"] if e["case_id"] in keep]
    wanted = {
        n["id"]
        for n in raw["nodes"]
        if n["kind"] == "Evidence" and n.get("initially_asserted") and keep & set(n.get("cases") or [])
    } | {e["contradicts"] for e in edits}
    conclusions = {n["id"] for n in raw["nodes"] if n["kind"] == "Conclusion" and n.get("case_id") in keep}
    nodes = [n for n in raw["nodes"] if n["id"] in wanted | conclusions]
    edges = [e for e in raw["edges"] if e["from"] in conclusions]
    part = dict(raw, nodes=nodes, edges=edges, edits=edits)
    return part, [c for c in cases if c["case_id"] in keep]


def single_hop_items(data: Dataset, templates: dict, catalogue: Catalogue) -> list[dict]:
    """One item per edited subject and relation: its template question, the stored value
    before the edits and the value after them."""
    items: dict[tuple[str, str], dict] = {}
    for edit in data.raw["edits"]:
        s, r, o = edit["new_fact"]["triple"]
        old = data.nodes[edit["contradicts"]]
        subject = old["triple_labeled"][0]
        item = items.setdefault(
            (s, r),
            {
                "subject": s,
                "label": subject,
                "relation": r,
                "question": templates[r].replace("[X]", subject),
                "before": old["triple_labeled"][2],
                "after": set(),
                "edits": [],
            },
        )
        item["after"].add(catalogue.label.get(o, edit["new_fact"]["triple_labeled"][2]))
        item["edits"].append(edit["id"])
    rows = list(items.values())
    for row in rows:
        if len(row["after"]) > 1:
            raise ValueError(
                f"{row['subject']}|{row['relation']} is edited to several objects: {row['after']}"
            )
        row["after"] = row["after"].pop()
    by_text: dict[str, list[dict]] = {}
    for row in rows:
        by_text.setdefault(row["question"], []).append(row)
    for row in rows:  # the same question text asks about another subject edited to another value
        others = by_text[row["question"]]
        row["conflict"] = {
            "before": len({normalise(o["before"]) for o in others}) > 1,
            "after": len({normalise(o["after"]) for o in others}) > 1,
        }
        row["values"] = {
            "before": sorted({o["before"] for o in others}),
            "after": sorted({o["after"] for o in others}),
        }
    return sorted(rows, key=lambda r: (r["question"], r["subject"]))


# ---- running ------------------------------------------------------------------------------


async def states(app) -> dict[str, str]:
    return {n["key"]: n["state"] for n in (await app.status())["nodes"]}


def dead_used(keys: list[str], alive: dict[str, str]) -> bool:
    return any(alive.get(k, "forgotten") != "alive" for k in keys)


async def ask_single_hops(app, items: list[dict], phase: str, catalogue: Catalogue) -> list[dict]:
    now = await states(app)
    other = "after" if phase == "before" else "before"
    rows = []
    for item in items:
        start = time.perf_counter()
        result = await app.recall(item["question"])
        ms = (time.perf_counter() - start) * 1000
        gold, stale = item[phase], item[other]
        golds = catalogue.golds(gold)
        wrong = catalogue.golds(stale) if normalise(stale) != normalise(gold) else set()
        wrong = {w for w in wrong if not any(w in g for g in golds)}
        right = lambda text: names(text, golds) and not names(text, wrong, item["label"])  # noqa: E731
        f, b = result["falsify"], result["baseline"]
        row = {
            "question": item["question"],
            "gold": gold,
            "conflict": item["conflict"][phase],
            "ms": round(ms, 2),
            "falsify": right(f["answer"]),
            "baseline": right(b["answer"]),
            "falsify_dead": dead_used(f["nodes"], now),
            "baseline_dead": dead_used(b["nodes"][:1], now),
            "falsify_nodes": f["nodes"][:3],
            "baseline_nodes": b["nodes"][:1],
            "matched": result["relevance"]["matched"],
            "best_distance": result["relevance"]["best_distance"],
            "answer_distance": next(
                (m["distance"] for m in f.get("matches", []) if f["nodes"] and m["key"] == f["nodes"][0]),
                None,
            ),
        }
        if item["conflict"][phase]:  # right when it names one of the values the label was edited to
            row["either"] = {
                side: any(names(result[side]["answer"], catalogue.golds(v)) for v in item["values"][phase])
                for side in ("falsify", "baseline")
            }
        if not row["falsify"]:
            row["falsify_answer"], row["baseline_answer"] = f["answer"][:200], b["answer"][:200]
        rows.append(row)
    return rows


async def ask_paths(app, cases: list[dict], phase: str, catalogue: Catalogue, data: Dataset) -> list[dict]:
    from memory_core.ops.recall import baseline_side

    now = await states(app)
    rows = []
    for case in cases:
        triples = case["orig"]["triples" if phase == "before" else "new_triples"]
        gold_id = triples[-1][2]
        gold = case["answer" if phase == "before" else "new_answer"]
        golds = catalogue.golds(gold) | {
            normalise(a) for a in case.get("answer_alias" if phase == "before" else "new_answer_alias", [])
        }
        path = "|".join([triples[0][0]] + [data.predicate(t[1]) for t in triples])
        start = time.perf_counter()
        result = await app.recall(path=path)
        ms = (time.perf_counter() - start) * 1000
        falsify_values = result["path"]["values"]
        plain = result["baseline"]["values"]
        one = lambda values: len(values) == 1 and names(catalogue.label.get(values[0], values[0]), golds)  # noqa: E731
        question = case["questions"][0]
        start = time.perf_counter()
        shot = await app.recall(question)
        shot_ms = (time.perf_counter() - start) * 1000
        plain_shot = await baseline_side(app.stores, question)
        other = case["new_answer" if phase == "before" else "answer"]
        wrong = catalogue.golds(other) if normalise(other) != normalise(gold) else set()
        wrong = {w for w in wrong if not any(w in g for g in golds)}
        right = lambda text: names(text, golds) and not names(text, wrong)  # noqa: E731
        rows.append(
            {
                "case": case["case_id"],
                "path": path,
                "gold": gold,
                "ms": round(ms, 2),
                "one_shot_ms": round(shot_ms, 2),
                "falsify": one(falsify_values),
                "falsify_exact": falsify_values == [gold_id],
                "baseline": one(plain),
                "baseline_values": len(plain),
                "falsify_dead": dead_used(result["falsify"]["nodes"], now),
                "baseline_dead": dead_used(result["baseline"]["nodes"], now),
                "falsify_one_shot": right(shot["falsify"]["answer"]),
                "baseline_one_shot": right(plain_shot["answer"]),
                "baseline_one_shot_dead": dead_used(plain_shot["nodes"][:1], now),
                "falsify_one_shot_dead": dead_used(shot["falsify"]["nodes"], now),
                "question": question,
                "one_shot_answer": shot["falsify"]["answer"][:400],
                # how FALSIFY answered: through a chain of triples, from one belief, or nothing matched
                "one_shot_how": (
                    "chain"
                    if "through" in shot["falsify"]
                    else ("belief" if shot["falsify"]["nodes"] else "nothing")
                ),
            }
        )
    return rows


async def floor_study(app, items: list[dict], snli: list[str], demo_sample: int, snli_sample: int) -> dict:
    out = {}
    for name, asked in (
        ("unrelated_graph", [(i["question"], DEMO_KEY) for i in items[:demo_sample]]),
        ("unrelated_text", [(s, None) for s in snli[:snli_sample]]),
    ):
        seen, examples = [], []
        for question, inquiry in asked:
            result = await app.recall(question, inquiry=inquiry)
            relevance = result["relevance"]
            seen.append((relevance["best_distance"], relevance["matched"]))
            if relevance["matched"] and len(examples) < 10:
                # an alive belief within the floor, or a dead one whose replacement answered
                first = (result["falsify"]["matches"] or [result["falsify"].get("replaces") or {}])[0]
                examples.append(
                    {"asked": question, "matched": first.get("text"), "distance": first.get("distance")}
                )
        out[name] = dict(_spread(seen), examples=examples)
    return out


def _spread(pairs: list[tuple]) -> dict:
    values = [d for d, _ in pairs if d is not None]
    return {
        "n": len(pairs),
        "matched": sum(1 for _, m in pairs if m),
        "min": round(min(values), 4) if values else None,
        "p1": round(pct(values, 0.01), 4) if values else None,
        "p5": round(pct(values, 0.05), 4) if values else None,
        "p50": round(pct(values, 0.5), 4) if values else None,
        "p99": round(pct(values, 0.99), 4) if values else None,
        "max": round(max(values), 4) if values else None,
    }


def score(rows: list[dict], sides=("falsify", "baseline")) -> dict:
    main = [r for r in rows if not r.get("conflict")]
    out = {"n": len(main), "excluded_conflicting": len(rows) - len(main)}
    for side in sides:
        out[side] = round(sum(r[side] for r in main) / len(main), 4) if main else None
        out[f"{side}_right"] = sum(r[side] for r in main)
        if f"{side}_dead" in (main[0] if main else {}):
            out[f"{side}_dead_used"] = sum(r[f"{side}_dead"] for r in main)
    conflicting = [r for r in rows if r.get("conflict")]
    if conflicting:
        out["conflicting"] = {
            "n": len(conflicting),
            **{f"{side}_names_a_value": sum(r["either"][side] for r in conflicting) for side in sides},
        }
    return out


async def run(args) -> dict:
    from memory_core import Falsify, demo_investigation

    beliefs = data_path(args.data)
    dataset_path, templates_path = dataset_files(beliefs)
    raw = json.loads(beliefs.read_text(encoding="utf-8"))
    cases = json.loads(dataset_path.read_text(encoding="utf-8"))
    templates = json.loads(templates_path.read_text(encoding="utf-8"))
    raw, cases = select(raw, cases, args.cases)
    data = Dataset(raw, predicate_labels=args.predicate_labels)
    catalogue = Catalogue(cases)
    items = single_hop_items(data, templates, catalogue)
    result = {
        "machine": machine(),
        "data": str(beliefs),
        "cases": len(cases),
        "predicates": "labels" if args.predicate_labels else "Wikidata ids",
        "single_hop_questions": len(items),
        "loaded_nodes": data.node_count,
    }
    started = time.perf_counter()
    app = await Falsify.open(Path(args.root), purpose="bench.recall_qa")
    result["open_ms"] = round((time.perf_counter() - started) * 1000, 1)
    try:
        result["warm_up_ms"] = round(await app.warm_up(), 1)
        t = time.perf_counter()
        await app.load(data.investigation(0))
        await app.load(demo_investigation())  # an unrelated inquiry beside it
        result["load_s"] = round(time.perf_counter() - t, 2)
        log(
            f"loaded {data.node_count} nodes of {len(cases)} cases in {result['load_s']} s; "
            f"{len(items)} single-hop questions"
        )
        phases = {}
        for phase in ("before", "after"):
            if phase == "after":
                facts = []
                for edit in data.raw["edits"]:
                    claim, triple, key = data.fact(edit["id"])
                    facts.append({"fact": claim, "triple": triple, "key": key})
                t = time.perf_counter()
                revised = await app.revise_many(facts)
                result["edits"] = {
                    "applied": len(facts),
                    "recorded": sum(1 for r in revised if r.get("new_evidence")),
                    "seconds": round(time.perf_counter() - t, 2),
                }
                log(f"applied {len(facts)} edits in {result['edits']['seconds']} s")
            t = time.perf_counter()
            single = await ask_single_hops(app, items, phase, catalogue)
            log(f"{phase}: status and questions from {t - started:.1f} s")
            log(f"{phase}: {len(single)} single-hop questions in {time.perf_counter() - t:.1f} s")
            t = time.perf_counter()
            multi = await ask_paths(app, cases, phase, catalogue, data)
            log(f"{phase}: {len(multi)} chains in {time.perf_counter() - t:.1f} s")
            phases[phase] = {
                "single_hop": score(single),
                "multi_hop_path": score(multi),
                "multi_hop_one_shot": score(
                    [
                        dict(
                            r,
                            falsify=r["falsify_one_shot"],
                            baseline=r["baseline_one_shot"],
                            falsify_dead=r["falsify_one_shot_dead"],
                            baseline_dead=r["baseline_one_shot_dead"],
                        )
                        for r in multi
                    ]
                ),
                "latency_ms": {
                    "recall": summary([r["ms"] for r in single]),
                    "path": summary([r["ms"] for r in multi]),
                    "one_shot": summary([r["one_shot_ms"] for r in multi]),
                },
                "misses": [r for r in single if not r["falsify"] and not r["conflict"]][:20],
                "path_misses": [r for r in multi if not r["falsify"]][:20],
                "one_shot_misses": [
                    {k: r[k] for k in ("case", "question", "gold", "one_shot_how", "one_shot_answer")}
                    for r in multi
                    if not r["falsify_one_shot"]
                ][:40],
                "one_shot_how": {
                    how: {
                        "right": sum(1 for r in multi if r["one_shot_how"] == how and r["falsify_one_shot"]),
                        "wrong": sum(
                            1 for r in multi if r["one_shot_how"] == how and not r["falsify_one_shot"]
                        ),
                    }
                    for how in ("chain", "belief", "nothing")
                },
            }
            phases[phase]["related_distances"] = _spread([(r["best_distance"], r["matched"]) for r in single])
            phases[phase]["answer_distances"] = _spread(
                [
                    (r["answer_distance"], True)
                    for r in single
                    if r["answer_distance"] is not None and r["falsify"]
                ]
            )
        result["phases"] = phases
        if not args.no_floor_study:
            snli = snli_sentences(beliefs)
            sample = QUICK_UNRELATED if args.quick else None
            t = time.perf_counter()
            result["floor_study"] = await floor_study(
                app, items, snli, sample or UNRELATED_DEMO, sample or UNRELATED_SNLI
            )
            log(f"floor study in {time.perf_counter() - t:.1f} s")
        from memory_core.ops.recall import recall_floor

        result["floor"] = recall_floor(app.stores.settings)
    finally:
        await app.close()
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def snli_sentences(beliefs: Path) -> list[str]:
    path = beliefs.parent / "snli" / "snli_1.0_test_head.jsonl"
    if not path.is_file():
        return []
    seen: dict[str, None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            seen.setdefault(row["sentence2"], None)
    return list(seen)


# ---- the report ---------------------------------------------------------------------------


def pct_text(value) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def human(r: dict) -> str:
    m = r["machine"]
    lines = [
        f"recall QA on MQuAKE-hard ({r['cases']} cases, {r['single_hop_questions']} single-hop questions, "
        f"relations stored as {r.get('predicates', 'Wikidata ids')}), {m['date']}, commit {m['commit']}",
        f"  machine: {m['platform']}, {m['cpu_count']} CPU(s) {m.get('cpu_model') or ''}, Python {m['python']}, "
        f"cognee {m['cognee']}; load average {m['load_average_at_start']} -> {m.get('load_average_at_end')}",
        f"  loaded {r['loaded_nodes']} nodes in {r['load_s']} s; {r['edits']['applied']} edits "
        f"({r['edits']['recorded']} recorded) in {r['edits']['seconds']} s; whole run {r['seconds']} s",
        "",
        "| phase | questions | FALSIFY | plain RAG | dead beliefs used (FALSIFY / plain RAG) | recall p50 / p95 |",
        "|---|---|---|---|---|---|",
    ]
    for phase in ("before", "after"):
        p = r["phases"][phase]
        for name, label in (
            ("single_hop", "single-hop (template question)"),
            ("multi_hop_path", "multi-hop (--path)"),
            ("multi_hop_one_shot", "multi-hop (the question, one shot)"),
        ):
            s = p[name]
            lat = p["latency_ms"][{"single_hop": "recall", "multi_hop_path": "path"}.get(name, "one_shot")]
            timing = f"{lat.get('p50')} / {lat.get('p95')} ms"
            lines.append(
                f"| {phase} the edits | {label}: {s['n']} | {pct_text(s['falsify'])} | {pct_text(s['baseline'])} | "
                f"{s.get('falsify_dead_used', '-')} / {s.get('baseline_dead_used', '-')} | {timing} |"
            )
    lines.append("")
    for phase in ("before", "after"):
        c = r["phases"][phase]["single_hop"].get("conflicting")
        if c:
            lines.append(
                f"  {phase}: {c['n']} single-hop questions whose label was edited two ways (kept out): "
                f"FALSIFY names one of the values in {c['falsify_names_a_value']}, plain RAG in "
                f"{c['baseline_names_a_value']}"
            )
    for phase in ("before", "after"):
        how = r["phases"][phase]["one_shot_how"]
        lines.append(
            f"  {phase}: FALSIFY's one-shot multi-hop answers through a chain of triples "
            f"{how['chain']['right']} right / {how['chain']['wrong']} wrong, from one belief "
            f"{how['belief']['right']} / {how['belief']['wrong']}, nothing matched {how['nothing']['wrong']}"
        )
    for phase in ("before", "after"):
        d = r["phases"][phase]["related_distances"]
        a = r["phases"][phase]["answer_distances"]
        lines.append(
            f"  related ({phase}): nearest alive belief p50 {d['p50']}, p99 {d['p99']}, max {d['max']}; "
            f"matched {d['matched']}/{d['n']}; the right answer's distance p99 {a['p99']}, max {a['max']}"
        )
    if r.get("floor_study"):
        for name, label in (
            ("unrelated_graph", "the questions asked of the demo's inquiry"),
            ("unrelated_text", "SNLI sentences against the whole root"),
        ):
            d = r["floor_study"][name]
            lines.append(
                f"  unrelated, {label}: n {d['n']}, nearest min {d['min']}, p1 {d['p1']}, p5 {d['p5']}, "
                f"p50 {d['p50']}; matched {d['matched']}"
            )
            for e in d.get("examples", []):
                lines.append(f"    matched at {e['distance']}: {e['asked']!r} -> {e['matched']!r}")
    lines.append(f"  floor in use: {r['floor']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.recall_qa", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--quick", action="store_true", help=f"the first {QUICK_CASES} cases and small unrelated samples"
    )
    p.add_argument("--cases", type=int, help="the first N cases by id (default: all 429)")
    p.add_argument(
        "--root", help="data root (must be new or empty; default: a temporary directory, removed after)"
    )
    p.add_argument(
        "--data", help="the belief graph file (default: $FALSIFY_BENCH_DATA or ../shared/bench/...)"
    )
    p.add_argument(
        "--predicate-labels",
        action="store_true",
        help="store each relation by its Wikidata label (spouse) instead of its id (P26); paths ask by label",
    )
    p.add_argument("--json", action="store_true", help="print the full result as JSON on stdout")
    p.add_argument("--out", help="also write the full result as JSON to this file")
    p.add_argument(
        "--no-floor-study", action="store_true", help="skip the relevance floor's unrelated samples"
    )
    args = p.parse_args(argv)
    if args.quick:
        args.cases = args.cases or QUICK_CASES
    beliefs = data_path(args.data)
    missing = [f for f in (beliefs, *dataset_files(beliefs)) if not f.is_file()]
    if missing:
        print(
            f"benchmark data not found: {', '.join(map(str, missing))} (set --data or $FALSIFY_BENCH_DATA)",
            file=sys.stderr,
        )
        return 2
    temp = None
    if args.root:
        root = Path(args.root)
        if root.exists() and any(root.iterdir()):
            print(f"--root {root} is not empty: the benchmark needs a fresh data root", file=sys.stderr)
            return 2
    else:
        temp = Path(tempfile.mkdtemp(prefix="falsify-recall-qa-"))
        root = temp / "root"
    args.root = str(root)
    try:
        with stdout_to_stderr(args.json) as out:
            result = asyncio.run(run(args))
            save(result, args.out)
            out.write((json.dumps(result, indent=1) if args.json else human(result)) + "\n")
            out.flush()
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
