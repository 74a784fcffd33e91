"""Damage the repair passes, a commit point that holds, a lost ``falsify.json``, and rejected
commands that create nothing (the real CLI on copies of the revised example, batched in one
process per case: tests/support/cli_batch.py).

R1 = the example loaded and revised once (``--target E_qa``; epoch 2). On copies of it:

* ``journal/pending.json`` of the wrong shape (an epoch of the wrong type, a batch that is not a
  list, an entry without its fields, a repeated field): every command opens the root, setting the
  file aside and saying so; ``check`` is then clean;
* ``falsify.json`` with an epoch of the wrong type or beyond any log (10**30): ``check`` names it
  (in constant memory), one ``check --repair`` rewrites it from the log, writes never take
  10**30 + 1;
* a garbage line, or a repeated line, in the middle of the revision log: named by line, set aside
  by one ``check --repair`` (kept beside the log), ``check`` clean after; a real entry turned into
  garbage is then lost history, recorded by the same repair;
* the last (committed) log line cut by damage: opening says its history is lost, and the repair
  does not bring back the node the lost revision forgot;
* a meta file that cannot be written after the commit point: ``undo`` succeeds with a warning
  naming it, and is applied once;
* ``falsify.json`` deleted: a command with another embedder's settings exits 4 and writes
  nothing; with the right one the file is rebuilt from the stores;
* a rejected command on a new root (a repeated field in ``load``'s file, ``revise --target``
  of a key nothing has) exits 2 and creates nothing.

The revision log is a file only on the embedded backend.
"""

from __future__ import annotations

import json

import pytest

from backend_helpers import POSTGRES
from harness import EXAMPLE, clean_env, copy_root, nodes_by_key, revised_root, run_batch, run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(POSTGRES, reason="the revision log and falsify.json are files of the embedded root"),
]

CHECK = {"name": "check", "op": "cli", "argv": ["check", "--json"]}
REPAIR = {"name": "repair", "op": "cli", "argv": ["check", "--repair", "--json"]}
AFTER = {"name": "after", "op": "cli", "argv": ["check", "--json"]}
STATUS = {"name": "status", "op": "cli", "argv": ["status", "--json"]}


@pytest.fixture(scope="module")
def revised(tmp_path_factory):
    return revised_root(tmp_path_factory, "damage")


def batch(root, steps, work) -> dict:
    return {r["name"]: r for r in run_batch(root, steps, work)}


def out(result: dict):
    assert result["code"] in (0, 1), result["stderr"][-2000:]
    return json.loads(result["stdout"])


PENDING = {
    "float_epoch": {"epoch": 3.0, "add_nodes": []},
    "string_epoch": {"epoch": "3", "updates": []},
    "list_epoch": {"epoch": [3]},
    "batch_not_list": {"epoch": 3, "add_nodes": 7},
    "entry_without_fields": {"epoch": 3, "updates": [{"id": 1}]},
    "huge_epoch": {"epoch": 10**30, "del_nodes": []},
}


def test_a_pending_intent_of_the_wrong_shape_is_set_aside_by_every_command(revised):
    work, r1 = revised
    steps = []
    for name, intent in PENDING.items():
        steps.append(
            {
                "name": name,
                "op": "cli",
                "argv": ["status", "--json"],
                "root_files": {"journal/pending.json": json.dumps(intent)},
            }
        )
        steps.append({"name": f"{name}_check", "op": "cli", "argv": ["check", "--json"]})
    steps.append(
        {
            "name": "repeated_field",
            "op": "cli",
            "argv": ["check", "--repair", "--json"],
            "root_files": {"journal/pending.json": '{"epoch": 3, "epoch": 4}'},
        }
    )
    root = copy_root(r1, work / "pending")
    results = batch(root, steps, work / "b-pending")
    for name in PENDING:
        r = results[name]
        assert r["code"] == 0, (name, r["stderr"][-2000:])
        assert "[recovery] journal/pending.json is not an intent FALSIFY wrote" in r["stderr"], (
            name,
            r["stderr"],
        )
        assert out(results[f"{name}_check"]) == {"clean": True, "problems": []}, name
    assert results["repeated_field"]["code"] == 0, results["repeated_field"]["stderr"][-2000:]
    assert "appears twice" in results["repeated_field"]["stderr"]
    assert not (root / "journal" / "pending.json").exists()
    assert len(list((root / "journal").glob("pending.invalid-*.json"))) == len(PENDING) + 1


