"""A host program that configures cognee itself and runs FALSIFY inside it:
``python tests/support/host_program.py MODE --root DIR`` prints one JSON object.

MODE ``defaults``: cognee's own defaults (graph and vector engines in worker processes,
backend access control on): ``Falsify.attach`` must refuse, naming the settings.
MODE ``pipeline``: the settings attach asks for; then, in one process: a FALSIFY error in
the host's pipeline run, the RevisionResults a host Task receives, Tasks of a closed
facade, waiting for a writer lock this process holds while other tasks keep running, and
``Falsify.open`` in an attached process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path


def configure_cognee(root: Path, mode: str) -> None:
    for name, sub in (
        ("SYSTEM_ROOT_DIRECTORY", "system"),
        ("DATA_ROOT_DIRECTORY", "data"),
        ("CACHE_ROOT_DIRECTORY", "cache"),
        ("COGNEE_LOGS_DIR", "logs"),
    ):
        os.environ[name] = str(root / sub)
    os.environ.setdefault("TELEMETRY_DISABLED", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name in (
        "ENABLE_BACKEND_ACCESS_CONTROL",
        "GRAPH_DATABASE_SUBPROCESS_ENABLED",
        "VECTOR_DB_SUBPROCESS_ENABLED",
    ):
        if mode == "defaults":
            os.environ.pop(name, None)
        else:
            os.environ[name] = "false"


INVESTIGATION = {
    "question": {"key": "Q", "text": "Did the plant pass its safety inspection?"},
    "hypotheses": [
        {"key": "A", "statement": "The plant passed"},
        {"key": "B", "statement": "The plant failed"},
    ],
    "evidence": [
        {"key": "E1", "claim": "The inspector's report says the plant passed.", "source_id": "report-1"},
        {
            "key": "E2",
            "claim": "A whistleblower says valves failed the pressure test.",
            "source_id": "interview-3",
        },
    ],
    "conclusions": [{"key": "K", "statement": "The plant is safe to reopen."}],
    "edges": [
        {"type": "supports", "from": "E1", "to": "A", "weight": 0.8},
        {"type": "supports", "from": "E2", "to": "B", "weight": 0.5},
        {"type": "depends_on", "from": "K", "to": "E1", "critical": True},
    ],
}


def failure(error: BaseException) -> dict:
    return {
        "class": type(error).__name__,
        "exit_code": getattr(error, "exit_code", None),
        "message": str(error),
    }


async def defaults(root: Path) -> dict:
    import memory_core
    from memory_core import Falsify

    memory_core.use_offline_embedder(root / "models")
    try:
        async with Falsify.attach(root / "falsify_state"):
            return {"attached": True}
    except memory_core.FalsifyError as error:
        return {
            "attached": False,
            "error": failure(error),
            "state_files": sorted(p.name for p in (root / "falsify_state").glob("*")),
        }


async def pipeline(root: Path) -> dict:
    import cognee
    from cognee.modules.pipelines.tasks.task import Task

    import memory_core
    from memory_core import Falsify

    memory_core.use_offline_embedder(root / "models")
    out: dict = {}
    received: list = []
    calls: list = []

    async def keep(results, ctx=None):
        calls.append(len(results))
        received.extend(results)
        return results

    state = root / "falsify_state"
    async with Falsify.attach(state) as fx:
        await fx.load(INVESTIGATION)
        epoch = fx.journal.epoch()
        # 1. a FALSIFY error fails the host's run with the original exception
        try:
            run = await cognee.run_custom_pipeline(
                tasks=memory_core.revision_tasks(fx),
                data=[[{"fact": "x is y", "target": "NOPE"}]],
                dataset="host",
                pipeline_name="host_revision",
            )
            out["bad_target"] = {"raised": False, "run": repr(run)[:300]}
        except Exception as error:
            out["bad_target"] = {"raised": True, **failure(error)}
        out["bad_target"]["epoch_unchanged"] = fx.journal.epoch() == epoch
        # ... and the run is recorded as errored, with the error's class
        from cognee.modules.pipelines.models import PipelineRun
        from cognee.infrastructure.databases.relational import get_relational_engine
        from sqlalchemy import select

        async with get_relational_engine().get_async_session() as session:
            rows = (
                (
                    await session.execute(
                        select(PipelineRun)
                        .where(PipelineRun.pipeline_name == "host_revision")
                        .order_by(PipelineRun.created_at.desc())
                    )
                )
                .scalars()
                .all()
            )
        out["bad_target"]["recorded"] = [
            str(r.status.value if hasattr(r.status, "value") else r.status) for r in rows
        ][:1]
        # 2. the RevisionResults reach the host's next Task
        await cognee.run_custom_pipeline(
            tasks=memory_core.revision_tasks(fx) + [Task(keep, needs_llm=False)],
            data=[
                [
                    {
                        "fact": "The inspector's report was signed before the inspection took place.",
                        "target": "E1",
                        "key": "F_audit",
                    }
                ]
            ],
            dataset="host",
            pipeline_name="host_revision",
        )
        out["results"] = [
            {k: r.get(k) for k in ("new_evidence", "refuted", "invalidated", "epoch")} for r in received
        ]
        # 3. a batch of three facts: each fact's result reaches the host's Task, and only results do
        received.clear()
        calls.clear()
        await cognee.run_custom_pipeline(
            tasks=memory_core.revision_tasks(fx) + [Task(keep, needs_llm=False)],
            data=[
                [
                    {
                        "fact": "The whistleblower's valve test was repeated by the regulator.",
                        "key": "G1",
                        "target": "E2",
                    },
                    {"fact": "The regulator's repeat test was itself flawed.", "key": "G2", "target": "G1"},
                    {
                        "fact": "A third lab confirmed the valves failed.",
                        "key": "G3",
                        "record": True,
                        "supports": "B",
                        "weight": 0.6,
                    },
                ]
            ],
            dataset="host",
            pipeline_name="host_revision",
        )
        out["batch"] = {
            "calls": list(calls),
            "keys": [r.get("new_evidence") for r in received],
            "epochs": sorted({r.get("epoch") for r in received}),
            "g3_edges": received[-1].get("edges_added") if received else None,
            "notes": [r.get("note", "") for r in received],
        }
        # 4. a good item and a bad one in one run: the error says what the run applied (error.applied)
        before = fx.journal.epoch()
        try:
            await cognee.run_custom_pipeline(
                tasks=memory_core.revision_tasks(fx),
                data=[
                    [
                        {
                            "fact": "The plant's logbook was rewritten after the inspection.",
                            "key": "H1",
                            "target": "G3",
                        }
                    ],
                    [{"fact": "x is y", "target": "NOPE"}],
                ],
                dataset="host",
                pipeline_name="host_revision",
            )
            out["mixed"] = {"raised": False}
        except Exception as error:
            out["mixed"] = {
                "raised": True,
                **failure(error),
                "applied": [(r.get("new_evidence"), r.get("epoch")) for r in getattr(error, "applied", [])],
            }
        out["mixed"]["epochs"] = [before, fx.journal.epoch()]
        tasks = memory_core.revision_tasks(fx)
        epoch = fx.journal.epoch()
    # 5. Tasks of a closed facade refuse; nothing is written
    try:
        await cognee.run_custom_pipeline(
            tasks=tasks,
            data=[["The whistleblower retracted the statement."]],
            dataset="host",
            pipeline_name="host_revision",
        )
        out["closed"] = {"raised": False}
    except Exception as error:
        out["closed"] = {"raised": True, **failure(error)}
    async with Falsify.attach(state, lock=False) as reader:
        out["closed"]["epoch_unchanged"] = reader.journal.epoch() == epoch
    # 6. waiting for the writer lock lets the event loop run; RootBusy names this process
    os.environ["FALSIFY_LOCK_TIMEOUT"] = "1"
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async with Falsify.attach(state):
        beat = asyncio.create_task(ticker())
        try:
            await Falsify.attach(state)
            out["busy"] = {"raised": False}
        except memory_core.FalsifyError as error:
            out["busy"] = {"raised": True, **failure(error)}
        out["busy"]["ticks_while_waiting"] = ticks
        beat.cancel()
    # one process, a second root: a documented error, the host's cognee untouched
    try:
        await Falsify.open(root / "other_root")
        out["second_root"] = {"raised": False}
    except memory_core.FalsifyError as error:
        out["second_root"] = {"raised": True, **failure(error), "created": (root / "other_root").exists()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("defaults", "pipeline"))
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    configure_cognee(root, args.mode)
    with contextlib.redirect_stdout(sys.stderr):
        out = asyncio.run((defaults if args.mode == "defaults" else pipeline)(root))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
