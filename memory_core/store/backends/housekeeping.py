"""The embedded backend's engine housekeeping (run by
:meth:`memory_core.store.backends.embedded.EmbeddedBackend.maintain` between two commits,
under the writer lock), keeping a long-lived process's memory and a root's disk flat.

Measured with ``python -m bench.soak`` (one process revising and undoing on the
MQuAKE-hard graph; see bench/RESULTS.md), a long-lived process grew by
about 1 MB of native memory per change:

* **Ladybug** (0.19, pinned by cognee 1.6.5): every ``CHECKPOINT`` keeps native
  memory for the life of the ``Database`` object (LadybugDB/ladybug#924; cognee's
  adapter checkpoints after each of its writes, ours after each write). It is
  given back only when the database is closed. :func:`reopen_graph` closes and
  reopens the graph database every ``FALSIFY_GRAPH_REOPEN_EVERY`` commits
  (default 20: about 0.9 MB a commit on the demo root, 0.1 s a reopen; 0 = never)
  through the adapter's own transient-drop path (drain in-flight queries, drop the
  native handles, re-initialise).
* **LanceDB**: every write makes a new table version (manifest, deletion file,
  fragment), and a table handle caches per-version state. FALSIFY never reads
  an old version: undo re-adds what it removed from the journal's tombstones.
  :func:`prune_vector_versions` compacts the tables and prunes versions older than
  ``FALSIFY_VECTOR_PRUNE_AGE_S`` (default 30 s) every ``FALSIFY_VECTOR_PRUNE_EVERY``
  commits (default 50; 0 = never), so the root's size stays bounded.

  The same step drops cognee's LanceDB connection (:func:`reconnect_vector`,
  ``FALSIFY_VECTOR_RECONNECT``, default 1): a connection's session caches the metadata
  of every table version it has read (~11 KB a version, kept up to 1 GiB); the next use
  opens a fresh one.

* **Ladybug's file** grows on its own: a node's properties are one JSON string, each
  update writes a new one and the old one's pages stay in the file (no VACUUM in 0.19).
  At a reopen step, when the file is over ``FALSIFY_GRAPH_COMPACT_RATIO`` (default 2; 0 =
  never) times its size after the last compaction (kept in ``<db>.compacted``),
  :func:`compact_graph` rewrites it (EXPORT + IMPORT into a new file, checked row for row,
  swapped in with one ``os.replace``).

cognee's run history (both backends) is pruned by
:meth:`memory_core.store.backends.base.Backend.after_commit`; the allocator settings are
:mod:`memory_core.store.process`'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Optional

from memory_core.store import faults
from memory_core.store.settings import Settings
from memory_core.store.backends.base import log, stats  # noqa: F401  (stats re-exported)


def settings(s: Settings) -> dict:
    """How often the housekeeping runs under the settings ``s`` (``bench.soak`` records it)."""
    return {
        "FALSIFY_GRAPH_REOPEN_EVERY": s.graph_reopen_every,
        "FALSIFY_VECTOR_PRUNE_EVERY": s.vector_prune_every,
    }


@contextlib.contextmanager
def ladybug_home(home: Optional[Path]):
    """``HOME`` pointed at ``home`` while Ladybug's database opens (it creates
    ``$HOME/.lbdb/extension``), restored after; nothing changes for None."""
    if home is None:
        yield
        return
    before = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = before


async def reopen_graph(graph, home=None) -> bool:
    """Close and reopen cognee's Ladybug database in place (the adapter stays the
    same object, so cognee's cached engine keeps working). False if the adapter is
    not a local Ladybug one (PostgreSQL, subprocess mode)."""
    if not all(
        hasattr(graph, a)
        for a in (
            "_connection_lock",
            "_drain_in_flight_queries",
            "_drop_native_resources",
            "get_or_init_connection",
        )
    ):
        return False
    if getattr(graph, "_subprocess_mode", False):
        return False
    async with graph._connection_lock:
        await graph._drain_in_flight_queries()
        graph._drop_native_resources()
        with ladybug_home(home):
            graph.get_or_init_connection()
    return True


def _graph_rows(conn) -> tuple[int, int, str]:
    """Nodes, edges and a digest of every column of every node and edge (order-free)."""
    import hashlib

    digest = hashlib.sha256()
    node_cols = [row[1] for row in conn.execute("CALL table_info('Node') RETURN *").get_all()]
    edge_cols = [row[1] for row in conn.execute("CALL table_info('EDGE') RETURN *").get_all()]
    nodes = conn.execute(
        "MATCH (n:Node) RETURN " + ", ".join(f"n.`{c}`" for c in node_cols) + " ORDER BY n.id"
    ).get_all()
    edges = conn.execute(
        "MATCH (a:Node)-[e:EDGE]->(b:Node) RETURN a.id, b.id, "
        + ", ".join(f"e.`{c}`" for c in edge_cols)
        + " ORDER BY a.id, b.id, e.relationship_name, e.properties"
    ).get_all()
    rows = nodes + edges
    rows.sort(key=repr)  # edges with equal sort keys may come back in either order
    for row in rows:
        digest.update(repr(row).encode())
    return len(nodes), len(edges), digest.hexdigest()


def _compacted_size(path: Path) -> Optional[int]:
    try:
        return int(json.loads(path.with_name(path.name + ".compacted").read_text())["bytes"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _record_compacted(path: Path, size: int) -> None:
    side = path.with_name(path.name + ".compacted")
    tmp = side.with_name(side.name + ".tmp")
    tmp.write_text(json.dumps({"bytes": size, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
    os.replace(tmp, side)


COMPACT_FLOOR = 4 << 20  # a graph file below 4 MB is never worth rewriting


def graph_needs_compacting(graph, ratio: float) -> bool:
    """Whether Ladybug's file has grown past ``ratio`` times its size after the last compaction.
    A root with no record yet (``<db>.compacted``) is compacted once if its file is over
    :data:`COMPACT_FLOOR`, so a file that grew before this existed is brought back too."""
    path = Path(getattr(graph, "db_path", "") or "")
    if ratio <= 0 or not path.is_file():
        return False
    size, last = path.stat().st_size, _compacted_size(path)
    if last is None:
        if size > COMPACT_FLOOR * min(ratio, 1.0):
            return True
        _record_compacted(path, size)
        return False
    return size > ratio * max(last, COMPACT_FLOOR // 4)


async def compact_graph(graph, home=None, fault_at: Optional[str] = None) -> Optional[tuple[int, int]]:
    """Rewrite cognee's Ladybug database into a fresh file and swap it in.

    Ladybug (0.19) has no VACUUM: a node's properties are one JSON string, and every update
    writes a new string while the old one's pages stay in the file (measured with
    ``CALL storage_info('Node')`` on a soak's root: ``properties_data`` 254 -> 1,875 pages in
    1,500 revise+undo cycles while the node count stayed put). ``EXPORT DATABASE`` then
    ``IMPORT DATABASE`` into a new file gives the same rows in a file sized for them
    (17.9 -> 4.4 MB there, 0.3 s). Done between two commits, under the writer lock and the
    adapter's connection lock, after a CHECKPOINT: the new file is built beside the old one
    (``<db>.compact``), checked to hold exactly the same nodes and edges (counts and a digest
    of every column of every node and edge), closed, and moved over the old one with
    one ``os.replace``; a crash at any point leaves either the old file or the new, both
    complete. Returns (bytes before, bytes after), or None if the adapter is not a local
    Ladybug one or nothing was swapped."""
    if not _reopenable(graph):
        return None
    import shutil

    import ladybug

    path = Path(graph.db_path)
    new = path.with_name(path.name + ".compact")
    export = path.with_name(path.name + ".export")
    if "'" in str(export):  # EXPORT DATABASE takes the directory as a quoted literal
        log.warning("not compacting the graph database: its path contains a quote: %s", path)
        return None
    before = path.stat().st_size
    async with graph._connection_lock:
        await graph._drain_in_flight_queries()
        with ladybug_home(home):
            conn = graph.get_or_init_connection()
            conn.execute("CHECKPOINT;")
            old_rows = _graph_rows(conn)
            for leftover in (new, new.with_name(new.name + ".wal")):
                leftover.unlink(missing_ok=True)
            shutil.rmtree(export, ignore_errors=True)
            swapped = False
            try:
                conn.execute(f"EXPORT DATABASE '{export}'")
                faults.point("compact_exported", fault_at)
                graph._drop_native_resources()
                db = ladybug.Database(
                    str(new), buffer_pool_size=graph.kuzu_buffer_pool_size, max_db_size=graph.kuzu_max_db_size
                )
                try:
                    fresh = ladybug.Connection(db)
                    fresh.execute(f"IMPORT DATABASE '{export}'")
                    fresh.execute("CHECKPOINT;")
                    new_rows = _graph_rows(fresh)
                    fresh.close()
                finally:
                    db.close()
                faults.point("compact_imported", fault_at)
                if new_rows != old_rows:
                    raise RuntimeError(
                        f"the rebuilt graph differs ({new_rows[:2]} vs {old_rows[:2]} nodes, edges)"
                    )
                for debris in (path.with_name(path.name + ".wal"), new.with_name(new.name + ".wal")):
                    if debris.exists() and debris.stat().st_size > 0:
                        raise RuntimeError(f"{debris.name} is not empty after closing")
                os.replace(new, path)
                _fsync_dir(path.parent)
                faults.point("compact_swapped", fault_at)
                swapped = True
            finally:
                new.unlink(missing_ok=True)
                shutil.rmtree(export, ignore_errors=True)
                graph._drop_native_resources()
                graph.get_or_init_connection()
    if not swapped:
        return None
    after = path.stat().st_size
    _record_compacted(path, after)
    return before, after


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _reopenable(graph) -> bool:
    return all(
        hasattr(graph, a)
        for a in (
            "_connection_lock",
            "_drain_in_flight_queries",
            "_drop_native_resources",
            "get_or_init_connection",
            "db_path",
        )
    ) and not getattr(graph, "_subprocess_mode", False)


def _unwrap(engine):
    """cognee's engine handle -> its cached lease proxy -> the adapter itself (the
    handle and the proxy forward reads, not writes)."""
    resolve = getattr(type(engine), "_engine", None)
    if resolve is not None:
        engine = engine._engine()
    return getattr(engine, "__wrapped__", None) or engine


async def reconnect_vector(vector) -> bool:
    """Drop cognee's LanceDB connection so the next use opens a fresh one: a connection's
    session caches the metadata of every table version it has read (manifests, deletion
    files, fragment metadata; measured ~11 KB per version, kept up to 1 GiB). In-flight
    readers keep the old connection alive through their own references; it is freed with
    the last of them. False if the adapter is not a local LanceDB one."""
    vector = _unwrap(vector)
    lock = getattr(vector, "_lifecycle_lock", None)
    if lock is None or getattr(vector, "_subprocess_mode", False) or not hasattr(vector, "connection"):
        return False
    with lock:
        if getattr(vector, "_permanently_closed", False) or vector.connection is None:
            return False
        vector.connection = None
    return True


async def prune_vector_versions(vector, names, older_than_s: float = 30.0) -> int:
    """Compact these LanceDB tables and drop their versions older than ``older_than_s``
    seconds (LanceDB ``optimize``; nothing of FALSIFY reads an old version: undo re-adds
    from the journal's tombstones; the age margin spares a reader of another process
    that is mid-query on a version that has just been superseded). Returns the number of
    tables pruned."""
    get = getattr(vector, "get_connection", None)
    if get is None:
        return 0
    conn = await get()
    done = 0
    for name in names:
        if not await vector.has_collection(name):
            continue
        table = await conn.open_table(name)
        try:
            await table.optimize(cleanup_older_than=timedelta(seconds=older_than_s))
        finally:
            close = getattr(table, "close", None)
            if close is not None:
                close()
        done += 1
    return done
