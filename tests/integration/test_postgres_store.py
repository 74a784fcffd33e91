"""The PostgreSQL backend's own contract (runs in the postgres session of ``make test``:
``FALSIFY_TEST_BACKEND=postgres pytest ...``; skipped on the embedded backend).

What FALSIFY relies on in cognee 1.6.5's postgres graph adapter and pgvector adapter,
checked against a real PostgreSQL 16 + pgvector (tests/support/pg_server.py): our JSONB merge is
what cognee's own readers return, our SQL reads equal cognee's typed reads, an HNSW index
serves each FALSIFY collection with the same answers as an exact scan, the revision log
and intent live in the database, and one writer per database holds an advisory lock.
"""

from __future__ import annotations

import os

import pytest

from conftest import BACKEND, SEED as SEED_PATH, cli, clean_env, seed_with_prefix

pytestmark = pytest.mark.skipif(
    BACKEND != "postgres", reason="PostgreSQL backend only (FALSIFY_TEST_BACKEND=postgres)"
)


async def _sql(engine, statement: str, params: dict | None = None) -> list:
    from sqlalchemy import text

    async with engine.connect() as conn:
        return list((await conn.execute(text(statement), params or {})).all())


async def test_cognee_runs_on_its_postgres_adapters(app):
    assert type(app.store.backend).__name__ == "PostgresBackend"
    assert (
        os.environ["GRAPH_DATABASE_PROVIDER"] == "postgres" and os.environ["VECTOR_DB_PROVIDER"] == "pgvector"
    )
    with pytest.raises(NotImplementedError):  # cognee's postgres graph adapter: no raw queries
        await app.store.graph.query("MATCH (n) RETURN n")
    assert (
        await _sql(app.store.vector.engine, "SELECT extname FROM pg_extension WHERE extname = 'vector'")
    ) == [("vector",)]


async def test_update_nodes_is_one_jsonb_merge_cognee_reads(app, prefix):
    from memory_core.store.models import node_id

    await app.load(seed_with_prefix(prefix))
    k = node_id("conclusion", prefix + "K")
    before = (await app.store.graph.get_nodes([k]))[0]
    await app.store.update_nodes(
        {
            k: {
                "truth_alignment": ["invalidated"],
                "truth_epoch": 11,
                "feedback_weight": 0.125,
                "confidence": 0.3,
            },
            "00000000-0000-0000-0000-000000000000": {"truth_epoch": 1},
        }
    )  # missing: skipped
    after = (await app.store.graph.get_nodes([k]))[0]
    assert (
        after["truth_alignment"],
        after["truth_epoch"],
        after["feedback_weight"],
        after["confidence"],
    ) == (["invalidated"], 11, 0.125, 0.3)
    untouched = {
        f
        for f in before
        if f not in ("truth_alignment", "truth_epoch", "feedback_weight", "confidence", "updated_at")
    }
    assert {f: after.get(f) for f in untouched} == {f: before[f] for f in untouched}
    # cognee's subgraph reader sees it too (the view FALSIFY builds reads the same rows)
    nodes, _ = await app.store.graph.get_neighborhood([node_id("question", prefix + "Q")], depth=1)
    assert dict(nodes)[k]["truth_alignment"] == ["invalidated"]
    # the stored column really is JSONB with the merged keys (one row, one statement)
    rows = await _sql(
        app.store.graph.engine,
        "SELECT properties->'truth_epoch', jsonb_typeof(properties) FROM graph_node WHERE id = :id",
        {"id": k},
    )
    assert rows == [(11, "object")]


async def test_sql_reads_equal_cognee_reads(app, prefix):
    from memory_core.store.models import node_id

    await app.load(seed_with_prefix(prefix))
    e = node_id("evidence", prefix + "E_qa")
    ours = {(d if s == e else s, r) for s, d, r, _ in await app.store.all_edges_of([e])}
    # cognee's postgres get_edges returns (source, relationship, target) rows; the other end is ours
    theirs = {
        (str(m["id"]) if str(n["id"]) == e else str(n["id"]), r)
        for n, r, m in await app.store.graph.get_edges(e)
    }
    assert ours == theirs and len(ours) >= 3
    ids = sorted({e} | {other for other, _ in ours})
    assert await app.store.raw_nodes(ids) == {n["id"]: n for n in await app.store.graph.get_nodes(ids)}
    assert prefix + "Q" in await app.store.question_keys()


