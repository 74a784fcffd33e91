"""FALSIFY inside a host's own cognee pipeline: ``python examples/cognee_pipeline.py --root DIR``.

The host configures cognee itself (its own roots under DIR), writes a small
belief graph with cognee's own ``add_data_points`` using FALSIFY's DataPoint
classes, then runs FALSIFY's revision Tasks in its own ``run_custom_pipeline``
with one contradicting fact (a Task of its own after FALSIFY's receives the
RevisionResults), and reads the truth states back with cognee's
``get_node_truth_state``. FALSIFY attaches to the host's configuration and keeps
only its journal and revision log in DIR/falsify_state. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import asyncio
import json
import os
import sys
from pathlib import Path


def configure_cognee(root: Path) -> None:
    """The host's own cognee set-up (what any cognee program does before importing it)."""
    for name, sub in (
        ("SYSTEM_ROOT_DIRECTORY", "system"),
        ("DATA_ROOT_DIRECTORY", "data"),
        ("CACHE_ROOT_DIRECTORY", "cache"),
        ("COGNEE_LOGS_DIR", "logs"),
    ):
        os.environ[name] = str(root / sub)
    # what Falsify.attach requires (it refuses otherwise, naming the setting): one store for every
    # pipeline run (FALSIFY reads the graph outside the runner too), engines in this process
    os.environ["ENABLE_BACKEND_ACCESS_CONTROL"] = "false"
    os.environ["GRAPH_DATABASE_SUBPROCESS_ENABLED"] = "false"
    os.environ["VECTOR_DB_SUBPROCESS_ENABLED"] = "false"
    os.environ.setdefault("TELEMETRY_DISABLED", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


async def main(root: Path) -> dict:
    configure_cognee(root)
    import cognee
    from cognee.infrastructure.databases.graph import get_graph_engine
    from cognee.tasks.storage import add_data_points

    import memory_core
    from memory_core import Conclusion, Evidence, Falsify, Hypothesis, InvestigationQuestion

    from cognee.base_config import get_base_config

    memory_core.use_offline_embedder(root / "models")  # the host opts into FALSIFY's packaged offline model

    def watched() -> dict:
        base = get_base_config()
        return {
            "HOME": os.environ.get("HOME"),
            "environment": dict(os.environ),
            "cognee_system_root": base.system_root_directory,
            "cognee_data_root": base.data_root_directory,
        }

    q = InvestigationQuestion(key="Q", question="Did the plant pass its safety inspection?")
    a = Hypothesis(key="A", statement="The plant passed", question_key="Q")
    b = Hypothesis(key="B", statement="The plant failed", question_key="Q")
    e1 = Evidence(
        key="E1",
        claim="The inspector's report says the plant passed.",
        question_key="Q",
        source_id="report-1",
    )
    e2 = Evidence(
        key="E2",
        claim="A whistleblower says valves failed the pressure test.",
        question_key="Q",
        source_id="interview-3",
    )
    k = Conclusion(key="K", statement="The plant is safe to reopen.", question_key="Q")
    nodes = [q, a, b, e1, e2, k]
    edges = [(str(n.id), str(q.id), "part_of", {}) for n in nodes[1:]]  # every node belongs to its question
    edges += [
        (str(e1.id), str(a.id), "supports", {"weight": 0.8}),
        (str(e2.id), str(b.id), "supports", {"weight": 0.5}),
        (str(k.id), str(e1.id), "depends_on", {"critical": True}),
    ]
    await add_data_points(nodes, custom_edges=edges)

    from cognee.modules.pipelines.tasks.task import Task

    received = []

    async def keep_results(
        results, ctx=None
    ):  # the host's own Task after FALSIFY's: gets the RevisionResults
        received.extend(results)
        return results

    before = watched()
    async with Falsify.attach(root / "falsify_state") as fx:
        await cognee.run_custom_pipeline(
            tasks=memory_core.revision_tasks(fx) + [Task(keep_results, needs_llm=False)],
            data=[
                [
                    {
                        "fact": "The inspector's report was signed before the inspection took place.",
                        "target": "E1",
                        "key": "F_audit",
                    }
                ]
            ],
            dataset="host_pipeline",
            pipeline_name="host_revision",
        )
        log = fx.revision_log()

    graph = await get_graph_engine()
    ids = {n.key: str(n.id) for n in nodes}
    ids["F_audit"] = str(Evidence.id_for("F_audit"))
    states = await graph.get_node_truth_state(list(ids.values()))
    after = watched()
    changed = sorted(
        k
        for k in set(before["environment"]) | set(after["environment"])
        if before["environment"].get(k) != after["environment"].get(k)
    )
    return {
        "states": {
            key: (states.get(i, {}).get("truth_alignment") or ["(not in graph)"])[0]
            if i in states
            else "(not in graph)"
            for key, i in ids.items()
        },
        "logged_rules": sorted({row["rule"] for row in log}),
        "results": [
            {k: r[k] for k in ("new_evidence", "refuted", "invalidated", "promoted", "epoch")}
            for r in received
        ],
        "home_unchanged": before["HOME"] == after["HOME"],
        "environment_variables_changed": changed,
        "cognee_roots_unchanged": (before["cognee_system_root"], before["cognee_data_root"])
        == (after["cognee_system_root"], after["cognee_data_root"]),
        "cognee_system_root": after["cognee_system_root"],
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root", required=True, help="where the host keeps cognee's data (and FALSIFY its state)"
    )
    args = parser.parse_args()
    with contextlib.redirect_stdout(
        sys.stderr
    ):  # cognee's first run prints migration notes: stdout is the JSON only
        out = asyncio.run(main(Path(args.root).resolve()))
    print(json.dumps(out, indent=2))
    sys.exit(0)
