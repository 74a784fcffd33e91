"""cognee's engines over a facade's life: started off the event loop, released on close.

The one module that leans on how cognee 1.6.5 caches its engines
(``tests/integration/test_cognee_contract.py`` fails loudly when that changes):

* ``create_graph_engine`` / ``create_vector_engine`` build an adapter once per
  configuration and cache it (``closing_lru_cache``); ``get_graph_engine()`` and
  ``get_vector_engine_async()`` return handles that resolve through that cache.
* ``graph_engine_cache`` / ``vector_engine_cache`` (``EngineCacheOps``) evict an entry;
  with ``force_close=True`` the adapter is closed at once (Ladybug releases its file
  lock, LanceDB its connection) and the handles re-resolve to a fresh adapter on next
  use; the cached factory's ``cache_await_closed`` waits until that close has finished.

:func:`start` runs in a worker thread (``asyncio.to_thread``) so that what costs
seconds -- importing the parts of cognee a revision uses, opening the graph database,
connecting the vector store, loading the embedding model -- never runs on the caller's
event loop. Adapters created there are the ones the loop then uses: none of them holds
anything bound to a loop until its first call. :func:`release` closes the graph and
vector adapters of this process's data root, so another process can open the root as
soon as its writer lock is free.
"""

from __future__ import annotations

import importlib
import sys
from typing import Optional

# what a revision, a load and a read import lazily the first time they run (each import is
# paid here, in the worker thread, instead of on the event loop)
_LAZY_MODULES = (
    "cognee.tasks.storage",
    "cognee.tasks.storage.add_data_points",
    "cognee.modules.pipelines",
    "cognee.modules.pipelines.operations.run_tasks",
    "cognee.modules.pipelines.tasks.task",
    "cognee.modules.pipelines.models",
    "cognee.infrastructure.databases.relational",
    "cognee.infrastructure.databases.vector.embeddings",
    "cognee.modules.users.methods",
    "cognee.modules.data.methods",
    "cognee.modules.migrations.startup",  # the first pipeline run checks cognee's migrations:
    "alembic.command",  # alembic (with mako and pygments) and the SQLite driver
    "alembic.config",
    "alembic.script",
    "alembic.autogenerate",
    "alembic.runtime.migration",
    "alembic.op",
    "aiosqlite",
    "cognee.infrastructure.databases.graph.ladybug.ladybug_migrate",
    "memory_core.store.models",
    "memory_core.store.pipeline",
    "memory_core.store.run_history",
)


def _graph_module():
    return importlib.import_module("cognee.infrastructure.databases.graph.get_graph_engine")


def _vector_module():
    return importlib.import_module("cognee.infrastructure.databases.vector.create_vector_engine")


def _configs() -> tuple[dict, dict]:
    from cognee.infrastructure.databases.graph.config import get_graph_context_config
    from cognee.infrastructure.databases.vector.config import get_vectordb_context_config

    return get_graph_context_config(), get_vectordb_context_config()


def start(home=None, warm: bool = True) -> None:
    """Build (and cache) cognee's graph and vector adapters and its embedding engine for
    the current configuration, and import what the first revision imports. Blocking:
    call it in a worker thread. ``home``: Ladybug's HOME while its database opens
    (:func:`memory_core.store.backends.housekeeping.ladybug_home`).

    ``warm=False`` (an opening for a short command that reads the graph and the log): only
    the graph database is opened. The vector adapter, the embedding model (cognee's vector
    engine builds its embedding engine, which loads the model) and the modules a write
    imports are left to their first use, which then pays them where it runs; about 0.3 s
    of a forked command's start-up otherwise. The model's session settings are installed
    either way, so a model loaded later is built as here."""
    from memory_core.store.backends.housekeeping import ladybug_home
    from memory_core.store.embedder import keep_int8_weights

    if warm:
        for name in _LAZY_MODULES:
            try:
                importlib.import_module(name)
            except ImportError:  # a module cognee moved: then it is imported where it is used
                pass
        try:  # SQLAlchemy maps cognee's relational models on their first query: done here instead
            from sqlalchemy.orm import configure_mappers

            configure_mappers()
        except Exception:  # noqa: BLE001  (a mapping error surfaces where cognee queries, as before)
            pass
    keep_int8_weights()  # before cognee's vector engine builds the embedding engine
    graph, vector = _configs()
    with ladybug_home(home):
        _graph_module().create_graph_engine(**graph)
    if not warm:
        return
    adapter = _vector_module().create_vector_engine(**vector)
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

    from memory_core.store.embedder import warm_model

    warm_model(get_embedding_engine())  # loads the model (a local one from disk) and runs it once
    getattr(adapter, "embedding_engine", None)


def vector_built() -> bool:
    """Whether cognee's vector adapter for the current configuration is built in this process
    (cached), without building it: an opening with ``warm=False`` leaves it to its first use."""
    return bool(_vector_module().vector_engine_cache.is_cached(**_configs()[1]))


_held = 0  # facades of this process that opened the data root standalone and are not closed yet


def hold() -> None:
    """One more facade uses this process's engines (:func:`release` closes them after the last)."""
    global _held
    _held += 1


async def release(held: bool = True) -> None:
    """One facade less (``held``: one that :func:`hold` counted; False: an opening that failed
    after the engines started); after the last one, close this process's graph and vector
    adapters (cognee builds fresh ones if they are used again) and wait until they are
    closed: the graph file's lock and the vector store's connection are let go, and so are
    the pooled connections to cognee's SQLite database (a new opening, on whatever event
    loop, makes new ones)."""
    global _held
    if held:
        _held = max(0, _held - 1)
    if _held or "cognee" not in sys.modules:  # still in use, or never started
        return
    from memory_core.store import process

    if process.import_unfinished():  # e.g. an opening cancelled while cognee was imported: no engine
        return  # started, and cognee's modules may be half initialised
    graph, vector = _configs()
    graph_module, vector_module = _graph_module(), _vector_module()
    graph_module.graph_engine_cache.evict(force_close=True, **graph)
    vector_module.vector_engine_cache.evict(force_close=True, **vector)
    for factory in (
        getattr(graph_module, "_create_graph_engine", None),
        getattr(vector_module, "_create_vector_engine", None),
    ):
        waiter: Optional[object] = getattr(factory, "cache_await_closed", None)
        if callable(waiter):
            await waiter()
    await close_sqlite_pool()


async def close_sqlite_pool() -> None:
    """Close the connections cognee's SQLite database keeps in its pool (the embedded backend
    pools them: ``POOL_ARGS``); its engine stays usable and connects again when next used. A
    server database's pool (PostgreSQL) is left as cognee keeps it."""
    from cognee.infrastructure.databases.relational import get_relational_engine

    engine = getattr(get_relational_engine(), "engine", None)  # cognee's SqlAlchemyAdapter.engine
    if engine is not None and engine.dialect.name == "sqlite":
        await engine.dispose()
