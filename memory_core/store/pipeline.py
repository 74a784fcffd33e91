"""cognee's pipeline runner, as FALSIFY uses it (the only place that does).

:func:`task` wraps an async function as a cognee ``Task``;
:func:`run_pipeline` runs a list of them through ``cognee.run_custom_pipeline`` (what
the tasks found, errors included, is on their data items: their caller reads it there).
"""

from __future__ import annotations

import contextlib
import io


def task(fn, needs_llm: bool = False):
    """A cognee ``Task`` (cognee defaults ``needs_llm`` to True, which fails without a key)."""
    from cognee.modules.pipelines.tasks.task import Task

    return Task(fn, needs_llm=needs_llm)


async def _noop(items, ctx=None):
    return items


def noop_tasks() -> list:
    return [task(_noop)]


async def run_pipeline(tasks: list, data: list, name: str, dataset: str = "falsify") -> None:
    """Run ``tasks`` over ``data`` through cognee's pipeline runner (FALSIFY's tasks record an
    error on their data item, which cognee would log and wrap; the caller raises it)."""
    import cognee

    # cognee's first run in a fresh root applies relational migrations that print()
    # to stdout; our tasks print nothing, so keep stdout clean for --json output.
    with contextlib.redirect_stdout(io.StringIO()):
        await cognee.run_custom_pipeline(
            tasks=tasks, data=data, dataset=dataset, pipeline_name=name, skip_connection_test=True
        )
