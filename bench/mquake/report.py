"""The human-readable summary of a result (``--render`` prints a saved one)."""

from __future__ import annotations

from bench.common import fmt


def human(result: dict) -> str:
    m = result["machine"]
    lines = [
        f"FALSIFY MQuAKE-hard revision benchmark ({m['date']})",
        f"commit: {m.get('commit')}",
        f"machine: {m['platform']}, {m['cpu_count']} CPU ({m['cpu_model']}), Python {m['python']}, cognee "
        f"{m['cognee']}",
        f"data: {result['data']}",
        f"Ladybug max_db_size (KUZU_MAX_DB_SIZE): {result.get('kuzu_max_db_size')} (cognee's default "
        "34359738368; see RESULTS.md)",
        f"load average (1/5/15 min) at start {m['load_average_at_start']}, at end {m.get('load_average_at_end')}",
    ]
    ld = result.get("load")
    if ld:
        lines.append(
            f"loaded: {ld['nodes']:,} nodes, {ld['edges']:,} edges in {ld['seconds']:.1f} s "
            f"({ld['nodes_per_s']:,.0f} nodes/s, process CPU {ld.get('cpu_seconds', 0):.1f} s; replicas "
            f"{result['replicas']}); "
            f"not loaded per replica: {result['loaded']['not_loaded']}"
        )
    for name, sc in result.get("scenarios", {}).items():
        lat = sc["latency_ms"]
        lines.append(
            f"\n[{name}] {sc['groups']} group(s), {sc['revisions']} revisions ({sc['recorded']} recorded, "
            f"{sc['already_applied']} already applied)"
        )
        lines.append(
            f"  precision {sc['precision']:.2%}  recall {sc['recall']:.2%}  collateral {sc['collateral']}  "
            f"misses {sc['misses']}  (true positives {sc['true_positives']})"
        )
        if sc["groups_wrong"]:
            lines.append(f"  WRONG groups: {', '.join(sc['groups_wrong'][:10])}")
        lines.append(
            f"  log/store disagreements {sc['log_disagreements']}, wrong refutations {sc['refuted_wrong']}, "
            f"undo restore problems {sc['restore_problem_count']}"
        )
        lines.append(
            f"  revision latency p50 {fmt(lat.get('p50'), ' ms')}  p95 {fmt(lat.get('p95'), ' ms')}  "
            f"(first {fmt(sc['first_revision_ms'], ' ms')}; 1st half p50 {fmt(sc['latency_first_half_p50'], ' ms')}, "
            f"2nd half {fmt(sc['latency_second_half_p50'], ' ms')}); undo p50 {fmt(sc['undo_ms'].get('p50'), ' ms')}"
        )
        lines.append(
            f"  process CPU per revision p50 {fmt(sc['cpu_ms'].get('p50'), ' ms')} (all threads; wall time "
            "also waits on I/O and on other processes)"
        )
        lines.append(
            "  per task p50 (ms): "
            + ", ".join(f"{k} {v:.1f}" for k, v in sc["task_ms_p50"].items())
            + f"; outside tasks {fmt(sc['outside_tasks_ms_p50'])}"
        )
        lines.append(
            "  write path p50 (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in sc["write_steps_ms_p50"].items())
        )
        if "lower_bound" in sc:
            lb = sc["lower_bound"]
            lines.append(
                f"  lower bound (pure core, no stores): p50 {lb['latency_ms'].get('p50')} ms, precision "
                f"{lb['precision']:.2%} recall {lb['recall']:.2%}, same sets as the store: {lb['agrees_with_store']}; "
                f"FALSIFY / lower bound median {fmt(sc['vs_lower_bound']['median_ratio'], 'x')}"
            )
    if "after_undo" in result:
        d = result["after_undo"]
        lines.append(
            f"\ngraph after every undo identical to the loaded graph: {d['identical']} "
            f"({d['nodes']} nodes, {d['edges']} edges)"
        )
    det = result.get("detection")
    if det:
        lines.append(
            f"\n[detection, text only] {det['edits']} edits, gate 1 limit {det['limit']}, threshold "
            f"{det['threshold']:g}: recall@5 {det['recall_at_5']:.2%}, mean candidates {det['mean_candidates']:.2f}, "
            f"gate-1 p50 {fmt(det['gate1_ms'].get('p50'), ' ms')}"
        )
        lines.append(
            "  sweep: "
            + "; ".join(
                f"{s['threshold']:g}: {s['recall_at_5']:.2%} / {s['mean_candidates']:.2f}"
                for s in det["sweep"]
            )
        )
        lines.append(
            f"  rank of the contradicted evidence: {det['rank_of_contradicted']}; its distance "
            f"{det['contradicted_distance']}"
        )
    sc = result.get("scaling")
    if sc and "error" in sc:
        lines.append(f"\n[scaling] FAILED: {sc['error']}")
        sc = None
    if sc:
        lines.append(
            f"\n[scaling] same {sc['pairs']} revisions ({sc['cases']} per_case cases) on x1 "
            f"({sc['x1']['nodes']:,} nodes) and x10 ({sc['x10']['nodes']:,} nodes): median per-revision "
            f"ratio x10/x1 {fmt(sc['median_ratio_x10_over_x1'])}, p50 ratio {fmt(sc['p50_ratio_x10_over_x1'])}"
        )
        for r in ("x1", "x10"):
            s = sc[r]
            lines.append(
                f"  {r}: p50 {s['latency_ms']['p50']} ms, p95 {s['latency_ms']['p95']} ms, tasks {s['task_ms_p50']}, "
                f"outside tasks {s['outside_tasks_ms_p50']} ms, journal {s['journal']}, precision "
                f"{s['precision']:.2%} recall {s['recall']:.2%}, load {s['load_nodes_per_s']} nodes/s, "
                f"peak RSS {s['peak_rss_mb']} MB"
            )
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
    lines.append(
        f"peak RSS {result.get('peak_rss_mb')} MB; open {result.get('open_ms')} ms, warm-up "
        f"{result.get('warm_up_ms')} ms; wall {result.get('seconds')} s"
    )
    return "\n".join(lines)