async def test_hnsw_index_per_collection_same_answers_as_exact_scan(app, prefix):
    from sqlalchemy import text

    from memory_core.store.models import collection

    await app.load(seed_with_prefix(prefix))
    await app.store.compact_vectors()  # the housekeeping step: idempotent
    for kind in ("question", "hypothesis", "evidence", "conclusion"):
        name = collection(kind)
        rows = await _sql(
            app.store.vector.engine, "SELECT indexdef FROM pg_indexes WHERE tablename = :t", {"t": name}
        )
        assert any("USING hnsw" in r[0] and "vector_cosine_ops" in r[0] for r in rows), (name, rows)
    name = collection("evidence")
    hits = [str(h.id) for h in await app.store.search(name, "the QA report was back-dated", 5)]
    # the same query as an exact scan (index scans off) in one transaction
    vector = (await app.store.vector.embedding_engine.embed_text(["the QA report was back-dated"]))[0]
    async with app.store.vector.engine.begin() as conn:
        await conn.execute(text("SET LOCAL enable_indexscan = off"))
        exact = [
            str(r[0])
            for r in (
                await conn.execute(
                    text(f'SELECT id FROM "{name}" ORDER BY vector <=> CAST(:v AS vector) LIMIT 5'),
                    {"v": str(list(vector))},
                )
            ).all()
        ]
    assert hits == exact and len(hits) == 5
    # the index serves cognee's query shape (on a table this small the planner prefers a scan
    # unless told otherwise; on a large one it picks the index by itself)
    async with app.store.vector.engine.begin() as conn:
        await conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = (
            await conn.execute(
                text(f'EXPLAIN SELECT id FROM "{name}" ORDER BY vector <=> CAST(:v AS vector) LIMIT 5'),
                {"v": str(list(vector))},
            )
        ).all()
    assert "falsify_hnsw" in " ".join(r[0] for r in plan)
    ef = await _sql(app.store.vector.engine, "SHOW hnsw.ef_search")
    assert int(ef[0][0]) >= 420  # recall asks for up to MAX_TOP_K * 4 + 20 rows


async def test_declared_collections_are_what_cognee_reflects(app, prefix):
    """An opening declares FALSIFY's existing vector collections in cognee's pgvector adapter
    (postgres.declare_tables: columns and primary key, two catalog queries) instead of letting it
    reflect each table on first use: the same columns, types, nullability and key as cognee's own
    MetaData.reflect, and the adapter's search and has_collection work on them."""
    from sqlalchemy import MetaData

    from memory_core.store.backends.postgres import declare_tables
    from memory_core.store.models import collection

    await app.load(seed_with_prefix(prefix))
    names = [collection(k) for k in ("question", "hypothesis", "evidence", "conclusion")]
    declared, reflected = MetaData(), MetaData()
    async with app.store.vector.engine.connect() as conn:
        await conn.run_sync(declare_tables, declared, names + ["no_such_collection"])
        await conn.run_sync(reflected.reflect, only=names)

    def shape(table):
        return [(c.name, repr(c.type), c.primary_key, c.nullable) for c in table.columns]

    assert sorted(declared.tables) == sorted(names)
    assert {n: shape(declared.tables[n]) for n in names} == {n: shape(reflected.tables[n]) for n in names}
    assert [await app.store.vector.has_collection(n) for n in names] == [True] * 4
    assert await app.store.search(collection("evidence"), "the QA report was back-dated", 3)


