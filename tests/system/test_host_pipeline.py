"""FALSIFY inside a host's own cognee pipeline (examples/cognee_pipeline.py): the host
configures cognee, writes beliefs with cognee's add_data_points, runs FALSIFY's Tasks
in its own run_custom_pipeline, and reads states with cognee's get_node_truth_state.
Attaching changes neither HOME, nor the environment, nor cognee's roots."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import forkserver
from harness import clean_env

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_host_pipeline_revises_with_falsify_tasks(tmp_path):
    proc = forkserver.run(
        [sys.executable, str(REPO / "examples" / "cognee_pipeline.py"), "--root", str(tmp_path)],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout)  # stdout is exactly one JSON object (cognee's notes go to stderr)
    assert out["states"] == {
        "Q": "alive",
        "A": "superseded",
        "B": "alive",
        "E1": "refuted",
        "E2": "alive",
        "K": "(not in graph)",
        "F_audit": "alive",
    }
    assert {"contradicted", "justification_lost", "orphaned", "promoted", "support_lost"} <= set(
        out["logged_rules"]
    )
    assert [(r["new_evidence"], r["refuted"]) for r in out["results"]] == [
        ("F_audit", ["E1"])
    ]  # the host Task's input
    assert out["home_unchanged"] is True
    assert out["environment_variables_changed"] == []
    assert out["cognee_roots_unchanged"] is True
    assert out["cognee_system_root"] == str(tmp_path.resolve() / "system")
    assert (tmp_path / "falsify_state" / "revisions.jsonl").is_file()  # FALSIFY's own files, in the state dir


def _host(mode: str, tmp_path) -> dict:
    """tests/support/host_program.py MODE, from a temporary directory outside the checkout."""
    # forked after the third-party imports: the host program configures cognee and imports it itself
    proc = forkserver.run(
        [sys.executable, str(REPO / "tests" / "support" / "host_program.py"), mode, "--root", str(tmp_path)],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def test_attach_refuses_cognee_defaults_naming_the_settings(tmp_path):
    out = _host("defaults", tmp_path)
    assert out["attached"] is False
    assert out["error"]["class"] == "HostConfigError" and out["error"]["exit_code"] == 6
    for setting in (
        "GRAPH_DATABASE_SUBPROCESS_ENABLED=false",
        "VECTOR_DB_SUBPROCESS_ENABLED=false",
        "ENABLE_BACKEND_ACCESS_CONTROL=false",
    ):
        assert setting in out["error"]["message"]
    assert out["state_files"] == []  # nothing of FALSIFY's was created


def test_host_pipeline_errors_closed_tasks_lock_wait_and_second_root(tmp_path):
    out = _host("pipeline", tmp_path)
    bad = out["bad_target"]
    # cognee's run_custom_pipeline raises the task's own exception and records the run as errored
    assert bad["raised"] is True and bad["class"] == "InputError" and bad["exit_code"] == 2, bad
    assert "NOPE" in bad["message"] and bad["epoch_unchanged"] is True
    assert bad["recorded"] == ["DATASET_PROCESSING_ERRORED"]
    assert [(r["new_evidence"], r["refuted"], r["invalidated"]) for r in out["results"]] == [
        ("F_audit", ["E1"], ["K"])
    ]
    # every fact of a batch reaches the host's Task, once its batch is written, and nothing else does
    batch = out["batch"]
    assert batch["calls"] == [1, 1, 1] and batch["keys"] == ["G1", "G2", "G3"], batch
    assert len(batch["epochs"]) == 1  # one batch, one epoch
    assert batch["g3_edges"] == ["supports G3 -> B"] and "record" in batch["notes"][2]
    assert not any("--" in note for note in batch["notes"])  # the host reads Python keywords, never CLI flags
    # a failing item says which items of the run were applied (and carries their results); cognee runs the
    # two items concurrently, so the good one is applied or cancelled: the error says which, truly
    mixed = out["mixed"]
    assert mixed["raised"] is True and mixed["class"] == "InputError" and "NOPE" in mixed["message"], mixed
    before, after = mixed["epochs"]
    if after == before + 1:
        assert [tuple(a) for a in mixed["applied"]] == [("H1", after)]
        assert "this pipeline run applied 1 fact(s) before it (H1" in mixed["message"]
    else:
        assert after == before and mixed["applied"] == []
        assert "nothing of this pipeline run was applied" in mixed["message"]
    assert "this item and any item still waiting were not applied" in mixed["message"]
    assert "--target" not in mixed["message"]
    closed = out["closed"]
    assert (
        closed["raised"] is True and closed["class"] == "FacadeClosed" and closed["epoch_unchanged"] is True
    )
    busy = out["busy"]
    assert (
        busy["raised"] is True and busy["class"] == "RootBusy" and "this process holds it" in busy["message"]
    )
    assert busy["ticks_while_waiting"] > 0  # the wait did not block the event loop
    second = out["second_root"]
    assert second["raised"] is True and second["class"] == "RootConflict" and second["created"] is False
