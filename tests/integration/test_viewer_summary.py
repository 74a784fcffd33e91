"""The viewer's status line after a revision (``static/model.js`` ``summary``), run by Node on
the module as the page loads it: every list of keys a revision result has is said, so a
``preserve_both`` revision (E_qa, F_audit and K disputed, nothing refuted) never reads
"nothing changed", and a reinstatement says what came back, was restored and demoted (one that
changed nothing still says so)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import REPO

MODEL = REPO / "memory_core" / "web" / "static" / "model.js"
RUN = """
const src = process.argv[1];
const model = await import("data:text/javascript," + encodeURIComponent(src));
console.log(JSON.stringify(JSON.parse(process.argv[2]).map((r) => model.summary(r))));
"""


def summaries(*results: dict) -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is missing (make test installs it with npm, for the viewer's assets)")
    done = subprocess.run(
        [node, "--input-type=module", "-e", RUN, MODEL.read_text(), json.dumps(results)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)


def test_every_change_of_a_revision_is_said():
    dispute, back, kept, none = summaries(
        {
            "epoch": 4,
            "elapsed_ms": 12,
            "refuted": [],
            "invalidated": [],
            "disputed": ["E_qa", "F_audit", "K"],
        },
        {
            "epoch": 6,
            "refuted": ["F_audit"],
            "reinstated": ["E_qa", "K", "A"],
            "restored": ["K"],
            "demoted": ["B"],
        },
        {"epoch": 7, "refuted": ["EB"], "not_reinstated": ["EA"]},
        {"epoch": 3, "refuted": [], "disputed": []},
    )
    assert dispute == "Revised in 12 ms: disputed E_qa, F_audit, K.", dispute
    assert back == "Revised: refuted F_audit; reinstated E_qa, K, A; restored K; undid the promotion of B.", (
        back
    )
    assert kept == "Revised: refuted EB; kept dead EA.", kept
    assert none == "Revised: nothing changed.", none  # a revision that changed nothing says so
