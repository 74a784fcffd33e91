"""The revision log in the database (memory_core/store/backends/postgres.py PgJournal), read from its
end like the embedded log (tests/unit/test_journal.py): the same entries as a forward read,
whatever the block size, and the rows fetched follow how far back the caller looks (the
newest entry is one row, not the whole log). Also: a database that FALSIFY opened before
cognee created ``graph_node`` gets the subject-predicate index after its first commit (the
benchmark's x10 graph ran without it: a scan per lookup). Runs in the postgres session of
``make test`` on fresh databases of its own; skipped on the embedded backend.
"""

from __future__ import annotations

import random

import pytest

from conftest import BACKEND, SEED, clean_env, cli

pytestmark = pytest.mark.skipif(
    BACKEND != "postgres", reason="PostgreSQL backend only (FALSIFY_TEST_BACKEND=postgres)"
)


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    import pg_server
    from memory_core.store.backends.postgres import PgJournal

    root = tmp_path_factory.mktemp("pgjournal")
    journal = PgJournal(root, pg_server.root_env(root, fresh=True)["FALSIFY_DATABASE_URL"])
    rng = random.Random(7)
    entries = [{"epoch": i, "kind": "revision", "pad": "x" * rng.randrange(0, 300)} for i in range(1, 60)]
    for entry in entries:
        journal.begin({"epoch": entry["epoch"]})
        journal.commit(entry)
    yield journal, entries
    journal.close()


@pytest.mark.parametrize("block", [1, 7, 64, 256])
def test_backwards_is_forwards_reversed(journal, block):
    journal, entries = journal
    assert list(journal.entries()) == entries
    assert list(journal.entries_backwards(block=block)) == entries[::-1]
    assert journal.last_entry() == entries[-1] and journal.epoch() == 59 and journal.pending() is None


def test_rows_fetched_follow_how_far_back(journal, monkeypatch):
    journal, entries = journal
    fetched = []
    query = journal._query

    def counting(sql, params=()):
        rows = query(sql, params)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(journal, "_query", counting)
    assert journal.last_entry() == entries[-1]
    assert sum(fetched) == 1
    fetched.clear()
    walk = journal.entries_backwards()
    assert [next(walk) for _ in range(10)] == entries[:-11:-1]
    assert sum(fetched) < 20  # blocks 1, 2, 4, 8: at most twice as far as looked


@pytest.mark.slow
def test_fresh_database_gets_the_lookup_index_after_its_first_commit(tmp_path):
    import pg_server

    root = tmp_path / "root"
    url = pg_server.root_env(root, fresh=True)["FALSIFY_DATABASE_URL"]
    proc = cli(root, "load", str(SEED), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    indexes = pg_server._admin_sql("SELECT indexname FROM pg_indexes WHERE tablename = 'graph_node'", url)
    assert ("falsify_node_type_name_md5",) in indexes, indexes


@pytest.mark.slow
def test_a_name_longer_than_a_btree_entry_is_stored_and_found(tmp_path):
    """A triple's subject of ~5,000 characters of varied text (valid input: up to 8,000) makes a
    "subject|predicate" name no btree entry holds (~2,700 bytes): the lookup's index is on its
    md5, so the revision lands as on the embedded backend, and the name is found again."""
    import pg_server

    root = tmp_path / "root"
    url = pg_server.root_env(root, fresh=True)["FALSIFY_DATABASE_URL"]
    proc = cli(root, "load", str(SEED), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rng = random.Random(1)
    subject = " ".join(
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8)) for _ in range(560)
    )
    for _ in range(2):  # the second finds the first by its name (the md5 index, then the name)
        proc = cli(root, "revise", "A long fact.", "--triple", f"{subject}|is dated|1 May 2021", "--record")
        assert proc.returncode == 0, proc.stderr[-2000:]
    names = pg_server._admin_sql("SELECT length(name) FROM graph_node WHERE length(name) > 4000", url)
    assert names and all(n[0] > 4400 for n in names), names
    assert cli(root, "check").returncode == 0


