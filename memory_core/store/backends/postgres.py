"""The PostgreSQL backend (``FALSIFY_BACKEND=postgres``): the graph (cognee's postgres
adapter), the vectors (its pgvector adapter), FALSIFY's revision log, pending intent and
writer lock in one PostgreSQL database, named by ``FALSIFY_DATABASE_URL``
(postgresql://user:password@host:port/db) or by cognee's DB_HOST / DB_PORT / DB_USERNAME /
DB_PASSWORD / DB_NAME; any machine that reaches it can open the same investigations. The
data root keeps the local things only (model cache, cognee's relational metadata, logs,
the meta file).

* :class:`PostgresBackend`: SQL on the tables of cognee's postgres graph adapter
  (``graph_node``/``graph_edge``, properties as JSONB) through the adapter's own SQLAlchemy
  engine; writes take the adapter's graph-write advisory lock so they serialise with
  cognee's; the checkpoint is a no-op (each statement commits); the vector housekeeping is
  an HNSW index (cosine) on each FALSIFY pgvector collection.
* :class:`PgJournal`: the intent is one row of ``falsify_intent``; the commit point is ONE
  transaction that inserts the log entry into ``falsify_log`` and deletes the intent, so a
  revision is either in the log or not (there is no torn line to repair). cognee's adapters
  commit their own transactions (graph, then vectors), so the graph and vector writes of a
  revision cannot join that transaction: the intent/commit-point design carries over
  unchanged (a crashed writer's intent is rolled back or cleared by the next one).
* :class:`PgWriterLock`: one writer per database across processes and machines, a
  session-level advisory lock held on a dedicated connection for as long as the stores are
  open (waits ``FALSIFY_LOCK_TIMEOUT`` seconds, then :class:`RootBusy`, exit 3, naming the
  holder). PostgreSQL releases it when the holder's connection ends, so a killed writer
  never blocks the next one -- and a holder whose connection ended (a restart, a failover,
  ``idle_session_timeout``, a terminated session) has lost it without being told: every
  write is fenced (the intent row and the log row are inserted only while that very session
  still holds the lock; :class:`WriterLockLost`, exit 7, otherwise).
* :func:`prepare_database`: FALSIFY's tables, an index for the store's subject-predicate
  lookup, and ``hnsw.ef_search`` for this database (the backend's open-time step): one catalog
  query once they are in place, so an opening (each command of the warm launcher; a server
  once) runs no DDL and writes nothing to the catalog; its checks and its journal share one
  connection (the writer lock keeps a session of its own).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterable, Iterator, Optional

from memory_core.core.errors import (
    DatabaseUnavailable,
    EmbedderMismatch,
    InputError,
    RootBusy,
    WriterLockLost,
)
from memory_core.store import lexical, off_loop
from memory_core.store.backends import neighborhood
from memory_core.store.backends.base import Backend, node_list, nodes_by_id, unique_edges
from memory_core.store.settings import Settings
from memory_core.store.journal import Journal, set_aside_path
from memory_core.store.lock import default_timeout, make_private

# pg_advisory_lock keys: one for the writer (ours), distinct from cognee's graph-write key
WRITER_LOCK_KEY = 0x46414C53  # "FALS"
# HNSW returns at most ef_search rows per scan; recall asks for up to 420 (MAX_TOP_K * 4 + 20)
EF_SEARCH = 1000

SCHEMA = """
CREATE TABLE IF NOT EXISTS falsify_log (
    seq bigserial PRIMARY KEY,
    epoch bigint NOT NULL,
    entry jsonb NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS falsify_log_epoch ON falsify_log (epoch);
CREATE TABLE IF NOT EXISTS falsify_intent (
    slot int PRIMARY KEY DEFAULT 1 CHECK (slot = 1),
    epoch bigint,
    intent jsonb NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS falsify_meta (
    key text PRIMARY KEY,
    value jsonb NOT NULL
);
"""


# One epoch, one log row: a UNIQUE index made on a new database, and on an older one at open
# when its log holds no repeated epoch (else check names the repeats and the index waits).
UNIQUE_EPOCH_INDEX = "falsify_log_epoch_unique"


# seconds a connection attempt waits for the server (libpq's own default waits as long as the
# system's TCP connect does, minutes for a host that drops packets); a URL's connect_timeout wins
CONNECT_TIMEOUT_S = 10


def connect(url: str, application_name: str = "falsify"):
    """A connection to the database ``url`` (autocommit). Raises :class:`DatabaseUnavailable`
    naming the server when it cannot be reached or refuses the connection."""
    import psycopg2

    extra = {} if "connect_timeout" in url else {"connect_timeout": CONNECT_TIMEOUT_S}
    try:
        conn = psycopg2.connect(url, application_name=application_name[:63], **extra)
    except psycopg2.OperationalError as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise DatabaseUnavailable(
            f"cannot connect to the PostgreSQL database {_redact(url)}: {reason} (nothing was opened; "
            "check FALSIFY_DATABASE_URL or --database)"
        ) from None
    conn.autocommit = True
    return conn


def require_pgvector(conn, url: str) -> None:
    """The ``vector`` extension in the database of ``conn``: made when missing (cognee's adapter
    would try the same, later, as an internal error); :class:`DatabaseUnavailable` naming it and
    the statement to run when this role may not make it."""
    import psycopg2

    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if cur.fetchone():
            return
        try:
            cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg2.Error as error:
            reason = " ".join(str(error).split()) or type(error).__name__
            raise DatabaseUnavailable(
                f"the PostgreSQL database {_redact(url)} has no pgvector extension and this role cannot "
                f"create it ({reason}): run `CREATE EXTENSION vector;` in that database as its owner or a "
                "superuser (nothing was opened)"
            ) from None


_prepared: set[str] = set()

# One idle connection per database URL: the one reach() made (in a launcher's spare, before the
# command came), used by the open-time checks (prepare_database, check_database_embedder) and then
# handed to the journal, so an opening makes two connections of its own (this one and the writer
# lock's, which must be a session of its own) where it made five. A connection found closed by the
# server meanwhile (a restart, idle_session_timeout) is made again once.
_idle: dict[str, object] = {}
_forked_away: list = []  # a forked child's copies of its parent's idle connections: never used


def _forget_after_fork() -> None:
    """In a forked child: its parent's idle connections are not its own. Closing one (or its
    collection, at exit) would send the server the session's end on the parent's socket: the
    child's copy of the socket is pointed at /dev/null first."""
    for conn in _idle.values():
        try:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, conn.fileno())
            os.close(null)
        except Exception:  # noqa: BLE001 - closed already
            pass
        _forked_away.append(conn)
    _idle.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def declare_tables(conn, metadata, names: list[str]) -> None:
    """The tables ``names`` (those of them that exist) in ``metadata`` with their columns (names,
    types as reflected, nullability) and primary key: what a query of cognee's pgvector adapter
    needs (its search, retrieve, delete), read in two catalog queries for all of them; not their
    indexes, constraints and comments (what ``MetaData.reflect`` reads too). For
    ``Connection.run_sync``."""
    from sqlalchemy import Column, Table, inspect

    inspector = inspect(conn)
    columns = inspector.get_multi_columns(filter_names=names)
    keys = inspector.get_multi_pk_constraint(filter_names=names)
    for (schema, name), found in columns.items():
        if schema is not None or name in metadata.tables:
            continue
        primary = set((keys.get((schema, name)) or {}).get("constrained_columns") or ())
        Table(
            name,
            metadata,
            *[
                Column(c["name"], c["type"], primary_key=c["name"] in primary, nullable=c["nullable"])
                for c in found
            ],
        )


