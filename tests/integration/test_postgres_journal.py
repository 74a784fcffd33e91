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

from conftest import BACKEND, SEED, cli

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
    assert ("falsify_node_type_name",) in indexes, indexes