def run_host(tmp_path, script: str, *more: str) -> tuple[dict, str]:
    """``script`` run as a host process (forked) on a fresh root and database: the JSON of its
    last line, and the database's URL."""
    import json
    import sys

    import forkserver
    import pg_server
    from conftest import REPO, clean_env

    root = tmp_path / "host"
    url = pg_server.root_env(root, fresh=True)["FALSIFY_DATABASE_URL"]
    env = clean_env()
    env.pop("FALSIFY_DATABASE_URL", None)
    proc = forkserver.run(
        [sys.executable, "-c", script, str(root), url, str(SEED), *more],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), url


def _terminate(url: str, pid: int) -> None:
    import pg_server

    # with a timeout PostgreSQL waits until the session has ended (and its locks are released)
    assert pg_server._admin_sql(f"SELECT pg_terminate_backend({int(pid)}, 60000)", url) == [(True,)]


def test_a_journal_whose_lock_session_ended_writes_nothing(tmp_path):
    """The writer lock is a session-level advisory lock: when its session ends (a restart, a
    failover, idle_session_timeout, a DBA's pg_terminate_backend) the holder is not told, and
    another process may take the lock. The journal's writes are fenced on that very session
    still holding it: the intent, the commit point and the check before a write are refused
    (WriterLockLost, exit 7) and write nothing; a new lock is the next writer's."""
    import pg_server
    from memory_core.core.errors import WriterLockLost
    from memory_core.store.backends.postgres import PgJournal, PgWriterLock

    url = pg_server.root_env(tmp_path / "fenced", fresh=True)["FALSIFY_DATABASE_URL"]
    lock = PgWriterLock(url, "fence test").acquire(timeout=5)
    journal = PgJournal(tmp_path / "root", url, lock)
    try:
        journal.check_writer()
        journal.begin({"epoch": 1})
        journal.commit({"epoch": 1, "kind": "revision"})
        journal.begin({"epoch": 2})  # a revision under way when the lock's session ends
        _terminate(url, lock.session[0])
        with pytest.raises(WriterLockLost, match="no longer holds the writer lock") as refused:
            journal.commit({"epoch": 2, "kind": "revision"})
        assert refused.value.exit_code == 7 and "not committed" in str(refused.value)
        assert journal.epoch() == 1 and journal.pending() == {"epoch": 2}  # the next writer rolls it back
        journal.clear()
        with pytest.raises(WriterLockLost):
            journal.check_writer()
        with pytest.raises(WriterLockLost, match="nothing was written"):
            journal.begin({"epoch": 2})
        assert journal.pending() is None and journal.epoch() == 1
        # another process takes the lock at once (the lost one is gone) and writes
        other = PgWriterLock(url, "next writer").acquire(timeout=5)
        try:
            second = PgJournal(tmp_path / "root2", url, other)
            second.begin({"epoch": 2})
            second.commit({"epoch": 2, "kind": "revision"})
            second.close()
        finally:
            other.release()
    finally:
        lock.release()
        journal.close()
    with pytest.raises(WriterLockLost):  # a released lock fences too
        PgJournal(tmp_path / "root", url, lock).check_writer()


def test_one_epoch_one_log_row(tmp_path):
    """falsify_log.epoch is UNIQUE on a new database, and on an older one at open when its log
    repeats no epoch (a repeated one stays for check to name)."""
    import psycopg2
    import pg_server
    from memory_core.store.backends import postgres

    url = pg_server.root_env(tmp_path / "unique", fresh=True)["FALSIFY_DATABASE_URL"]
    journal = postgres.PgJournal(tmp_path / "root", url)
    try:
        journal.begin({"epoch": 1})
        journal.commit({"epoch": 1})
        with pytest.raises(psycopg2.errors.UniqueViolation):
            pg_server._admin_sql("INSERT INTO falsify_log (epoch, entry) VALUES (1, '{\"epoch\": 1}')", url)
        pg_server._admin_sql(f"DROP INDEX {postgres.UNIQUE_EPOCH_INDEX}", url)
        pg_server._admin_sql("INSERT INTO falsify_log (epoch, entry) VALUES (1, '{\"epoch\": 1}')", url)
        postgres._prepared.discard(url)
        postgres.prepare_database(url)  # a repeated epoch: no index yet, nothing fails
        indexes = pg_server._admin_sql(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'falsify_log'", url
        )
        assert (postgres.UNIQUE_EPOCH_INDEX,) not in indexes
        pg_server._admin_sql("DELETE FROM falsify_log WHERE seq = (SELECT max(seq) FROM falsify_log)", url)
        postgres._prepared.discard(url)
        postgres.prepare_database(url)
        indexes = pg_server._admin_sql(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'falsify_log'", url
        )
        assert (postgres.UNIQUE_EPOCH_INDEX,) in indexes
    finally:
        journal.close()