def journal_name() -> str:
    return f"falsify journal pid {os.getpid()}"


def take_connection(url: str):
    """The idle connection to ``url`` (see ``_idle``), else a new one."""
    conn = _idle.pop(url, None)
    if conn is not None and not conn.closed:
        return conn
    return connect(url, journal_name())


def give_back(url: str, conn) -> None:
    """Keep ``conn`` as the idle connection to ``url`` (closed if one is kept already, or if it is
    not idle in autocommit)."""
    import psycopg2.extensions as ext

    if conn.closed:
        return
    if not conn.autocommit or conn.get_transaction_status() != ext.TRANSACTION_STATUS_IDLE or url in _idle:
        conn.close()
        return
    _idle[url] = conn


def _on_setup_connection(url: str, work):
    """``work(cursor)`` on the idle connection to ``url`` (kept idle after), once more on a new
    connection when the server had closed that one; a refused connection is DatabaseUnavailable."""
    import psycopg2

    for attempt in (1, 2):
        conn = take_connection(url)
        try:
            with conn.cursor() as cur:
                result = work(cur)
        except (psycopg2.OperationalError, psycopg2.InterfaceError):
            if conn.closed and attempt == 1:  # lost while idle: the server restarted, a timeout, ...
                continue
            conn.close()
            raise
        except BaseException:
            conn.close()
            raise
        give_back(url, conn)
        return result
    raise AssertionError("unreachable")


# FALSIFY's tables and indexes, looked up in one query at open: when they are all there (and
# hnsw.ef_search is set, or cannot be by this role), the opening writes nothing to the catalog
# and takes no lock for it. The HNSW and full-text indexes of the vector collections are looked
# up too (PostgresBackend.vector_housekeeping then makes only the missing ones).
RELATIONS = ("falsify_log", "falsify_intent", "falsify_meta", "falsify_log_epoch")
NAME_INDEX = "falsify_node_type_name_md5"
OLD_NAME_INDEX = "falsify_node_type_name"
_STATE_SQL = (
    "SELECT coalesce(array_agg(n) FILTER (WHERE to_regclass(quote_ident(n)) IS NOT NULL), '{}'), "
    # hnsw.ef_search as this session has it, and whether the database's new sessions get at least
    # EF_SEARCH (this connection may be older than the setting: a process's earlier opening made it)
    "current_setting('hnsw.ef_search', true), "
    "EXISTS (SELECT 1 FROM pg_db_role_setting s, unnest(s.setconfig) AS c "
    "WHERE s.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database())) "
    "AND s.setrole IN (0, (SELECT oid FROM pg_roles WHERE rolname = current_user)) "
    "AND CASE WHEN c ~ '^hnsw[.]ef_search=[0-9]{1,9}$' THEN substr(c, 16)::int >= %s ELSE false END), "
    "pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'MEMBER') "
    "FROM unnest(%s::text[]) AS n"
)
# what prepare_database found (or made) per URL: the relations present among those looked up
_present: dict[str, set[str]] = {}


def _looked_up() -> list[str]:
    from memory_core.store.lexical import fts_index_name
    from memory_core.core.identity import KINDS, collection

    names = [*RELATIONS, UNIQUE_EPOCH_INDEX, "graph_node", NAME_INDEX, OLD_NAME_INDEX]
    for kind in KINDS:
        name = collection(kind)
        names += [name, hnsw_index_name(name), fts_index_name(name)]
    return names


def _ef_search_set(value) -> bool:
    try:
        return int(value) >= EF_SEARCH
    except (TypeError, ValueError):
        return False


def _schema_ready(present: set[str]) -> bool:
    if not set(RELATIONS) | {UNIQUE_EPOCH_INDEX} <= present:
        return False
    return "graph_node" not in present or (NAME_INDEX in present and OLD_NAME_INDEX not in present)


