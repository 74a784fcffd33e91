"""FALSIFY inside a host's own cognee pipeline (examples/cognee_pipeline.py): the host
configures cognee, writes beliefs with cognee's add_data_points, runs FALSIFY's Tasks
in its own run_custom_pipeline, and reads states with cognee's get_node_truth_state.
Attaching changes neither HOME, nor the environment, nor cognee's roots."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import clean_env

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_host_pipeline_revises_with_falsify_tasks(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "cognee_pipeline.py"), "--root", str(tmp_path)],
                          cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert out["states"] == {"Q": "alive", "A": "superseded", "B": "alive", "E1": "refuted", "E2": "alive",
                             "K": "(not in graph)", "F_audit": "alive"}
    assert {"contradicted", "justification_lost", "orphaned", "promoted", "support_lost"} <= set(out["logged_rules"])
    assert out["home_unchanged"] is True
    assert out["environment_variables_changed"] == []
    assert out["cognee_roots_unchanged"] is True
    assert out["cognee_system_root"] == str(tmp_path.resolve() / "system")
    assert (tmp_path / "falsify_state" / "revisions.jsonl").is_file()  # FALSIFY's own files, in the state dir