META_EPOCHS = ["x", 10**30, True, -4]


def test_a_wrong_meta_epoch_is_named_and_repaired_in_one_run(revised):
    work, r1 = revised
    root = copy_root(r1, work / "meta")
    meta = json.loads((root / "falsify.json").read_text())
    steps = []
    for i, epoch in enumerate(META_EPOCHS):
        steps += [
            dict(CHECK, name=f"check{i}", root_files={"falsify.json": json.dumps(dict(meta, epoch=epoch))}),
            dict(REPAIR, name=f"repair{i}"),
            dict(AFTER, name=f"after{i}"),
        ]
    steps += [
        {
            "name": "damage",
            "op": "cli",
            "argv": ["status", "--json"],
            "root_files": {"falsify.json": json.dumps(dict(meta, epoch=10**30))},
        },
        {"name": "undo", "op": "cli", "argv": ["undo", "--json"]},
    ]
    results = batch(root, steps, work / "b-meta")
    for i, epoch in enumerate(META_EPOCHS):
        check = out(results[f"check{i}"])
        assert results[f"check{i}"]["code"] == 1, (epoch, check)
        assert any(p.startswith("falsify.json's epoch is") for p in check["problems"]), (epoch, check)
        assert not any(p.startswith("history lost") for p in check["problems"]), (
            check
        )  # damage, not lost history
        repair = out(results[f"repair{i}"])
        assert any("reset falsify.json's epoch" in r and "to 2" in r for r in repair["repaired"]), repair
        assert repair["clean_after_repair"] is True
        assert out(results[f"after{i}"]) == {"clean": True, "problems": []}
    assert out(results["undo"])["epoch"] == 3  # the log's last + 1, never 10**30 + 1
    assert json.loads((root / "falsify.json").read_text())["epoch"] == 3


def _lines(root) -> list[bytes]:
    return (root / "revisions.jsonl").read_bytes().splitlines(keepends=True)


LOG_DAMAGE = ["garbage", "repeated", "entry_garbled"]  # the last one changes the log for good: last


def test_a_damaged_log_line_is_named_and_set_aside_by_one_repair(revised):
    work, r1 = revised
    root = copy_root(r1, work / "log")
    clean = _lines(root)
    steps = []
    for damage in LOG_DAMAGE:
        lines = list(clean)
        if damage == "garbage":
            lines.insert(1, b'{"epoch": 2, "kind": "revise", torn garbage\n')
        elif damage == "repeated":
            lines.insert(1, lines[0])
        else:  # the load's own line garbled: its history is then lost, and recorded as such
            lines[0] = b"\x00\x01 not json at all\n"
        steps += [
            dict(
                CHECK,
                name=f"check-{damage}",
                root_files={"revisions.jsonl": b"".join(lines).decode("latin-1")},
            ),
            dict(REPAIR, name=f"repair-{damage}"),
            dict(AFTER, name=f"after-{damage}"),
        ]
    results = batch(root, steps + [STATUS], work / "b-log")
    for damage in LOG_DAMAGE:
        check = out(results[f"check-{damage}"])
        named = [p for p in check["problems"] if p.startswith("revisions.jsonl line")]
        assert results[f"check-{damage}"]["code"] == 1 and named, check
        assert (
            ("line 2 repeats line 1" in named[0])
            if damage == "repeated"
            else ("is not valid JSON" in named[0])
        )
        repair = results[f"repair-{damage}"]
        assert repair["code"] == 0, repair["stderr"][-2000:]
        assert any(
            r.startswith("set aside 1 damaged line(s) of revisions.jsonl") for r in out(repair)["repaired"]
        )
        if damage == "entry_garbled":
            assert any(
                "cannot restore the revision log of epoch(s) 1" in c for c in out(repair)["cannot_restore"]
            )
        assert out(results[f"after-{damage}"]) == {"clean": True, "problems": []}
    aside = sorted(root.glob("revisions.set-aside-*.jsonl"))
    assert len(aside) == len(LOG_DAMAGE) and all(
        json.loads(a.read_text().splitlines()[0])["line"] in (1, 2) for a in aside
    )
    now = nodes_by_key(out(results["status"]))
    assert now["E_qa"]["state"] == "refuted" and "K" not in now  # the stores were not touched