def prepare_database(url: str) -> None:
    """FALSIFY's tables and settings in this database (idempotent; once per process). One
    catalog query when they are in place already (every opening but a database's first):
    no DDL, no catalog write, no lock; else the tables and indexes made under an advisory lock
    (one process at a time: CREATE ... IF NOT EXISTS races on the catalog), and
    ``hnsw.ef_search`` (:func:`set_ef_search_default`) when new sessions do not get it yet."""
    if url in _prepared:
        return
    names = _looked_up()

    def work(cur) -> None:
        cur.execute(_STATE_SQL, (EF_SEARCH, names))
        found, ef_search, ef_set, owner = cur.fetchone()
        present = set(found)
        ready = _schema_ready(present)
        ef_wanted = not (ef_set or _ef_search_set(ef_search))
        if ready and ef_wanted:  # refused to this role before (and said so then): not tried again
            cur.execute("SELECT 1 FROM falsify_meta WHERE key = %s || current_user", (EF_REFUSED,))
            ef_wanted = cur.fetchone() is None
        if not ready or ef_wanted:
            _make_schema(cur, url, set_ef_search=ef_wanted, owner=owner)
            cur.execute(_STATE_SQL, (EF_SEARCH, names))
            present = set(cur.fetchone()[0])
        _present[url] = present

    _on_setup_connection(url, work)
    _prepared.add(url)


# falsify_meta's key (+ the role's name) recording that this role may not set hnsw.ef_search
EF_REFUSED = "hnsw.ef_search refused for "


def _make_schema(cur, url: str, set_ef_search: bool, owner: bool) -> None:
    # one process at a time (CREATE ... IF NOT EXISTS races on the catalog)
    cur.execute("SELECT pg_advisory_lock(%s)", (WRITER_LOCK_KEY + 1,))
    try:
        cur.execute(SCHEMA)
        unique_epochs(cur)
        cur.execute("SELECT to_regclass('graph_node') IS NOT NULL")
        if cur.fetchone()[0]:
            index_graph(cur)
        if set_ef_search:
            refused = set_ef_search_default(cur, owner)
            if refused:
                import logging

                # said once: the refusal is recorded, later openings by this role neither try nor warn
                cur.execute(
                    "INSERT INTO falsify_meta (key, value) VALUES (%s || current_user, %s) "
                    "ON CONFLICT (key) DO NOTHING",
                    (EF_REFUSED, json.dumps(refused)),
                )
                logging.getLogger("falsify").warning(
                    "could not set hnsw.ef_search for the database %s (%s): its vector searches return at most "
                    "40 rows per index scan (PostgreSQL's default); its owner can run ALTER DATABASE ... SET "
                    "hnsw.ef_search = %d (said once)",
                    _redact(url),
                    refused,
                    EF_SEARCH,
                )
    finally:
        cur.execute("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK_KEY + 1,))


def set_ef_search_default(cur, owner: bool) -> Optional[str]:
    """``hnsw.ef_search`` = EF_SEARCH for the database's new sessions: set on the database when
    this role owns it, else on this role in the database (a role may set its own defaults).
    pgvector is loaded in the session first: PostgreSQL lets only a superuser set a setting of a
    library not loaded yet. None, or why PostgreSQL refused."""
    import psycopg2

    target = "DATABASE %I" if owner else "ROLE CURRENT_USER IN DATABASE %I"
    try:
        cur.execute("SELECT '[0]'::vector")  # loads pgvector in this session
        cur.execute(
            f"DO $$ BEGIN EXECUTE format('ALTER {target} SET hnsw.ef_search = {EF_SEARCH}', "
            "current_database()); END $$"
        )
    except psycopg2.Error as error:
        return (" ".join(str(error).split()) or type(error).__name__).partition(" CONTEXT:")[0]
    return None


def check_database_embedder(url: str, mine: dict) -> dict:
    """The database's embedder record (the first opener's, kept in ``falsify_meta``): every
    machine and data root on this database must embed with the same model, or vectors of
    two models would be compared. Raises EmbedderMismatch naming both. Read first, written
    only by the database's first opener."""
    prepare_database(url)

    def work(cur):
        cur.execute("SELECT value FROM falsify_meta WHERE key = 'embedder'")
        row = cur.fetchone()
        if row is None:
            cur.execute(
                "INSERT INTO falsify_meta (key, value) VALUES ('embedder', %s) ON CONFLICT (key) DO NOTHING",
                (json.dumps(mine),),
            )
            cur.execute("SELECT value FROM falsify_meta WHERE key = 'embedder'")
            row = cur.fetchone()
        return row[0]

    recorded = _on_setup_connection(url, work)
    if recorded != mine:
        raise EmbedderMismatch(
            f"this database ({_redact(url)}) was built with embedder {recorded}, but the current settings "
            f"select {mine}. Vectors of different models cannot be compared: use the same EMBEDDING_* / "
            "LLM_API_KEY settings as the other users of this database, or another database."
        )
    return mine


def unique_epochs(cur) -> None:
    """The UNIQUE index on ``falsify_log.epoch`` unless it exists or the log repeats an epoch."""
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (UNIQUE_EPOCH_INDEX,))
    if cur.fetchone()[0]:
        return
    cur.execute("SELECT EXISTS (SELECT 1 FROM falsify_log GROUP BY epoch HAVING count(*) > 1)")
    if cur.fetchone()[0]:
        return
    cur.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {UNIQUE_EPOCH_INDEX} ON falsify_log (epoch)")


# The store's subject-predicate lookup (evidence by ``name``): a btree on (type, md5(name)), as a
# btree entry holds at most ~2,700 bytes and a name (a triple's "subject|predicate") may be
# longer (8,000 characters are valid input); the lookup compares md5(name), then the name. The
# index on (type, name) of earlier versions is dropped (a long name could not be inserted).
NAME_INDEX_SQL = (
    f"DROP INDEX IF EXISTS {OLD_NAME_INDEX}; "
    f"CREATE INDEX IF NOT EXISTS {NAME_INDEX} ON graph_node (type, md5(name))"
)


def index_graph(cur) -> None:
    """The store's subject-predicate lookup (evidence by ``name``) as an index seek."""
    cur.execute(NAME_INDEX_SQL)


# cognee's postgres graph adapter serialises its writes with this transaction-level
# advisory lock (cognee.infrastructure.databases.graph.postgres_demo.adapter._GRAPH_WRITE_LOCK_KEY);
# ours take it too, so a raw write never interleaves with one of cognee's.
GRAPH_WRITE_LOCK_KEY = 5522063