HOST_LOSES_ITS_LOCK = """
import asyncio, json, sys
import psycopg2
from memory_core import Falsify, FalsifyError
root, url, seed = sys.argv[1:4]
async def main():
    fx = await Falsify.open(root, database=url)
    await fx.load_file(seed)
    before = fx.journal.epoch()
    conn = psycopg2.connect(url)
    conn.autocommit = True
    conn.cursor().execute("SELECT pg_terminate_backend(%s, 60000)", (fx.journal.lock.session[0],))
    conn.close()
    out = {"before": before}
    try:
        await fx.revise("Forensic audit: the March QA report was back-dated.", target="E_qa")
    except FalsifyError as error:
        out["refused"] = [type(error).__name__, error.exit_code, str(error)]
    out["after"] = fx.journal.epoch()
    out["pending"] = fx.journal.pending()
    await fx.close()
    fx = await Falsify.open(root, database=url)  # a new opening takes the lock again
    result = await fx.revise("Forensic audit: the March QA report was back-dated.", target="E_qa")
    out["reopened"] = [fx.journal.epoch(), result["epoch"]]
    await fx.close()
    print(json.dumps(out))
asyncio.run(main())
"""


@pytest.mark.slow
def test_a_host_whose_lock_session_ended_is_refused_and_a_new_opening_writes(tmp_path):
    """Through the API: the lock's session terminated, a revise is WriterLockLost (exit 7)
    and leaves the log and the intent as they were; the data root opened again writes."""
    import pg_server

    out, url = run_host(tmp_path, HOST_LOSES_ITS_LOCK)
    kind, code, message = out["refused"]
    assert (kind, code) == ("WriterLockLost", 7) and "nothing more is written" in message, message
    assert out["after"] == out["before"] and out["pending"] is None
    assert out["reopened"] == [out["before"] + 1] * 2
    assert pg_server._admin_sql("SELECT count(*), count(DISTINCT epoch) FROM falsify_log", url) == [(2, 2)]


def test_check_names_log_rows_out_of_order(tmp_path):
    """check reads falsify_log as it reads the embedded log: a repeated row, an epoch not
    after the rows before it, an entry whose epoch is not its row's are named (at most
    ``limit`` of them, then how many more)."""
    import pg_server
    from memory_core.store.backends import postgres

    url = pg_server.root_env(tmp_path / "outoforder", fresh=True)["FALSIFY_DATABASE_URL"]
    journal = postgres.PgJournal(tmp_path / "root", url)
    try:
        for epoch in (1, 2, 3):
            journal.begin({"epoch": epoch})
            journal.commit({"epoch": epoch, "kind": "revision"})
        assert journal.log_problems(5) == []
        pg_server._admin_sql(f"DROP INDEX {postgres.UNIQUE_EPOCH_INDEX}", url)
        for sql in (
            'INSERT INTO falsify_log (epoch, entry) VALUES (3, \'{"epoch": 3, "kind": "revision"}\')',
            'INSERT INTO falsify_log (epoch, entry) VALUES (2, \'{"epoch": 2, "kind": "batch"}\')',
            "INSERT INTO falsify_log (epoch, entry) VALUES (4, '{\"epoch\": 5}')",
        ):
            pg_server._admin_sql(sql, url)
        assert journal.log_problems(5) == [
            "falsify_log row 4 repeats row 3 (epoch 3)",
            "falsify_log row 5 has epoch 2, not after the epoch 3 of a row before it",
            "falsify_log row 6 has epoch 4 but its entry says 5",
        ]
        assert journal.log_problems(1) == [
            "falsify_log row 4 repeats row 3 (epoch 3)",
            "falsify_log has 2 more rows out of order",
        ]
    finally:
        journal.close()