async def test_revision_log_and_intent_live_in_the_database(app, prefix):
    await app.load(seed_with_prefix(prefix))
    journal = app.journal
    assert type(journal).__name__ == "PgJournal"
    assert not journal.log_path.exists() and journal.pending() is None
    epoch = journal.epoch()
    rows = await _sql(app.store.graph.engine, "SELECT max(epoch), count(*) FROM falsify_log")
    assert rows[0][0] == epoch and rows[0][1] >= 1
    assert journal.last_entry()["epoch"] == epoch and journal.committed(epoch)
    # the commit point: the log row in and the intent out, together
    journal.begin({"epoch": epoch + 1, "probe": True})
    assert journal.pending() == {"epoch": epoch + 1, "probe": True} and not journal.committed(epoch + 1)
    journal.clear()
    assert journal.pending() is None and journal.epoch() == epoch


@pytest.mark.slow
def test_second_writer_waits_then_exits_3_naming_the_holder(app):
    """The session's app holds the database's writer lock: a CLI on the SAME database
    (another data root, as another machine would have) waits FALSIFY_LOCK_TIMEOUT, exits 3."""
    import tempfile

    env = clean_env(FALSIFY_LOCK_TIMEOUT="1")  # keeps this session's FALSIFY_DATABASE_URL
    other_root = tempfile.mkdtemp(prefix="falsify-other-machine-")
    proc = cli(other_root, "status", "--json", env=env, same_database=True)
    assert proc.returncode == 3, proc.stderr
    assert "in use by falsify pid" in proc.stderr and "pytest" in proc.stderr