def hnsw_index_name(collection: str) -> str:
    return f"{collection}_falsify_hnsw"


_engines_loop: dict[int, object] = {}


class PostgresBackend(Backend):
    name = "postgres"
    beliefs_in_root = False  # the database holds the beliefs: a new local root may read a shared one

    def __init__(self, settings: Settings):
        super().__init__(settings)
        self.url = database_url(settings)
        self._indexed: set[str] = set()
        self._graph_indexed = False
        self._lock: Optional[PgWriterLock] = None  # the writer lock of this opening, if it takes one

    # ---- the data root ------------------------------------------------------
    def cognee_environment(self) -> dict[str, str]:
        return cognee_values(self.url)

    def reach(self) -> None:
        """One connection to the database (:class:`DatabaseUnavailable` naming the server when it
        cannot be made), and its pgvector extension (made if this role may), so a data root is not
        made for a database that is not there or that cognee's vector adapter cannot use. The
        connection is kept for the opening's checks and its journal (``take_connection``)."""
        conn = take_connection(self.url)
        try:
            require_pgvector(conn, self.url)
        except BaseException:
            conn.close()
            raise
        give_back(self.url, conn)

    def writer_lock(self, path: Path, purpose: str = "falsify") -> "PgWriterLock":
        """The database's writer lock (one writer per database; ``path`` is not used); the
        journal opened next fences its writes with it."""
        self._lock = PgWriterLock(self.url, purpose, timeout=self.settings.lock_timeout)
        return self._lock

    def open_journal(self, root: Path) -> "PgJournal":
        return PgJournal(root, self.url, self._lock)

    def check_embedder(self, mine: dict) -> None:
        """The database is shared: its own embedder record decides."""
        check_database_embedder(self.url, mine)

    def repair_at_open(self, repair_torn_checkpoint: bool) -> Optional[str]:
        """FALSIFY's tables and ``hnsw.ef_search`` (before cognee connects); nothing to repair
        (a statement commits whole or not at all)."""
        prepare_database(self.url)
        return None

    async def bind_to_running_loop(self) -> None:
        """cognee caches its adapters (and their asyncpg pools) per process; a process that
        opens the stores again under a new event loop (one ``asyncio.run`` per CLI command,
        as tests/support/cli_batch.py and the benchmark's children do) would get pooled connections
        of the dead loop ("attached to a different loop"). Drop those pools (without closing
        the connections: their loop is gone) so new ones are made on this loop.

        The vector adapter is looked at only when it is built: an opening with ``warm=False``
        (status, explain) leaves it, and the embedding model its construction loads, to their
        first use, which makes its pool on the loop it runs on. Built since, on a loop this
        method never saw, its pool is dropped on the next opening all the same."""
        import asyncio

        from memory_core.store import engines

        loop = asyncio.get_running_loop()
        seen = _engines_loop.get(id(self.graph.engine))
        if seen is not None and seen is not loop:
            await self.graph.engine.dispose(close=False)
        _engines_loop[id(self.graph.engine)] = loop
        if engines.vector_built():
            vector = self.vector.engine
            if _engines_loop.get(id(vector)) is not loop:  # another loop's, or one not known
                await vector.dispose(close=False)
            _engines_loop[id(vector)] = loop
            await self._declare_collections()

    async def _declare_collections(self) -> None:
        """FALSIFY's vector collections that exist, declared in cognee's pgvector adapter
        (:func:`declare_tables`) before its first use in this process: its ``has_collection``
        and ``get_table`` find them instead of reflecting each table (SQLAlchemy's full
        reflection, a dozen catalog queries per table with its indexes, FALSIFY's HNSW and GIN
        ones included: 0.2-0.6 s of a recall's CPU on a loaded machine, per process). What cannot
        be declared so is left to cognee's reflection, as before."""
        from memory_core.core.identity import KINDS, collection

        metadata = getattr(self.vector, "_metadata", None)  # cognee 1.6.5's PGVectorAdapter
        present = _present.get(self.url, set())
        if metadata is None:
            return
        names = [collection(k) for k in KINDS]
        wanted = [n for n in names if n in present and n not in metadata.tables]
        if not wanted:
            return
        try:
            async with self.vector.engine.connect() as conn:
                await conn.run_sync(declare_tables, metadata, wanted)
        except Exception as error:  # noqa: BLE001 - cognee reflects what is not declared
            import logging

            logging.getLogger("falsify").debug("vector collections not declared: %s", error)

    async def _read(self, sql: str, params: dict | None = None) -> list:
        from sqlalchemy import text

        await self.graph.initialize()
        async with self.graph.engine.connect() as conn:
            return list((await conn.execute(text(sql), params or {})).all())

    async def _write(self, *statements: tuple[str, dict]) -> None:
        """Statements in ONE transaction, behind cognee's graph-write lock."""
        from sqlalchemy import text

        await self.graph.initialize()
        async with self.graph.engine.begin() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": GRAPH_WRITE_LOCK_KEY})
            for sql, params in statements:
                await conn.execute(text(sql), params)

    # The property blobs are read as text and decoded by node_props / unique_edges, in a worker
    # thread when the answer is large (memory_core.store.off_loop): the driver's own JSONB decoding
    # would run on the caller's event loop. json.loads of the text is what the driver does.
    async def raw_nodes(self, ids: list[str]) -> dict[str, dict]:
        rows = await self._read(
            "SELECT id, name, type, properties::text FROM graph_node WHERE id = ANY(:ids)", {"ids": ids}
        )
        return await off_loop.run(nodes_by_id, rows, size=len(rows))

    async def nodes_by_type_name(self, type_: str, name: str) -> list[dict]:
        rows = await self._read(
            "SELECT id, name, type, properties::text FROM graph_node "
            "WHERE type = :t AND md5(name) = md5(:name) AND name = :name",
            {"t": type_, "name": name},
        )
        return await off_loop.run(node_list, rows, size=len(rows))

    async def nodes_by_type_name_prefixes(self, type_: str, prefixes: list[str]) -> list[dict]:
        """One query; each prefix's LIKE wildcards escaped (a prefix is taken literally)."""
        if not prefixes:
            return []
        escaped = [p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for p in prefixes]
        rows = await self._read(
            "SELECT id, name, type, properties::text FROM graph_node WHERE type = :t AND name LIKE ANY(:patterns)",
            {"t": type_, "patterns": escaped},
        )
        return await off_loop.run(node_list, rows, size=len(rows))

    async def ids_of_type(self, type_: str) -> list[str]:
        return [r[0] for r in await self._read("SELECT id FROM graph_node WHERE type = :t", {"t": type_})]

    async def edges_touching(self, ids: list[str], types=None) -> list[tuple[str, str, str, dict]]:
        # two index scans (cognee's idx_edge_source / idx_edge_target)
        rows = await self._read(
            "SELECT source_id, target_id, relationship_name, properties::text FROM graph_edge "
            "WHERE source_id = ANY(:ids) "
            "UNION ALL "
            "SELECT source_id, target_id, relationship_name, properties::text FROM graph_edge "
            "WHERE target_id = ANY(:ids)",
            {"ids": ids},
        )
        return await off_loop.run(unique_edges, rows, types, size=len(rows))

    async def neighborhood(
        self, ids: list[str]
    ) -> tuple[list[tuple[str, dict]], list[tuple[str, str, str, dict]]]:
        """cognee's ``get_neighborhood(ids, depth=1)``, its JSONB read as text and decoded off the
        event loop when large (:func:`memory_core.store.backends.neighborhood.postgres`)."""
        return await neighborhood.postgres(self._read, ids)

    async def members_of(self, question_ids: list[str], type_: str) -> list[str]:
        rows = await self._read(
            "SELECT e.source_id FROM graph_edge e JOIN graph_node n ON n.id = e.source_id "
            "WHERE e.target_id = ANY(:q) AND e.relationship_name = 'part_of' AND n.type = :t",
            {"q": question_ids, "t": type_},
        )
        return [r[0] for r in rows]

    async def update_nodes(self, patches: dict[str, dict]) -> None:
        """ONE statement: a JSONB merge (``properties || patch``) per node, where cognee's
        own ``get_nodes``/``get_neighborhood`` read them. Missing ids match no row."""
        items = json.dumps([{"id": i, "patch": p} for i, p in patches.items()])
        await self._write(
            (
                "UPDATE graph_node AS n SET properties = COALESCE(n.properties, '{}'::jsonb) || p.patch, "
                "updated_at = now() FROM jsonb_to_recordset(CAST(:items AS jsonb)) AS p(id text, patch jsonb) "
                "WHERE n.id = p.id",
                {"items": items},
            )
        )

    async def delete_edges(self, rows: list[tuple[str, str, str]]) -> None:
        items = json.dumps([{"s": s, "d": d, "r": r} for s, d, r in rows])
        await self._write(
            (
                "DELETE FROM graph_edge AS e USING jsonb_to_recordset(CAST(:items AS jsonb)) AS x(s text, d "
                "text, r text) "
                "WHERE e.source_id = x.s AND e.target_id = x.d AND e.relationship_name = x.r",
                {"items": items},
            )
        )

    async def delete_nodes(self, ids: list[str]) -> None:
        # graph_edge's foreign keys cascade: the node's edges go with it
        await self._write(("DELETE FROM graph_node WHERE id = ANY(:ids)", {"ids": ids}))

    async def checkpoint(self) -> None:
        """Nothing to flush: every write above committed its own transaction."""

    async def nodes_by_type_names(self, type_: str, names: list[str]) -> list[dict]:
        """One (index-seek) query per name."""
        found = []
        for name in names:
            found += await self.nodes_by_type_name(type_, name)
        return found

    async def all_vectors(self, name: str) -> Optional[tuple[list[str], list]]:
        """None: gate 1 searches pgvector fact by fact (its HNSW index)."""
        return None

    async def lexical(self, name: str, texts: list[str], limit: int) -> list[list[tuple]]:
        return await lexical.search_postgres(self.vector, name, texts, limit)

    async def maintain(self, commits: int) -> None:
        """Nothing more: no checkpoint leak, no LanceDB versions."""

    async def vector_housekeeping(self, names: Iterable[str], fragments: int) -> list[str]:
        """An HNSW index (cosine, what cognee's search orders by) on each FALSIFY collection
        that exists and has none yet; cognee creates no approximate-nearest-neighbour index.
        Returns the collections indexed now. What the opening found in place already
        (``prepare_database``'s catalog query) is not asked for again: a process's first commit
        runs no DDL on a database whose indexes exist."""
        from sqlalchemy import text

        names = list(names)
        present = _present.get(self.url, set())
        if NAME_INDEX in present and OLD_NAME_INDEX not in present:
            self._graph_indexed = True
        self._indexed.update(
            name
            for name in names
            if hnsw_index_name(name) in present and lexical.fts_index_name(name) in present
        )
        if not self._graph_indexed:
            # the subject-predicate lookup's index (index_graph): made at
            # open when graph_node exists, else here after the first commit created it. Without it
            # each lookup was a scan of graph_node (18 ms on the MQuAKE x10 graph, EXPLAIN ANALYZE).
            async with self.graph.engine.begin() as conn:
                if (await conn.execute(text("SELECT to_regclass('graph_node') IS NOT NULL"))).scalar():
                    for statement in NAME_INDEX_SQL.split("; "):
                        await conn.execute(text(statement))
                    self._graph_indexed = True
        done = []
        for name in names:
            if name in self._indexed or not await self.vector.has_collection(name):
                continue
            async with self.vector.engine.begin() as conn:
                await conn.execute(
                    text(
                        f'CREATE INDEX IF NOT EXISTS "{hnsw_index_name(name)}" ON "{name}" '
                        "USING hnsw (vector vector_cosine_ops)"
                    )
                )
                await conn.execute(text(lexical.postgres_fts_index_sql(name)))  # gate 1's lexical search
            self._indexed.add(name)
            done.append(name)
        return done

    async def vector_ids(self, name: str) -> set[str]:
        from sqlalchemy import text

        if not await self.vector.has_collection(name):
            return set()
        async with self.vector.engine.connect() as conn:
            return {str(r[0]) for r in (await conn.execute(text(f'SELECT id FROM "{name}"'))).all()}


