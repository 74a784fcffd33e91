"""``check`` against lost history, and a repair that converges in one run.

R1 = the example loaded and revised once (``--target E_qa``: E_qa refuted, K forgotten;
``falsify.json`` says epoch 2). Then, on copies of it:

* the revision log emptied, or deleted: ``check`` names the lost history (falsify.json and
  the stored nodes are ahead of the log); ``check --repair`` says it cannot restore it,
  records the gap, and ``check`` is clean after;
* the log's last line truncated (the revision's line cut short; opening cuts the torn
  line, so the stores hold a change the log no longer has): one ``check --repair`` leaves
  a root ``check`` accepts (not K alive over a refuted E_qa), and ``undo`` does not revert
  the repair into a state ``check`` rejects.

The log is a file only on the embedded backend (PostgreSQL keeps it in a table).
"""

from __future__ import annotations

import json

import pytest

from backend_helpers import POSTGRES
from harness import copy_root, nodes_by_key, revised_root, run_batch

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(POSTGRES, reason="the revision log is a file only on the embedded backend"),
]

CHECKS = [
    {"name": "check", "op": "cli", "argv": ["check", "--json"]},
    {"name": "repair", "op": "cli", "argv": ["check", "--repair", "--json"]},
    {"name": "check_after", "op": "cli", "argv": ["check", "--json"]},
]


@pytest.fixture(scope="module")
def revised(tmp_path_factory):
    work, root = revised_root(tmp_path_factory, "history")
    assert json.loads((root / "falsify.json").read_text())["epoch"] == 2
    return work, root


def out(result: dict) -> dict:
    return json.loads(result["stdout"])


@pytest.mark.parametrize("damage", ["emptied", "deleted"])
def test_a_lost_log_is_named_and_the_repair_says_it_cannot_restore_it(revised, damage):
    work, r1 = revised
    root = copy_root(r1, work / damage)
    log = root / "revisions.jsonl"
    if damage == "emptied":
        log.write_bytes(b"")
    else:
        log.unlink()
    steps = CHECKS + [
        {"name": "undo", "op": "cli", "argv": ["undo", "--json"]},
        {"name": "status", "op": "cli", "argv": ["status", "--json"]},
    ]
    results = {r["name"]: r for r in run_batch(root, steps, work / f"b-{damage}")}
    check = results["check"]
    assert check["code"] == 1, check["stderr"][-2000:]
    lost = [p for p in out(check)["problems"] if p.startswith("history lost")]
    assert lost and "falsify.json says epoch 2" in lost[0] and "epochs 1-2 missing" in lost[0], out(check)
    repair = results["repair"]
    assert repair["code"] == 0, repair["stderr"][-2000:]
    cannot = out(repair)["cannot_restore"]
    assert len(cannot) == 1 and "cannot restore the revision log of epoch(s) 1-2" in cannot[0]
    assert out(repair)["clean_after_repair"] is True
    assert out(results["check_after"]) == {"clean": True, "problems": []}
    # the stores were not touched by the repair: the revision's result stays
    now = nodes_by_key(out(results["status"]))
    assert now["E_qa"]["state"] == "refuted" and "K" not in now
    assert out(results["undo"])["undone"] is None  # nothing logged to revert


def test_a_truncated_last_log_line_is_repaired_in_one_run(revised):
    work, r1 = revised
    root = copy_root(r1, work / "truncated")
    log = root / "revisions.jsonl"
    data = log.read_bytes()
    assert data.count(b"\n") == 2
    log.write_bytes(data[:-40])  # the revision's line cut short
    steps = CHECKS + [
        {"name": "undo", "op": "cli", "argv": ["undo", "--json"]},
        {"name": "check_after_undo", "op": "cli", "argv": ["check", "--json"]},
        {"name": "status", "op": "cli", "argv": ["status", "--json"]},
    ]
    results = {r["name"]: r for r in run_batch(root, steps, work / "b-truncated")}
    check = out(results["check"])
    assert check["clean"] is False
    assert any(p.startswith("history lost: falsify.json says epoch 2") for p in check["problems"]), check
    repair = results["repair"]
    assert repair["code"] == 0, repair["stdout"] + repair["stderr"][-2000:]
    assert out(repair)["clean_after_repair"] is True, out(repair)
    assert out(results["check_after"]) == {"clean": True, "problems": []}
    assert "check --repair" in out(results["undo"])["note"] and out(results["undo"])["undone"] is None
    assert out(results["check_after_undo"]) == {"clean": True, "problems": []}
    now = nodes_by_key(out(results["status"]))
    assert now["E_qa"]["state"] == "refuted"
    assert "K" not in now or now["K"]["state"] != "alive"  # never K alive over a refuted E_qa
