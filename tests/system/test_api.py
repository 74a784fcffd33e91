"""The public Python API end to end, on a fresh data root, with real stores:
``async with Falsify.open(tmp) as fx`` — load a file, load a fragment into the stored
question, revise, recall, search (alive only vs include_dead), explain (dead and
alive), undo (status equal afterwards), revise_many as one batch, each error class
with its exit code, and the writer lock released on leaving the block."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import forkserver
from harness import clean_env

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    root = tmp_path_factory.mktemp("api") / "root"
    proc = forkserver.run(
        [sys.executable, str(REPO / "tests" / "support" / "api_driver.py"), str(root)],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def keys(status: dict) -> dict:
    return {n["key"]: n["state"] for n in status["nodes"]}


def test_curated_exports(seen):
    for name in (
        "Falsify",
        "FalsifyError",
        "InputError",
        "RootBusy",
        "EmbedderMismatch",
        "JudgeError",
        "RevisionResult",
        "Evidence",
        "revision_tasks",
        "recall_tasks",
    ):
        assert name in seen["all"]


def test_load_file_fragment_and_reload(seen):
    assert seen["load"]["epoch"] == 1 and "E_qa" in seen["load"]["added"]
    assert seen["load_again"]["epoch"] is None  # nothing new
    assert seen["fragment"]["added"] == ["E_memo", "K_memo"]
    assert "depends_on K_memo -> E_qa" in seen["fragment"]["edges_added"]  # an edge to a stored key
    states = keys(seen["status_before"])
    assert states["K_memo"] == "alive" and states["E_memo"] == "alive"


def test_bad_input_changes_nothing(seen):
    assert seen["bad_fragment"]["class"] == "InputError" and seen["bad_fragment"]["exit_code"] == 2
    assert "NOWHERE" in seen["bad_fragment"]["message"]
    assert seen["status_after_bad"] == seen["status_before"]
    assert seen["bad_fact"]["exit_code"] == 2 and "empty" in seen["bad_fact"]["message"]
    assert seen["bad_target"]["exit_code"] == 2 and "NO_SUCH_KEY" in seen["bad_target"]["message"]
    assert seen["bad_search"]["exit_code"] == 2 and "top_k" in seen["bad_search"]["message"]
    assert (
        seen["bad_many"]["exit_code"] == 2
        and "line 2" in seen["bad_many"]["message"]
        and "color" in seen["bad_many"]["message"]
    )


def test_revise_recall_search_explain(seen):
    r = seen["revise"]
    assert r["refuted"] == ["E_qa"] and "K" in r["invalidated"] and r["promoted"] == ["B"]
    assert "K" in r["forgotten"] and r["new_evidence"] == "F_audit"
    assert seen["recall"]["scoreboard"]["baseline_mark"] == "[STALE]"
    alive = [h["key"] for h in seen["search_alive"]]
    everything = {h["key"]: h["state"] for h in seen["search_all"]}
    assert "E_qa" not in alive and everything.get("E_qa") == "refuted"
    assert all(h["state"] == "alive" for h in seen["search_alive"])
    for hit in seen["search_all"]:
        assert set(hit) == {"key", "type", "text", "state", "distance", "sources"}
    assert seen["explain_dead"]["state"] == "forgotten"
    assert [e["rule"] for e in seen["explain_dead"]["events"]][-1] == "orphaned"
    why = seen["explain_alive"]["why_alive"]
    assert why["key"] == "K_memo" and [a["key"] for a in why["antecedents"]] == ["E_memo"]
    assert why["antecedents"][0]["premise"] is True


def test_undo_restores_status(seen):
    assert seen["undo"]["undone"] == seen["revise"]["epoch"]
    assert seen["status_after_undo"] == seen["status_before"]


def test_revise_many_is_one_batch(seen):
    many = seen["many"]
    assert len(many) == 2
    assert many[0]["refuted"] == ["E_qa"] and many[0]["epoch"] is not None
    assert many[1]["epoch"] in (None, many[0]["epoch"])  # recorded in the same batch, or near nothing
    assert seen["undo_many"]["undone"] == many[0]["epoch"]
    assert seen["status_after_undo_many"] == seen["status_before"]


def test_errors_and_lock(seen):
    assert seen["exit_codes"] == {
        "FalsifyError": 1,
        "InputError": 2,
        "RootBusy": 3,
        "EmbedderMismatch": 4,
        "JudgeError": 5,
    }
    assert seen["hierarchy"] is True
    assert seen["closed_lock_free"] is True and seen["lock_free_after_exception"] is True