def database_url(settings: Settings) -> str:
    """The PostgreSQL URL FALSIFY uses (``postgresql://...``; no driver suffix): ``FALSIFY_DATABASE_URL``,
    else cognee's ``DB_HOST`` / ``DB_PORT`` / ``DB_USERNAME`` / ``DB_PASSWORD`` / ``DB_NAME`` (all read
    into ``settings``)."""
    from urllib.parse import quote

    url = settings.database_url or ""
    if url:
        scheme, sep, rest = url.partition("://")
        if not sep or scheme.split("+")[0] not in ("postgresql", "postgres"):
            raise InputError("FALSIFY_DATABASE_URL must be postgresql://user:password@host:port/database")
        url = "postgresql://" + rest
        problem = _malformed(url)
        if problem:
            raise InputError(f"the PostgreSQL URL for {_redact(url)} is malformed: {problem}")
        return url
    need = {
        "DB_HOST": settings.db_host,
        "DB_USERNAME": settings.db_username,
        "DB_PASSWORD": settings.db_password,
        "DB_NAME": settings.db_name,
    }
    missing = [k for k, v in need.items() if not v]
    if missing:
        raise InputError(
            "FALSIFY_BACKEND=postgres needs FALSIFY_DATABASE_URL or DB_HOST, DB_USERNAME, "
            f"DB_PASSWORD and DB_NAME (missing: {', '.join(missing)})"
        )
    return (
        f"postgresql://{quote(need['DB_USERNAME'], safe='')}:{quote(need['DB_PASSWORD'], safe='')}"
        f"@{need['DB_HOST']}:{settings.db_port}/{need['DB_NAME']}"
    )


