"""cognee's pipeline runner, as FALSIFY uses it (the only place that does).

:func:`task` wraps an async function as a cognee ``Task``;
:func:`run_pipeline` runs a list of them through ``cognee.run_custom_pipeline`` (what
the tasks found, errors included, is on their data items: their caller reads it there);
:func:`set_up` is the runner's first run in a process, once and whole.
"""

from __future__ import annotations

import asyncio
import logging
import os
from contextvars import ContextVar

from memory_core.store.streams import silenced

# the databases cognee was set up for in this process (relational tables, migrations, default
# user), by what names them; the set-up running now, if one is
_set_up: set[tuple] = set()
_setting_up: dict[tuple, asyncio.Task] = {}
_DATABASE_SETTINGS = ("SYSTEM_ROOT_DIRECTORY", "DB_PROVIDER", "DB_HOST", "DB_PORT", "DB_NAME")


def task(fn, needs_llm: bool = False):
    """A cognee ``Task`` (cognee defaults ``needs_llm`` to True, which fails without a key)."""
    from cognee.modules.pipelines.tasks.task import Task

    return Task(fn, needs_llm=needs_llm)


async def _noop(items, ctx=None):
    return items


def noop_tasks() -> list:
    return [task(_noop)]


# True within FALSIFY's own pipeline runs (and the tasks and threads they start)
_OWN_RUN: ContextVar[bool] = ContextVar("falsify_own_pipeline_run", default=False)

# the names cognee's pipeline runner logs under, outside "cognee." (two records per task run, and
# a few per pipeline run; data_root levels them with cognee's own)
RUNNER_NAMES = (
    "run_pipeline",
    "pipeline_execution_mode",
    "run_tasks(tasks: [Task], data)",
    "run_tasks_data_item",
    "run_tasks_with_telemetry()",
    "run_tasks_base",
)
# the loggers it reports a failing task, data item or run on (at ERROR, with the traceback rendered
# by cognee's handlers: about 100 lines on standard error per failure); "cognee.shared.logging_utils"
# is the name of the ones cognee gets without a name
RUNNER_LOGGERS = RUNNER_NAMES + ("cognee.pipeline", "cognee.shared.logging_utils")


class _OwnRunErrors(logging.Filter):
    """Drops the runner's error records of FALSIFY's own runs: the error is raised to FALSIFY's
    caller, which reports it (the CLI as one line, the API as the documented exception), so
    cognee printing it too would put a traceback on a host's standard error. A host's own
    pipeline runs are logged as cognee logs them."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR or not _OWN_RUN.get()


_QUIET = _OwnRunErrors()


def _quiet_own_runs() -> None:
    for name in RUNNER_LOGGERS:
        logger = logging.getLogger(name)
        if _QUIET not in logger.filters:
            logger.addFilter(_QUIET)


async def _run(tasks: list, data: list, name: str, dataset: str) -> None:
    import cognee

    _quiet_own_runs()
    token = _OWN_RUN.set(True)
    try:
        # cognee's first run in a process applies relational migrations that print() to stdout; our
        # tasks print nothing: keep standard output clean for --json and a host's own output, this
        # task's writes only (a host's other tasks print as usual)
        with silenced():
            await cognee.run_custom_pipeline(
                tasks=tasks, data=data, dataset=dataset, pipeline_name=name, skip_connection_test=True
            )
    finally:
        _OWN_RUN.reset(token)


async def set_up() -> None:
    """The pipeline runner's first run in this process on these databases, where cognee creates
    its relational tables, applies its migrations and creates its default user. It runs once and whole: a
    caller cancelled meanwhile stops waiting, the run goes on (cut short, it would leave cognee
    half set up for the rest of the process: every later run failing), and the next caller, or
    two calls at once, wait for that same run; a run that failed is tried again."""
    databases = tuple(os.environ.get(name) for name in _DATABASE_SETTINGS)
    if databases in _set_up:
        return
    loop = asyncio.get_running_loop()
    running = _setting_up.get(databases)
    if (
        running is None
        or running.get_loop() is not loop
        or (running.done() and (running.cancelled() or running.exception() is not None))
    ):
        running = _setting_up[databases] = loop.create_task(
            _run(noop_tasks(), [{}], "falsify_set_up", "falsify")
        )
    await asyncio.shield(running)
    _set_up.add(databases)


async def run_pipeline(tasks: list, data: list, name: str, dataset: str = "falsify") -> None:
    """Run ``tasks`` over ``data`` through cognee's pipeline runner (FALSIFY's tasks record an
    error on their data item, which cognee would log and wrap; the caller raises it), after
    :func:`set_up`."""
    await set_up()
    await _run(tasks, data, name, dataset)
