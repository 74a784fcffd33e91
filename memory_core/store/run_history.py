"""cognee's record of FALSIFY's own pipeline runs, kept bounded (a root's disk).

cognee's pipeline runner writes two rows per run into the ``pipeline_runs`` table of its
relational database (``DATASET_PROCESSING_STARTED`` and ``..._COMPLETED``, about 1.2 KB
each in SQLite). Every revision is one run, so a long-lived process grew its root by
~2.4 KB a revision with no end (measured with ``bench.soak``: 1.1 -> 3.2 MB over 1,500
revisions). cognee 1.6.5 has no public call that deletes runs; this module is the only
code that touches that table (contract-tested in ``tests/integration/test_cognee_contract.py``).

:func:`prune_run_history` deletes the rows of FALSIFY's own runs (the pipeline names in
:data:`OWN_PIPELINES`) older than the newest ``keep`` runs of each name; runs of any other
pipeline (a host's own) are never touched. SQLite reuses the freed pages, so the file
stops growing. ``FALSIFY_RUN_HISTORY_KEEP`` (default 200; 0 = keep everything) says how many
(``Settings.run_history_keep``); ``Backend.after_commit`` (``store/backends/base.py``) prunes
every 50 commits.
"""

from __future__ import annotations

OWN_PIPELINES = ("falsify_revision", "falsify_warm_up")


async def prune_run_history(keep: int, names: tuple[str, ...] = OWN_PIPELINES) -> int:
    """Delete the ``pipeline_runs`` rows of the pipelines ``names`` except their newest ``keep``
    runs each (a run = the rows sharing a ``pipeline_run_id``; the run in progress is the
    newest, so it is kept). Returns the number of rows deleted."""
    if keep <= 0:
        return 0
    from sqlalchemy import delete, func, select

    from cognee.infrastructure.databases.relational import get_relational_engine
    from cognee.modules.pipelines.models import PipelineRun

    removed = 0
    engine = get_relational_engine()
    async with engine.get_async_session() as session:
        for name in names:
            newest = (
                select(PipelineRun.pipeline_run_id)
                .where(PipelineRun.pipeline_name == name)
                .group_by(PipelineRun.pipeline_run_id)
                .order_by(func.max(PipelineRun.created_at).desc())
                .limit(keep)
            )
            result = await session.execute(
                delete(PipelineRun)
                .where(PipelineRun.pipeline_name == name, PipelineRun.pipeline_run_id.not_in(newest))
                .execution_options(synchronize_session=False)
            )
            removed += max(0, result.rowcount or 0)
        await session.commit()
    return removed


async def run_counts(names: tuple[str, ...] = OWN_PIPELINES) -> dict[str, int]:
    """How many runs of each pipeline cognee holds (for tests and ``bench.soak``)."""
    from sqlalchemy import func, select

    from cognee.infrastructure.databases.relational import get_relational_engine
    from cognee.modules.pipelines.models import PipelineRun

    engine = get_relational_engine()
    async with engine.get_async_session() as session:
        rows = await session.execute(
            select(PipelineRun.pipeline_name, func.count(func.distinct(PipelineRun.pipeline_run_id)))
            .where(PipelineRun.pipeline_name.in_(names))
            .group_by(PipelineRun.pipeline_name)
        )
        counts = {name: 0 for name in names}
        counts.update({name: n for name, n in rows})
        return counts