@pytest.mark.slow
def test_check_exits_1_on_a_repeated_epoch(tmp_path):
    import pg_server

    root = tmp_path / "root"
    url = pg_server.root_env(root, fresh=True)["FALSIFY_DATABASE_URL"]
    proc = cli(root, "load", str(SEED), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    pg_server._admin_sql("DROP INDEX falsify_log_epoch_unique", url)
    pg_server._admin_sql("INSERT INTO falsify_log (epoch, entry) SELECT epoch, entry FROM falsify_log", url)
    proc = cli(root, "check")
    assert proc.returncode == 1 and "falsify_log row 2 repeats row 1 (epoch 1)" in proc.stdout, proc.stdout


def test_a_lost_journal_connection_is_exit_7_and_made_again(tmp_path):
    """The journal's connection terminated (a restart, a failover, idle_session_timeout): the
    call that meets it is DatabaseUnavailable (exit 7) naming the database, the next call
    connects again, and its writes are fenced on the writer lock as before."""
    import pg_server
    from memory_core.core.errors import DatabaseUnavailable
    from memory_core.store.backends.postgres import PgJournal, PgWriterLock

    url = pg_server.root_env(tmp_path / "reconnect", fresh=True)["FALSIFY_DATABASE_URL"]
    lock = PgWriterLock(url, "reconnect test").acquire(timeout=5)
    journal = PgJournal(tmp_path / "root", url, lock)
    try:
        journal.begin({"epoch": 1})
        journal.commit({"epoch": 1})
        _terminate(url, journal._conn.get_backend_pid())
        with pytest.raises(
            DatabaseUnavailable, match="lost the connection to the PostgreSQL database"
        ) as lost:
            journal.epoch()
        assert lost.value.exit_code == 7 and "internal" not in str(lost.value)
        assert journal.epoch() == 1
        journal.check_writer()
        _terminate(url, journal._conn.get_backend_pid())
        with pytest.raises(DatabaseUnavailable):
            journal.commit({"epoch": 2})
        journal.begin({"epoch": 2})
        journal.commit({"epoch": 2})
        assert journal.epoch() == 2 and journal.pending() is None
    finally:
        lock.release()
        journal.close()


HOST_LOSES_COGNEE_CONNECTIONS = """
import asyncio, json, sys
import asyncpg, sqlalchemy
from memory_core import Falsify, FalsifyError
from memory_core.store import writer
root, url, seed, times = sys.argv[1:5]
apply, calls = writer.apply, []

async def apply_then_drop(store, intent, hook=None):
    # what cognee's engine raises when the server goes away mid-statement: the first call (the
    # revision) writes, then fails; with times=always the rollback's call fails too
    calls.append(1)
    if len(calls) == 1:
        await apply(store, intent, hook)
    elif times != "always":
        return await apply(store, intent, hook)
    raise sqlalchemy.exc.DBAPIError(
        "UPDATE graph_node", {}, asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed")
    )

async def main():
    fx = await Falsify.open(root, database=url)
    await fx.load_file(seed)
    out = {"before": fx.journal.epoch()}
    writer.apply = apply_then_drop
    try:
        await fx.revise("Forensic audit: the March QA report was back-dated.", target="E_qa")
    except FalsifyError as error:
        out["refused"] = [type(error).__name__, error.exit_code, str(error)]
    writer.apply = apply
    out["pending"] = fx.journal.pending() is not None
    await fx.close()
    fx = await Falsify.open(root, database=url)  # rolls back what is still journalled
    out["after"] = fx.journal.epoch()
    out["problems"] = (await fx.check())["problems"]
    await fx.close()
    print(json.dumps(out))
asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.parametrize("times", ["once", "always"])
def test_a_write_that_loses_its_connection_is_exit_7_and_lands_not_at_all(tmp_path, times):
    """cognee's connection lost as a revision writes (once: the rollback reconnects; always:
    the rollback fails too, as with the server stopped): DatabaseUnavailable (exit 7), not an
    internal error or RollbackFailed; opened again, the state before it and check clean."""
    out, _ = run_host(tmp_path, HOST_LOSES_COGNEE_CONNECTIONS, times)
    kind, code, message = out["refused"]
    assert (kind, code) == ("DatabaseUnavailable", 7) and "lost the connection" in message, message
    if times == "once":
        assert "rolled back, nothing was written" in message and not out["pending"], out
    else:
        assert "not rolled back by this process" in message and out["pending"], out
    assert out["after"] == out["before"] and out["problems"] == [], out


HOST_COUNTS_ITS_OPENINGS = """
import asyncio, json, sys
import psycopg2
from memory_core import Falsify
from memory_core.store.backends import postgres
root, url, seed = sys.argv[1:4]
import sqlalchemy
made, schema, reflected = [], [], []
connect, make_schema, reflect = psycopg2.connect, postgres._make_schema, sqlalchemy.MetaData.reflect
psycopg2.connect = lambda *a, **k: made.append(k.get("application_name")) or connect(*a, **k)
postgres._make_schema = lambda *a, **k: schema.append(1) or make_schema(*a, **k)
sqlalchemy.MetaData.reflect = lambda self, *a, **k: reflected.append(1) or reflect(self, *a, **k)
housekeeping = postgres.PostgresBackend.vector_housekeeping
ddl = []
async def counting(self, names, fragments):
    done = await housekeeping(self, names, fragments)
    ddl.append(len(done))
    return done
