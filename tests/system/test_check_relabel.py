"""``check`` finds a state the three-valued labelling disagrees with, and ``check --repair``
relabels it as a revision would (the three-valued labelling; Guarantee 3 in docs/guarantees.md).

The corruption is real: after a revision refutes E_qa (the new fact supersedes it), E_qa's
state is set back to ``alive`` through cognee's graph engine (``set_node_truth_state``),
behind FALSIFY's back. E_qa is a premise, so it is still well-founded: only the
three-valued check sees that an alive fact attacks it. Embedded backend (cognee's
truth-state API is Ladybug's).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import forkserver
from conftest import BACKEND
from harness import DEMO_FACT, REPO, clean_env, copy_root, loaded_root, nodes_by_key, run_batch

pytestmark = [pytest.mark.slow, pytest.mark.skipif(BACKEND != "ladybug", reason="Ladybug's truth-state API")]

SET_ALIVE = """
import asyncio, sys
sys.path.insert(0, {repo!r})
from memory_core.api import Falsify

async def main():
    app = await Falsify.open({root!r}, purpose="tests/system/test_check_relabel.py")
    try:
        from memory_core.store.models import node_id
        await app.store.graph.set_node_truth_state(
            {{node_id("evidence", "E_qa"): {{"truth_alignment": ["alive"], "truth_epoch": 1}}}})
        await app.store.checkpoint()
    finally:
        await app.close()

asyncio.run(main())
"""


def batch(root, work, *commands):
    """The commands in one tests/support/cli_batch.py process (each opens the root as a CLI run
    does), as CompletedProcess objects with bytes, like ``run_cli``'s."""
    steps = [{"name": " ".join(argv), "argv": list(argv)} for argv in commands]
    return [
        subprocess.CompletedProcess(r["name"], r["code"], r["stdout"].encode(), r["stderr"].encode())
        for r in run_batch(root, steps, work)
    ]


def statuses(proc) -> dict:
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return nodes_by_key(json.loads(proc.stdout))


@pytest.fixture(scope="module")
def relabelled(tmp_path_factory):
    root = copy_root(loaded_root(tmp_path_factory), tmp_path_factory.mktemp("relabel") / "root")
    work = tmp_path_factory.mktemp("relabel_batches")
    revised, before = batch(
        root, work / "revise", ["revise", DEMO_FACT, "--target", "E_qa", "--json"], ["status", "--json"]
    )
    assert revised.returncode == 0, revised.stderr.decode(errors="replace")
    before = statuses(before)
    # behind FALSIFY's back, in a process of its own
    corrupt = forkserver.run(
        [sys.executable, "-c", SET_ALIVE.format(repo=str(REPO), root=str(root))],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert corrupt.returncode == 0, corrupt.stderr[-3000:]
    corrupted, check, repair, again, explain, after = batch(
        root,
        work / "check",
        ["status", "--json"],
        ["check", "--json"],
        ["check", "--repair", "--json"],
        ["check", "--json"],
        ["explain", "E_qa", "--json"],
        ["status", "--json"],
    )
    return {
        "before": before,
        "corrupted": statuses(corrupted),
        "check": check,
        "repair": repair,
        "again": again,
        "after": statuses(after),
        "explain": explain,
    }


def test_check_names_the_mislabelled_node(relabelled):
    assert relabelled["before"]["E_qa"]["state"] == "refuted"
    assert relabelled["corrupted"]["E_qa"]["state"] == "alive"  # the corruption took
    check = relabelled["check"]
    assert check.returncode == 1
    problems = json.loads(check.stdout)["problems"]
    assert any(p.startswith("E_qa is alive but the three-valued labelling makes it") for p in problems), (
        problems
    )


def test_repair_relabels_it_and_check_is_clean_after(relabelled):
    repair = relabelled["repair"]
    assert repair.returncode == 0, repair.stderr.decode(errors="replace")[-2000:]
    out = json.loads(repair.stdout)
    assert any("relabelled E_qa" in r for r in out["repaired"]), out
    assert out["clean_after_repair"] is True, out["problems_after_repair"]
    assert relabelled["again"].returncode == 0 and json.loads(relabelled["again"].stdout)["clean"] is True
    # every node is back in the state the revision left it in
    assert {k: n["state"] for k, n in relabelled["after"].items()} == {
        k: n["state"] for k, n in relabelled["before"].items()
    }


def test_the_repair_is_explained(relabelled):
    explain = relabelled["explain"]
    assert explain.returncode == 0, explain.stderr.decode(errors="replace")
    text = explain.stdout.decode()
    assert "repair" in text and "three-valued" in text, text[:3000]
