"""A Ladybug checkpoint killed part-way never wedges a root: the two states a SIGKILL can leave
that Ladybug itself refuses to open are repaired by the process that opens the root next, under
its writer lock (memory_core/store/backends/embedded.py), and nothing else is touched.

* killed as it began: an empty ``<db>.shadow`` beside ``<db>.wal.checkpoint``
  (``discard_torn_graph_checkpoint``, before the database opens);
* killed as it ended: the WAL still holds the checkpoint's record after its shadow file was
  applied and deleted, so Ladybug asks for a shadow file that is gone
  (``discard_checkpointed_wal``, after Ladybug refused).

The second state is real: ``tests/support/data/ladybug_checkpoint_wal_without_shadow.tgz`` is the
graph database (file and WAL) a crash trial of tests/system/test_fault_injection.py left (an undo
killed, then the process recovering it killed 85 ms in), the example investigation after the undo.
"""

from __future__ import annotations

import json
import logging
import tarfile
from pathlib import Path

import pytest

from backend_helpers import POSTGRES
from conftest import SEED, cli
from memory_core.store.backends.embedded import discard_checkpointed_wal, discard_torn_graph_checkpoint

pytestmark = pytest.mark.skipif(POSTGRES, reason="Ladybug's files: the embedded backend")

LEFT = Path(__file__).resolve().parents[1] / "support" / "data" / "ladybug_checkpoint_wal_without_shadow.tgz"
DB = "cognee_graph_ladybug"


def unpack(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    with tarfile.open(LEFT) as archive:
        archive.extractall(where, filter="data")
    return where / DB


def ladybug_refusal(db: Path) -> BaseException:
    import ladybug

    with pytest.raises(RuntimeError) as refused:
        ladybug.Database(str(db))
    return refused.value


def node_count(db: Path) -> int:
    import ladybug

    database = ladybug.Database(str(db))
    try:
        return ladybug.Connection(database).execute("MATCH (n:Node) RETURN count(n)").get_next()[0]
    finally:
        database.close()


def test_a_wal_left_without_its_shadow_is_dropped_and_the_database_opens(tmp_path):
    db = unpack(tmp_path)
    refusal = ladybug_refusal(db)  # Ladybug 0.19 on its own: the root would stay wedged
    assert "Cannot open file" in str(refusal) and f"{DB}.shadow" in str(refusal)
    said = discard_checkpointed_wal(refusal, db)
    assert said and "interrupted as it ended" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == [DB]
    assert node_count(db) == 7


@pytest.mark.parametrize("beside", ["shadow", "wal.checkpoint", "none"])
def test_the_wal_is_kept_unless_it_is_exactly_that_state(tmp_path, beside):
    db = unpack(tmp_path)
    refusal = ladybug_refusal(db)
    if beside != "none":
        db.with_name(f"{DB}.{beside}").write_bytes(b"")
        assert discard_checkpointed_wal(refusal, db) is None  # Ladybug's own recovery decides
    else:
        assert discard_checkpointed_wal(RuntimeError("IO exception: something else"), db) is None
    assert db.with_name(f"{DB}.wal").is_file()


def test_a_checkpoint_killed_as_it_began_is_discarded_and_a_written_shadow_kept(tmp_path):
    db = unpack(tmp_path)
    shadow, frozen = db.with_name(f"{DB}.shadow"), db.with_name(f"{DB}.wal.checkpoint")
    shadow.write_bytes(b"pages")
    frozen.write_bytes(b"")
    assert discard_torn_graph_checkpoint(db) is None  # a shadow with pages: Ladybug replays it
    assert shadow.is_file() and frozen.is_file()
    shadow.write_bytes(b"")
    assert "interrupted as it began" in discard_torn_graph_checkpoint(db)
    assert not shadow.exists() and not frozen.exists()


def test_a_root_left_so_opens_clean_and_says_what_it_recovered(tmp_path):
    """Through the real CLI: a root of the example whose graph database is the one the crash
    left opens, says what it recovered, and checks clean (the graph is the example's, as loaded)."""
    root = tmp_path / "root"
    loaded = cli(root, "load", SEED)
    assert loaded.returncode == 0, loaded.stderr
    databases = root / "cognee_system" / "databases"
    (databases / DB).unlink()  # Ladybug's database is one file
    unpack(databases)
    checked = cli(root, "check", "--json")
    assert checked.returncode == 0, checked.stderr
    # the repair's notice, and not cognee's error about the refusal it repaired
    assert "[recovery]" in checked.stderr and "Failed to initialize" not in checked.stderr, checked.stderr
    result = json.loads(checked.stdout)
    assert "interrupted as it ended" in result.get("recovered_at_open", ""), result
    assert result["clean"], result["problems"]
    assert not (databases / f"{DB}.wal").exists()


def test_cognees_records_held_at_open_are_dropped_or_released_once_to_each_handler():
    """What the open does with cognee's error about a refusal: dropped when FALSIFY repaired what
    was refused, else printed as it came, once by each handler (the root logger has two: stderr and
    cognee's log file). Other loggers' records are never held."""
    from memory_core.store.environment import holding_cognee_records

    seen = []

    class Catch(logging.Handler):
        def emit(self, record):
            seen.append((self.name, record.getMessage()))

    handlers = [Catch(), Catch()]
    for name, handler in zip("ab", handlers):
        handler.name = name
        logging.getLogger().addHandler(handler)
    try:
        with holding_cognee_records() as held:
            logging.getLogger("cognee.probe").error("refused, then repaired")
            logging.getLogger("falsify").error("not cognee's")
            held.records.clear()
        assert seen == [("a", "not cognee's"), ("b", "not cognee's")]
        seen.clear()
        with holding_cognee_records():
            logging.getLogger("cognee.probe").error("refused for good")
            assert seen == []
        assert seen == [("a", "refused for good"), ("b", "refused for good")]
    finally:
        for handler in handlers:
            logging.getLogger().removeHandler(handler)
