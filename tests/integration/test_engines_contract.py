"""Loud failures when what FALSIFY's lifecycle leans on in cognee 1.6.5 changes
(memory_core/store/engines.py, the off-loop model in memory_core/store/embedder.py,
the type checkers' DataPoint in memory_core/store/datapoint_types.py, the host-settings
check in memory_core/store/data_root.py). The release itself (a closed root opened by another
process at once) is tests/system/test_lifecycle_processes.py's."""

from __future__ import annotations

import asyncio
import importlib
import threading

import pytest

from conftest import BACKEND

ladybug_only = pytest.mark.skipif(BACKEND != "ladybug", reason="the embedded engines' cache contract")


def test_the_engine_caches_have_the_operations_release_uses():
    graph = importlib.import_module("cognee.infrastructure.databases.graph.get_graph_engine")
    vector = importlib.import_module("cognee.infrastructure.databases.vector.create_vector_engine")
    for module, cache, factory in (
        (graph, "graph_engine_cache", "_create_graph_engine"),
        (vector, "vector_engine_cache", "_create_vector_engine"),
    ):
        assert callable(getattr(getattr(module, cache), "evict"))
        assert callable(getattr(getattr(module, cache), "is_cached"))
        assert callable(getattr(getattr(module, factory), "cache_await_closed"))
        assert callable(getattr(module, factory.lstrip("_")))


@ladybug_only
async def test_engines_built_in_a_thread_are_the_ones_the_loop_uses(app):
    """start() builds through the same cache get_graph_engine()/get_vector_engine_async() resolve
    through: the loop then finds the adapter the worker thread made (a cache hit, no build)."""
    from cognee.infrastructure.databases.graph import get_graph_engine
    from cognee.infrastructure.databases.vector import get_vector_engine_async

    from memory_core.store import engines
    from memory_core.store.embedder import _real_adapter

    await asyncio.to_thread(engines.start, app.paths.home)
    graph_config, vector_config = engines._configs()
    built = engines._graph_module().create_graph_engine(**graph_config)
    handle = await get_graph_engine()
    assert getattr(handle._engine(), "__wrapped__", handle._engine()) is getattr(built, "__wrapped__", built)
    vector = await get_vector_engine_async()
    made = engines._vector_module().create_vector_engine(**vector_config)
    assert _real_adapter(vector) is getattr(made, "__wrapped__", made)


async def test_the_local_model_runs_off_the_loop_with_cognees_own_engine(app):
    """cognee's fastembed engine runs its model inside embed_text; embed_text() runs that
    coroutine in a worker thread and gets exactly the engine's vectors (a text it computed
    before comes back from its memo, the model not run, bit for bit the same); the adapter's
    gateway forwards the model and wraps the engine as _engine."""
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

    from memory_core.store.embedder import _engine_of, _real_adapter, computes_locally, embed_text

    engine = get_embedding_engine()
    assert computes_locally(engine)
    threads = set()
    model = engine.embedding_model
    original = model.embed

    def watched(*args, **kwargs):
        threads.add(threading.get_ident())
        return original(*args, **kwargs)

    text = f"a valve failed the pressure test ({id(threads)})"  # a text this process never embedded
    model.embed = watched
    try:
        vectors = await embed_text(engine, [text])
        threads_first = set(threads)
        threads.clear()
        again = await embed_text(engine, [text, "another text, never embedded before " + text])
    finally:
        model.embed = original
    direct = await engine.embed_text([text])
    assert [list(v) for v in vectors] == [list(v) for v in direct] == [list(again[0])]
    assert threads_first and threading.get_ident() not in threads_first  # computed in a worker thread
    # the second call ran the model for the new text only: the first came back from the memo
    assert len(again) == 2 and list(again[1]) != list(again[0])
    runs = []
    model.embed = lambda texts, *a, **k: runs.append(list(texts)) or original(texts, *a, **k)
    try:
        await embed_text(engine, [text])
    finally:
        model.embed = original
    assert runs == []
    gateway = getattr(_real_adapter(app.store.vector), "embedding_engine")
    assert computes_locally(gateway) and _engine_of(gateway) is engine


def test_the_type_checkers_datapoint_has_cognees_fields():
    from cognee.infrastructure.engine import DataPoint

    from memory_core.store.datapoint_types import DataPoint as Typed

    assert set(Typed.model_fields) <= set(DataPoint.model_fields)
    assert {"id", "metadata", "type", "feedback_weight"} <= set(Typed.model_fields)
    for name in ("id_for", "vector_collection"):
        assert callable(getattr(DataPoint, name))


def test_the_relational_config_says_where_cognees_databases_are(root):
    from cognee.infrastructure.databases.relational.config import get_relational_config

    from memory_core.store.data_root import Paths, host_settings
    from memory_core.store import backends, settings

    assert get_relational_config().db_path.startswith(str(Paths(root).system))
    assert (
        host_settings(Paths(root), backends.choose(settings.current())) == []
    )  # this process's own root: nothing of a host's


@ladybug_only
async def test_cognees_sqlite_pools_its_connections_while_open_and_release_closes_them(app):
    """The embedded backend sets cognee's POOL_ARGS (memory_core/store/backends/embedded.py): cognee's
    SQLite engine keeps the connections a pipeline run used instead of opening new ones for the next
    run, and close_sqlite_pool (what release() ends with) closes them; the engine connects again
    when it is next used."""
    from cognee.infrastructure.databases.relational import get_relational_engine

    from memory_core.store import engines
    from memory_core.store.pipeline import noop_tasks, run_pipeline

    engine = get_relational_engine().engine
    assert engine.dialect.name == "sqlite"
    assert type(engine.pool).__name__ != "NullPool", "cognee ignored POOL_ARGS: every run reconnects"
    await run_pipeline(noop_tasks(), [{}], "falsify_contract")
    kept = engine.pool.checkedin()
    assert kept >= 1, "a pipeline run's connections were not kept"
    opened = engine.pool.status()
    await run_pipeline(noop_tasks(), [{}], "falsify_contract")
    assert engine.pool.checkedin() == kept, (opened, engine.pool.status())  # reused, not more
    await engines.close_sqlite_pool()
    assert engine.pool.checkedin() == 0
    await run_pipeline(noop_tasks(), [{}], "falsify_contract")  # connects again
    assert engine.pool.checkedin() >= 1
