"""Both backends provide everything the backend protocol (store/backends/base.py) names, with
the same signatures, so no caller ever asks which backend it has; the settings pick one in
one place (backends.choose); both journals share the base Journal's readers.
No stores are opened: this is about the classes."""

from __future__ import annotations

import inspect

import pytest

from memory_core.store import backends, settings
from memory_core.store.backends.base import Backend
from memory_core.store.backends.embedded import EmbeddedBackend
from memory_core.store.backends.postgres import PgJournal, PgWriterLock, PostgresBackend
from memory_core.store.journal import FileJournal, Journal
from memory_core.store.lock import WriterLock

BACKENDS = [EmbeddedBackend, PostgresBackend]


def protocol(cls) -> dict[str, object]:
    """The public methods a class declares (its own and inherited), by name."""
    return {name: member for name, member in inspect.getmembers(cls, callable) if not name.startswith("_")}


@pytest.mark.parametrize("cls", BACKENDS, ids=lambda c: c.__name__)
def test_every_protocol_method_is_implemented_with_its_signature(cls):
    assert issubclass(cls, Backend)
    assert not cls.__abstractmethods__, f"{cls.__name__} leaves {sorted(cls.__abstractmethods__)} out"
    for name, method in protocol(Backend).items():
        mine = getattr(cls, name)
        assert inspect.iscoroutinefunction(mine) == inspect.iscoroutinefunction(method), name
        assert list(inspect.signature(mine).parameters) == list(inspect.signature(method).parameters), name


def test_the_backends_declare_nothing_the_protocol_lacks():
    """A public method only one backend has would be asked for by name (``hasattr``) again."""
    base = set(protocol(Backend))
    for cls in BACKENDS:
        extra = set(protocol(cls)) - base
        assert not extra, f"{cls.__name__} has methods outside the protocol: {sorted(extra)}"


def test_the_settings_choose_the_backend():
    embedded = backends.choose(settings.read({}))
    assert type(embedded) is EmbeddedBackend and embedded.beliefs_in_root
    url = "postgresql://falsify:pw@db.example:5433/beliefs"
    pg = backends.choose(
        settings.read(
            {"FALSIFY_BACKEND": "postgres", "FALSIFY_DATABASE_URL": url, "FALSIFY_LOCK_TIMEOUT": "7"}
        )
    )
    assert type(pg) is PostgresBackend and not pg.beliefs_in_root and pg.url == url
    assert pg.settings.lock_timeout == 7.0
    # the lock and the cognee settings come from the backend object, not from a name
    lock = pg.writer_lock(None, "test")
    assert type(lock) is PgWriterLock and lock.timeout == 7.0
    env = pg.cognee_environment()
    assert env["GRAPH_DATABASE_PROVIDER"] == "postgres" and env["VECTOR_DB_PORT"] == "5433"
    assert embedded.cognee_environment() == {}


def test_the_embedded_backend_locks_and_journals_in_the_root(tmp_path):
    backend = backends.choose(settings.read({"FALSIFY_LOCK_TIMEOUT": "0"}))
    lock = backend.writer_lock(tmp_path / "writer.lock", "test")
    assert type(lock) is WriterLock and lock.timeout == 0.0
    journal = backend.open_journal(tmp_path)
    assert type(journal) is FileJournal and isinstance(journal, Journal)


def test_postgres_needs_a_database_named():
    from memory_core.core.errors import InputError

    with pytest.raises(InputError) as caught:
        backends.choose(
            settings.read({"FALSIFY_BACKEND": "postgres", "FALSIFY_DATABASE_URL": "mysql://x@h/d"})
        )
    assert "FALSIFY_DATABASE_URL must be postgresql://" in str(caught.value)


@pytest.mark.parametrize("cls", [FileJournal, PgJournal], ids=lambda c: c.__name__)
def test_both_journals_implement_the_journal(cls):
    assert issubclass(cls, Journal) and not cls.__abstractmethods__
    for shared in ("meta", "last_entry", "last_undoable"):  # written once, in the base class
        assert getattr(cls, shared) is getattr(Journal, shared), shared
    assert not hasattr(cls, "pending_path")


def test_a_pending_intent_not_written_by_falsify_is_set_aside_untouched(tmp_path):
    journal = FileJournal(tmp_path)
    (journal.dir / "pending.json").write_text('["not", "an intent"]', encoding="utf-8")
    assert journal.pending() == ["not", "an intent"]
    name = journal.set_aside_pending()
    assert journal.pending() is None
    assert (journal.dir / name).read_text(encoding="utf-8") == '["not", "an intent"]'