def test_a_cut_committed_line_is_lost_history_and_its_forgotten_node_stays_forgotten(revised):
    work, r1 = revised
    root = copy_root(r1, work / "cut")
    data = (root / "revisions.jsonl").read_bytes()
    (root / "revisions.jsonl").write_bytes(data[:-40])  # the revision's line cut short, after it committed
    results = batch(root, [CHECK, REPAIR, AFTER, STATUS], work / "b-cut")
    recovered = out(results["check"]).get("recovered_at_open", "")
    assert "had committed and its history is lost" in recovered and "before its commit point" not in recovered
    repair = out(results["repair"])
    assert not any("restored" in r for r in repair["repaired"]), (
        repair
    )  # K was forgotten by the lost revision
    assert out(results["after"]) == {"clean": True, "problems": []}
    assert "K" not in nodes_by_key(out(results["status"]))


def test_past_the_commit_point_a_failure_is_a_warning_and_the_change_is_applied_once(revised):
    work, r1 = revised
    root = copy_root(r1, work / "commit")
    (root / "falsify.json.tmp").mkdir()  # the meta file's update (after the log line) cannot be written
    results = batch(
        root, [{"name": "undo", "op": "cli", "argv": ["undo", "--json"]}, STATUS, CHECK], work / "b-commit"
    )
    undo = results["undo"]
    assert undo["code"] == 0, undo["stderr"][-2000:]
    warnings = [line for line in undo["stderr"].splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "committed and kept" in warnings[0] and "falsify.json.tmp" in warnings[0]
    result = out(undo)
    assert result["undone"] == 2 and result["epoch"] == 3 and result["warnings"]
    entries = [json.loads(line) for line in _lines(root)]
    assert [e["epoch"] for e in entries] == [1, 2, 3] and entries[-1]["kind"] == "undo"
    now = nodes_by_key(out(results["status"]))
    assert now["E_qa"]["state"] == "alive" and now["K"]["state"] == "alive"
    assert out(results["check"]) == {"clean": True, "problems": []}
    assert not (root / "journal" / "pending.json").exists()


def test_a_lost_meta_file_is_rebuilt_from_the_stores_or_refused(revised):
    work, r1 = revised
    root = copy_root(r1, work / "lost-meta")
    (root / "falsify.json").unlink()
    other = clean_env(
        FALSIFY_EMBEDDER=None,
        LLM_API_KEY="sk-test-0123456789abcdef",
        EMBEDDING_PROVIDER="openai",
        EMBEDDING_MODEL="openai/text-embedding-3-large",
        EMBEDDING_DIMENSIONS="3072",
    )
    other.pop("FALSIFY_EMBEDDER", None)
    refused = run_cli(root, "status", "--json", env=other)
    err = refused.stderr.decode(errors="replace")
    assert refused.returncode == 4, err[-2000:]
    assert "stored vectors have 384 dimensions" in err and "3072" in err and "sk-test" not in err
    assert not (root / "falsify.json").exists()  # nothing was stamped from those settings
    results = batch(root, [STATUS, CHECK], work / "b-lost-meta")
    assert results["status"]["code"] == 0
    assert "rebuilt falsify.json from the stores" in results["status"]["stderr"]
    meta = json.loads((root / "falsify.json").read_text())
    assert meta["embedder"]["dimensions"] == 384 and meta["epoch"] == 2
    assert out(results["check"]) == {"clean": True, "problems": []}


def test_a_rejected_command_on_a_new_root_creates_nothing(tmp_path):
    repeated = tmp_path / "repeated.json"
    repeated.write_text(
        '{"question": {"key": "Q", "text": "one?"}, "question": {"key": "Q2", "text": "two?"}}'
    )
    fragment = tmp_path / "fragment.json"  # names a stored question nothing has
    fragment.write_text('{"question": {"key": "Q"}, "evidence": [{"key": "E1", "claim": "a claim."}]}')
    cases = [
        (["load", str(repeated)], "field 'question' appears twice"),
        (["load", str(fragment)], "'text'"),
        (["revise", "x", "--target", "NOPE"], "--target 'NOPE': no evidence with that key"),
        (["load", str(EXAMPLE), "--bogus"], "unrecognized arguments"),
    ]
    for i, (argv, says) in enumerate(cases):
        root = tmp_path / f"new{i}" / "root"
        proc = run_cli(root, *argv)
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode == 2 and says in err, (argv, err[-2000:])
        assert not (tmp_path / f"new{i}").exists(), (
            argv,
            sorted(p.name for p in (tmp_path / f"new{i}").rglob("*")),
        )