def _malformed(url: str) -> Optional[str]:
    """What is wrong with the PostgreSQL URL ``url`` as cognee's adapters read it, or None."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError as error:  # e.g. an unclosed [IPv6] host
        return str(error)
    try:
        parts.port  # noqa: B018  (raises for a port that is no number, or out of range)
    except ValueError:
        port = parts.netloc.rpartition("@")[2].rpartition("]")[2].partition(":")[2]
        return f"its port {port!r} is not a number from 0 to 65535"
    return None


def cognee_values(url: str) -> dict[str, str]:
    """cognee's settings for its postgres graph adapter and pgvector adapter on the database ``url``
    (set explicitly, so cognee does not fall back to, or warn about, its relational settings).
    cognee pastes the user and password into a URL of its own (``postgresql+asyncpg://{user}:
    {password}@...``, which SQLAlchemy decodes): they are given percent-encoded, so a password
    holding ``@ : / # ? %`` reaches the server as written."""
    from urllib.parse import quote, unquote, urlsplit

    parts = urlsplit(url)
    if not parts.password:
        raise InputError(
            f"the PostgreSQL URL for {_redact(url)} needs a password (cognee's adapters refuse an empty one)"
        )
    from memory_core.core.redaction import register

    register([unquote(parts.password)])  # masked as written and decoded, wherever an error echoes it
    values = {"GRAPH_DATABASE_PROVIDER": "postgres", "VECTOR_DB_PROVIDER": "pgvector"}
    for prefix in ("GRAPH_DATABASE_", "VECTOR_DB_"):
        values.update(
            {
                prefix + "HOST": parts.hostname or "localhost",
                prefix + "PORT": str(parts.port or 5432),
                prefix + "USERNAME": quote(unquote(parts.username or ""), safe=""),
                prefix + "PASSWORD": quote(unquote(parts.password), safe=""),
                prefix + "NAME": parts.path.lstrip("/"),
            }
        )
    return values