postgres.PostgresBackend.vector_housekeeping = counting

async def opening(write):
    # what a new process's opening pays: the process's memo of a prepared database and the
    # connection its last opening kept forgotten (a new process makes one: reach(), before the lock)
    postgres._prepared.clear()
    postgres._present.clear()
    for conn in postgres._idle.values():
        conn.close()
    postgres._idle.clear()
    made.clear(); schema.clear(); ddl.clear(); reflected.clear()
    fx = await Falsify.open(root, database=url)
    if write:
        await fx.revise("Forensic audit: the March QA report was back-dated.", target="E_qa")
        await fx.undo()
        await fx.recall()
    else:
        await fx.status()
    await fx.close()
    return {"connections": len(made), "schema": len(schema), "indexed": sum(ddl), "reflected": len(reflected)}

async def main():
    fx = await Falsify.open(root, database=url)  # the database's first opening makes the schema
    await fx.load_file(seed)
    await fx.close()
    print(json.dumps({"read": await opening(False), "write": await opening(True)}))
asyncio.run(main())
"""


@pytest.mark.slow
def test_an_opening_of_a_prepared_database_makes_no_schema_and_two_connections(tmp_path):
    """Once a database has FALSIFY's tables and indexes, an opening (what every command of the
    warm launcher pays, and a server once) checks them in one query: no DDL, no catalog write,
    no lock for it, and its first commit makes no index; FALSIFY opens two connections of its own
    (the writer lock's session, and the one its checks and its journal share), not five; and
    cognee's pgvector adapter reflects no table (FALSIFY's collections are declared at open)."""
    out, _ = run_host(tmp_path, HOST_COUNTS_ITS_OPENINGS)
    assert out["read"] == {"connections": 2, "schema": 0, "indexed": 0, "reflected": 0}, out
    assert out["write"] == {"connections": 2, "schema": 0, "indexed": 0, "reflected": 0}, out


def test_an_idle_connection_the_server_closed_is_made_again(tmp_path):
    """The connection an opening keeps between its checks (a launcher's spare keeps it while it
    waits for its command) may be closed by the server meanwhile (a restart, idle_session_timeout):
    the checks connect again once, and the journal gets the new connection."""
    import pg_server
    from memory_core.store.backends import postgres

    url = pg_server.root_env(tmp_path / "idle", fresh=True)["FALSIFY_DATABASE_URL"]
    postgres.prepare_database(url)
    idle = postgres._idle[url]
    _terminate(url, idle.get_backend_pid())
    postgres._prepared.discard(url)
    postgres.prepare_database(url)
    assert postgres._idle[url] is not idle and not postgres._idle[url].closed
    journal = postgres.PgJournal(tmp_path / "root", url)
    try:
        assert journal.epoch() == 0 and url not in postgres._idle  # the journal took it
    finally:
        journal.close()
    assert postgres._idle[url].closed == 0  # given back for the process's next opening


def test_hnsw_ef_search_refused_to_a_role_is_said_once(tmp_path, monkeypatch, caplog):
    """A role that may set hnsw.ef_search neither for the database nor for itself (a managed
    service's restriction): one warning, by the opening that found it, recorded in falsify_meta;
    later openings by that role neither try again nor warn."""
    import logging

    import pg_server
    from memory_core.store.backends import postgres

    url = pg_server.root_env(tmp_path / "ef", fresh=True)["FALSIFY_DATABASE_URL"]
    database = url.rsplit("/", 1)[1]
    pg_server._admin_sql(f'ALTER DATABASE "{database}" RESET hnsw.ef_search')
    tried = []
    monkeypatch.setattr(
        postgres, "set_ef_search_default", lambda cur, owner: tried.append(owner) or "permission denied"
    )
    with caplog.at_level(logging.WARNING, logger="falsify"):
        for _ in range(3):
            postgres._prepared.discard(url)
            postgres.prepare_database(url)
    said = [r.getMessage() for r in caplog.records if "hnsw.ef_search" in r.getMessage()]
    assert len(tried) == 1 and len(said) == 1 and "permission denied" in said[0], (tried, said)
    assert "(said once)" in said[0] and "\n" not in said[0]
    keys = [k for (k,) in pg_server._admin_sql("SELECT key FROM falsify_meta", url)]
    assert [k for k in keys if k.startswith(postgres.EF_REFUSED)] == [postgres.EF_REFUSED + "postgres"], keys


@pytest.mark.slow
def test_a_role_not_owning_the_database_sets_hnsw_ef_search_for_itself_quietly(tmp_path):
    """An app role that is not the database's owner may not ALTER DATABASE; it sets hnsw.ef_search
    for itself in that database (a role may set its own defaults), once, with nothing on stderr;
    its sessions then search with ef_search 1000 (cognee's and FALSIFY's)."""
    import uuid
    from urllib.parse import urlsplit, urlunsplit

    import psycopg2
    import pg_server

    role = f"app_{uuid.uuid4().hex[:8]}"
    url = pg_server.root_env(tmp_path / "shared", fresh=True)["FALSIFY_DATABASE_URL"]
    database = url.rsplit("/", 1)[1]
    pg_server._admin_sql(f"CREATE ROLE {role} LOGIN PASSWORD 'apppw1'")
    try:
        pg_server._admin_sql(f'ALTER DATABASE "{database}" RESET hnsw.ef_search')
        pg_server._admin_sql("CREATE EXTENSION IF NOT EXISTS vector", url)
        pg_server._admin_sql(f"GRANT ALL ON SCHEMA public TO {role}", url)
        parts = urlsplit(url)
        mine = urlunsplit((parts.scheme, f"{role}:apppw1@{parts.hostname}:{parts.port}", parts.path, "", ""))
        env = {k: v for k, v in clean_env().items() if k not in ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL")}
        root = tmp_path / "root"
        for args in (["load", str(SEED)], ["status"], ["explain", "K"]):
            proc = cli(root, "--database", mine, *args, env=env, same_database=True)
            assert proc.returncode == 0, proc.stderr[-2000:]
            assert "ef_search" not in proc.stderr, proc.stderr
        conn = psycopg2.connect(mine)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT '[0]'::vector")
                cur.execute("SHOW hnsw.ef_search")
                assert cur.fetchone() == ("1000",)
        finally:
            conn.close()
    finally:
        pg_server._admin_sql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        pg_server._admin_sql(f"DROP ROLE IF EXISTS {role}")


def test_a_forked_child_never_ends_its_parents_idle_connection(tmp_path):
    """A child forked while the process keeps an idle connection (a host forking workers) does
    not use it, and its copy closed or collected in the child (at its exit) does not end the
    parent's session: the child's copy of the socket points at /dev/null."""
    import gc
    import os
    import time

    import pg_server
    from memory_core.store.backends import postgres

    url = pg_server.root_env(tmp_path / "fork", fresh=True)["FALSIFY_DATABASE_URL"]
    postgres.prepare_database(url)
    conn = postgres._idle[url]
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        code = 0 if not postgres._idle else 1
        del conn
        postgres._forked_away.clear()
        gc.collect()
        os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
    time.sleep(0.2)
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