@pytest.mark.slow
def test_database_flag_selects_the_postgres_backend(tmp_path):
    """``--database URL`` alone (no FALSIFY_BACKEND in the environment) puts the data in that database."""
    import pg_server

    from conftest import SEED

    url = pg_server.root_env(tmp_path / "flag-db", fresh=True)["FALSIFY_DATABASE_URL"]
    env = {k: v for k, v in clean_env().items() if k not in ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL")}
    proc = cli(tmp_path / "root", "--database", url, "load", SEED, "--json", env=env, same_database=True)
    assert proc.returncode == 0, proc.stderr
    assert pg_server._admin_sql("SELECT count(*) FROM falsify_log", url) == [(1,)]
    assert pg_server._admin_sql("SELECT count(*) FROM graph_node WHERE type = 'Evidence'", url)[0][0] >= 2
    assert not (tmp_path / "root" / "revisions.jsonl").exists()


def test_the_database_records_its_embedder_for_every_machine(app, tmp_path):
    """The embedder record lives in the database (falsify_meta), not only in one data root:
    a data root on another machine (here: a fresh root) with the same embedder opens it; one
    with another embedder is refused with exit 4, naming the database, and nothing changes."""
    from memory_core.core.errors import EmbedderMismatch
    from memory_core.store import data_root, settings
    from memory_core.store.embedder import fingerprint
    from memory_core.store.backends.postgres import check_database_embedder

    url = data_root.database_url(settings.current())
    mine = fingerprint()
    assert check_database_embedder(url, mine) == mine  # the session's own opening recorded it
    other = dict(mine, model="someone-else/another-model", dimensions=1024)
    with pytest.raises(EmbedderMismatch) as caught:
        check_database_embedder(url, other)
    assert (
        caught.value.exit_code == 4
        and "this database" in str(caught.value)
        and "another-model" in str(caught.value)
    )
    assert check_database_embedder(url, mine) == mine  # the refusal changed nothing


@pytest.mark.slow
def test_a_database_without_pgvector_that_the_role_cannot_extend_is_refused_creating_nothing(tmp_path):
    """A tenant role owning a database without the ``vector`` extension (it may not create it):
    exit 7 naming the database and the statement to run, no data root (cognee's adapter failed
    later with an internal error, after the root was made)."""
    import uuid
    from urllib.parse import urlsplit, urlunsplit

    import pg_server

    role, database = f"tenant_{uuid.uuid4().hex[:8]}", f"novector_{uuid.uuid4().hex[:8]}"
    admin = os.environ[pg_server.ADMIN_ENV]
    pg_server._admin_sql(f"CREATE ROLE {role} LOGIN PASSWORD 'tenantpw1'", admin)
    pg_server._admin_sql(f"CREATE DATABASE {database} TEMPLATE template0 OWNER {role}", admin)
    try:
        parts = urlsplit(admin)
        url = urlunsplit(
            (parts.scheme, f"{role}:tenantpw1@{parts.hostname}:{parts.port}", f"/{database}", "", "")
        )
        env = {k: v for k, v in clean_env().items() if k not in ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL")}
        root = tmp_path / "root"
        proc = cli(root, "--database", url, "load", SEED_PATH, env=env, same_database=True)
        assert proc.returncode == 7, proc.stderr
        assert "has no pgvector extension" in proc.stderr and "CREATE EXTENSION vector" in proc.stderr
        assert "internal error" not in proc.stderr and "tenantpw1" not in proc.stderr
        assert not root.exists()
    finally:
        pg_server._admin_sql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)", admin)
        pg_server._admin_sql(f"DROP ROLE IF EXISTS {role}", admin)


@pytest.mark.slow
def test_a_password_with_url_delimiters_reaches_cognee_whole(tmp_path):
    """A percent-encoded password holding ``@ : / # ? %`` (the test server trusts any password;
    what failed was cognee's own URL, built from the decoded one): the load succeeds."""
    from urllib.parse import urlsplit, urlunsplit

    import pg_server

    url = pg_server.root_env(tmp_path / "pw-db", fresh=True)["FALSIFY_DATABASE_URL"]
    parts = urlsplit(url)
    weird = urlunsplit(
        (
            parts.scheme,
            f"{parts.username}:p%40ss%3Aw%2Frd%2540%23%3F@{parts.hostname}:{parts.port}",
            parts.path,
            "",
            "",
        )
    )
    env = {k: v for k, v in clean_env().items() if k not in ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL")}
    proc = cli(
        tmp_path / "root", "--database", weird, "load", SEED_PATH, "--json", env=env, same_database=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert pg_server._admin_sql("SELECT count(*) FROM falsify_log", url) == [(1,)]


@pytest.mark.slow
def test_a_root_remembers_its_backend_and_refuses_another(tmp_path):
    """A data root made for PostgreSQL records it in falsify.json: opened without the database
    URL (a shell without FALSIFY_DATABASE_URL) it is refused, exit 4, rather than read as an
    empty embedded root; an embedded root opened with a database URL is refused the same way."""
    import json

    import pg_server

    url = pg_server.root_env(tmp_path / "made-for-pg", fresh=True)["FALSIFY_DATABASE_URL"]
    embedded_env = {  # this session's process environment, without the postgres choice nor cognee's
        k: v
        for k, v in clean_env().items()
        if k not in ("FALSIFY_BACKEND", "FALSIFY_DATABASE_URL") and not k.startswith(("GRAPH_", "VECTOR_DB_"))
    }
    pg_root, embedded_root = tmp_path / "pg-root", tmp_path / "embedded-root"
    proc = cli(pg_root, "--database", url, "load", SEED_PATH, env=embedded_env, same_database=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((pg_root / "falsify.json").read_text())["backend"] == "postgres"
    for argv in (["status"], ["load", SEED_PATH]):
        proc = cli(pg_root, *argv, env=embedded_env, same_database=True)
        assert proc.returncode == 4, proc.stderr
        assert "was made for the PostgreSQL backend" in proc.stderr and "--database" in proc.stderr
    assert not (pg_root / "revisions.jsonl").exists()
    assert not (pg_root / "cognee_system" / "databases" / "cognee.lancedb").exists()

    proc = cli(embedded_root, "load", SEED_PATH, env=embedded_env, same_database=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((embedded_root / "falsify.json").read_text())["backend"] == "ladybug"
    proc = cli(embedded_root, "--database", url, "status", env=embedded_env, same_database=True)
    assert proc.returncode == 4 and "was made for the embedded backend" in proc.stderr, proc.stderr