class PgWriterLock:
    """One writer per database across processes and machines: a session-level advisory
    lock held on a dedicated connection (PostgreSQL releases it when the holder's
    connection ends, so a killed writer never blocks the next one)."""

    def __init__(self, url: str, purpose: str = "falsify", timeout: Optional[float] = None):
        self.url = url
        self.purpose = purpose
        self.timeout = timeout
        self._conn = None
        # (backend pid, backend start) of the session holding the lock: the fence's identity of
        # it (a pid alone could be a later session's)
        self.session: Optional[tuple] = None

    def acquire(self, timeout: float | None = None) -> "PgWriterLock":
        timeout = default_timeout(self.timeout) if timeout is None else timeout
        conn = connect(self.url, f"falsify pid {os.getpid()} ({self.purpose})")
        deadline = time.monotonic() + timeout
        try:
            with conn.cursor() as cur:
                while True:
                    # the lock and, once taken, the session's identity (the fence's), in one round trip
                    cur.execute(
                        "SELECT pg_try_advisory_lock(%s), pg_backend_pid(), "
                        "(SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())",
                        (WRITER_LOCK_KEY,),
                    )
                    taken, pid, started = cur.fetchone()
                    if taken:
                        self.session = (pid, started)
                        break
                    if time.monotonic() >= deadline:
                        cur.execute(
                            "SELECT a.application_name, a.client_addr FROM pg_locks l JOIN pg_stat_activity a "
                            "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.objid = %s "
                            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                            (WRITER_LOCK_KEY,),
                        )
                        row = cur.fetchone()
                        holder = (
                            (f"{row[0] or 'a client'}" + (f" at {row[1]}" if row[1] else ""))
                            if row
                            else "another process"
                        )
                        raise RootBusy(
                            f"the database {_redact(self.url)} is in use by {holder}; waited {timeout:g}s "
                            "(set FALSIFY_LOCK_TIMEOUT to wait longer)"
                        )
                    time.sleep(0.05)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return self

    def release(self) -> None:
        if self._conn is not None:
            try:
                with self._conn.cursor() as cur:
                    cur.execute("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK_KEY,))
            except Exception:  # noqa: BLE001 - closing the session releases it anyway
                pass
            finally:
                self._conn.close()
                self._conn = None
                self.session = None

    async def acquire_async(self, timeout: float | None = None) -> "PgWriterLock":
        """:meth:`acquire` in a worker thread (waiting never blocks the event loop)."""
        import asyncio

        return await asyncio.to_thread(self.acquire, timeout)

    def __enter__(self):
        return self.acquire() if self._conn is None else self

    def __exit__(self, *exc):
        self.release()


# the driver errors of a connection lost or refused: asyncpg's (cognee's engines, under
# SQLAlchemy's DBAPIError), psycopg2's named ones, the socket's
_CONNECTION_LOST = frozenset(
    {
        "ConnectionDoesNotExistError",
        "ConnectionFailureError",
        "AdminShutdownError",
        "CrashShutdownError",
        "CannotConnectNowError",
        "AdminShutdown",
        "CrashShutdown",
        "CannotConnectNow",
        "ConnectionError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "ConnectionAbortedError",
        "BrokenPipeError",
    }
)


def _redact(url: str) -> str:
    """``host:port/database`` of the URL ``url``: never its user or password (also for a URL
    whose port is malformed: then as written)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "(a malformed URL)"
    hostport = parts.netloc.rpartition("@")[2]
    try:
        port = parts.port
    except ValueError:
        return f"{hostport}{parts.path}"
    return f"{parts.hostname or ''}:{port or 5432}{parts.path}"


class PgJournal(Journal):
    """The journal with the log and the intent in the database. ``meta()`` (embedder record,
    default question) stays in the local root."""

    def __init__(self, root: Path, url: str, lock: Optional[PgWriterLock] = None):
        super().__init__(root)
        self.url = url
        self.lock = lock  # the writer lock fencing begin() and commit(); None: an opening without one
        make_private(self.root)  # the local root (meta, logs) is private on this backend too
        prepare_database(url)
        self._conn = take_connection(url)  # the one the opening's checks used (their query just ran on it)

    def close(self) -> None:
        """The connection is kept for this process's next opening of the database (``give_back``)."""
        if self._conn is not None:
            give_back(self.url, self._conn)
            self._conn = None

    def _connection(self):
        """The journal's connection, made again when the last one was lost (a restart, a
        failover, a terminated session): a long-lived process goes on once the database is
        back, its writes fenced on the writer lock as before."""
        if self._conn is None or self._conn.closed:
            self._conn = None
            try:
                self._conn = connect(self.url, journal_name())
            except DatabaseUnavailable as error:
                raise DatabaseUnavailable(
                    f"lost the connection to the PostgreSQL database {_redact(self.url)} and cannot make it "
                    f"again ({str(error).partition(': ')[2].rpartition(' (nothing was opened')[0]}); a change "
                    "under way stays journalled in the database and its next writer rolls it back"
                ) from None
        return self._conn

    def _dropped(self, error: BaseException) -> DatabaseUnavailable:
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        return DatabaseUnavailable(
            f"lost the connection to the PostgreSQL database {_redact(self.url)} ({reason}); the next command "
            "connects again"
        )

    def unavailable(self, error: BaseException) -> Optional[DatabaseUnavailable]:
        """:class:`DatabaseUnavailable` when ``error`` (or what caused it) is a lost or refused
        connection to the database: the journal's (psycopg2) or cognee's (asyncpg under SQLAlchemy)."""
        seen = set()
        todo = [error]
        while todo:
            e = todo.pop()
            if e is None or id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, DatabaseUnavailable):
                return e
            if type(e).__name__ in _CONNECTION_LOST or getattr(e, "connection_invalidated", False):
                return self._dropped(e)
            if type(e).__name__ in ("OperationalError", "InterfaceError") and type(e).__module__.startswith(
                "psycopg2"
            ):
                return self._dropped(e)
            todo += [getattr(e, "orig", None), e.__cause__, e.__context__]
        return None

    def _query(self, sql: str, params=()) -> list:
        import psycopg2

        conn = self._connection()
        try:
            with conn.cursor() as cur:
                cur.execute(sql, params)
                return cur.fetchall() if cur.description else []
        except (psycopg2.OperationalError, psycopg2.InterfaceError) as error:
            if conn.closed:
                self._conn = None  # made again by the next call
                raise self._dropped(error) from error
            raise

    def epoch(self) -> int:
        rows = self._query("SELECT max(epoch) FROM falsify_log")
        return int(rows[0][0] or 0)

    def entries_backwards(self, block: int = 256) -> Iterator[dict]:
        """Newest first, fetched in blocks of 1, 2, 4, ... up to ``block`` rows: the cost
        follows how far back the caller looks (at most twice that), as with the embedded
        log read from its end. A fixed block of 256 made every ``last_entry()`` fetch and
        decode the whole log of a young database: on the MQuAKE x10 graph (ten load entries
        of ~1,400 nodes each) that was 57 s of JSON decoding in 16 revisions and 32 undos
        (cProfile), the x10/x1 latency ratio 2.5 against 1.08 embedded."""
        before, size = None, 1
        while True:
            if before is None:
                rows = self._query("SELECT seq, entry FROM falsify_log ORDER BY seq DESC LIMIT %s", (size,))
            else:
                rows = self._query(
                    "SELECT seq, entry FROM falsify_log WHERE seq < %s ORDER BY seq DESC LIMIT %s",
                    (before, size),
                )
            if not rows:
                return
            for seq, entry in rows:
                yield entry
            if len(rows) < size:
                return
            before = rows[-1][0]
            size = min(size * 2, block)

    def entries(self) -> Iterator[dict]:
        after = 0
        while True:
            rows = self._query(
                "SELECT seq, entry FROM falsify_log WHERE seq > %s ORDER BY seq LIMIT 1000", (after,)
            )
            if not rows:
                return
            for seq, entry in rows:
                yield entry
            after = rows[-1][0]

    # ---- the writer fence --------------------------------------------------
    def _fence(self) -> tuple[str, tuple]:
        """A condition true while this opening's lock session still holds the writer lock (an
        advisory lock on key WRITER_LOCK_KEY: classid 0, objid the key, objsubid 1), with its
        parameters; "TRUE" for an opening without a lock."""
        if self.lock is None:
            return "TRUE", ()
        pid, started = self.lock.session or (None, None)
        return (
            "EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = %s "
            "AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND l.pid = %s AND a.backend_start = %s)",
            (WRITER_LOCK_KEY, pid, started),
        )

    def _lost(self, what: str) -> WriterLockLost:
        return WriterLockLost(
            f"this process no longer holds the writer lock of the database {_redact(self.url)}: the session "
            "holding it ended (a server restart or failover, idle_session_timeout, a terminated session), so "
            f"another process may be writing; {what}. Open the data root again (restart this process)"
        )

    def check_writer(self) -> None:
        """One query: :class:`WriterLockLost` unless this opening still holds the writer lock."""
        fence, params = self._fence()
        if not self._query(f"SELECT 1 WHERE {fence}", params):
            raise self._lost("nothing more is written through this opening")

    # ---- pending intent --------------------------------------------------
    def begin(self, intent: dict) -> None:
        """The intent row, written only while this opening holds the writer lock."""
        fence, params = self._fence()
        written = self._query(
            f"INSERT INTO falsify_intent (slot, epoch, intent) SELECT 1, %s, %s WHERE {fence} "
            "ON CONFLICT (slot) DO UPDATE SET epoch = EXCLUDED.epoch, intent = EXCLUDED.intent, "
            "written_at = now() RETURNING slot",
            (intent.get("epoch"), json.dumps(intent), *params),
        )
        if not written:
            raise self._lost("nothing was written")

    def pending(self) -> Optional[dict]:
        rows = self._query("SELECT intent FROM falsify_intent WHERE slot = 1")
        return rows[0][0] if rows else None

    def set_aside_pending(self) -> str:
        """The intent row, written unchanged to a file of the local journal directory, then
        deleted from the database (begin() writes only intents, so only a hand-made row gets here)."""
        intent = self.pending()
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        aside = set_aside_path(self.dir)
        aside.write_text(json.dumps(intent), encoding="utf-8")
        self.clear()
        return aside.name

    def commit(self, entry: dict) -> None:
        """The commit point: the log entry in, the intent out, in ONE transaction, and only
        while this opening holds the writer lock (the condition is read in that transaction)."""
        import psycopg2
        from psycopg2.errors import UniqueViolation

        fence, params = self._fence()
        epoch = int(entry["epoch"])
        conn = self._connection()
        conn.autocommit = False
        try:
            with conn.cursor() as cur:
                try:
                    cur.execute(
                        f"INSERT INTO falsify_log (epoch, entry) SELECT %s, %s WHERE {fence}",
                        (epoch, json.dumps(entry, sort_keys=True), *params),
                    )
                except UniqueViolation:
                    raise self._lost(
                        f"epoch {epoch} is in the log already; this change was not committed"
                    ) from None
                if cur.rowcount != 1:
                    raise self._lost(
                        f"the change of epoch {epoch} was not committed (the database's next writer rolls "
                        "back what it had written)"
                    )
                cur.execute("DELETE FROM falsify_intent WHERE slot = 1")
            conn.commit()
        except (psycopg2.OperationalError, psycopg2.InterfaceError) as error:
            if conn.closed:  # the commit's outcome is read from the log by the caller, reconnected
                self._conn = None
                raise self._dropped(error) from error
            conn.rollback()
            raise
        except BaseException:
            if not conn.closed:
                conn.rollback()
            raise
        finally:
            if not conn.closed:
                conn.autocommit = True

    def clear(self) -> None:
        self._query("DELETE FROM falsify_intent WHERE slot = 1")

    def repair_log(self) -> bool:
        return False  # a log row is inserted whole or not at all

    def log_problems(self, limit: int) -> list[str]:
        """The rows a reader meets out of order, as the embedded log's check names lines: an
        epoch not after every row before it (a repeated row, or one misplaced), or an entry
        whose epoch is not its row's. A row is jsonb, inserted whole or not at all: none is
        torn. One query; at most ``limit`` rows named, then how many more."""
        rows = self._query(
            "SELECT seq, epoch, same, before_seq, before_epoch, entry_epoch, count(*) OVER () FROM ("
            "  SELECT seq, epoch, entry->'epoch' AS entry_epoch,"
            "    entry = lag(entry) OVER w AS same, lag(seq) OVER w AS before_seq,"
            "    max(epoch) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_epoch"
            "  FROM falsify_log WINDOW w AS (ORDER BY seq)"
            ") AS log WHERE epoch <= before_epoch OR entry_epoch IS DISTINCT FROM to_jsonb(epoch) "
            "ORDER BY seq LIMIT %s",
            (int(limit),),
        )
        problems = []
        for seq, epoch, same, before_seq, before_epoch, entry_epoch, _ in rows:
            if before_epoch is not None and epoch <= before_epoch:
                problems.append(
                    f"falsify_log row {seq} repeats row {before_seq} (epoch {epoch})"
                    if same
                    else f"falsify_log row {seq} has epoch {epoch}, not after the epoch {before_epoch} of a row "
                    "before it"
                )
            else:
                problems.append(f"falsify_log row {seq} has epoch {epoch} but its entry says {entry_epoch!r}")
        more = rows[0][-1] - len(rows) if rows else 0
        if more > 0:
            problems.append(f"falsify_log has {more} more rows out of order")
        return problems

    def committed(self, epoch: int) -> bool:
        return bool(self._query("SELECT 1 FROM falsify_log WHERE epoch = %s LIMIT 1", (int(epoch),)))
