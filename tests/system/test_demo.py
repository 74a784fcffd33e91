"""The two-session demo across real process restarts, recall, scoreboard."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import forkserver
from conftest import REPO, cli, clean_env
from harness import backend_env, copy_root, js, ok, run_batch

pytestmark = pytest.mark.slow

QUESTION = "Did Company X know about the defect before the recall?"
FORK_EXEC = Path(forkserver.__file__).resolve().parent / "fork_exec.py"
# ``python main.py ARGS`` with ``sys.executable`` set to the script given first
AS_MAIN = (
    "import runpy, sys\n"
    "sys.executable = sys.argv[1]\n"
    "sys.argv = ['main.py', *sys.argv[2:]]\n"
    "runpy.run_path('main.py', run_name='__main__')\n"
)


def demo(root, *args, work: Path) -> subprocess.CompletedProcess:
    """``python main.py --root ROOT --demo ARGS``, forked, and so are the two session processes
    it starts (``[sys.executable, "-c", ...]``): its ``sys.executable`` is a script that hands
    the command to the fork server (tests/support/fork_exec.py, as the MCP tests' spawned servers
    are), which forks each session as a process of its own on the demo's pipes, environment and
    directory, opening the root from disk. What a cold start checks stays with the installed
    demo (tests/system/test_packaging.py runs ``falsify --demo`` and its sessions cold)."""
    if not forkserver.enabled():
        return cli(root, "--demo", *args, timeout=300)
    shim = work / "python-forked"
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, "-S", FORK_EXEC, forkserver.server()))
    shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
    shim.chmod(0o755)
    return forkserver.run(
        [sys.executable, "-c", AS_MAIN, str(shim), "--root", str(root), "--demo", *args],
        cwd=REPO,
        env=backend_env(root, clean_env()),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """The demo's two sessions by hand: session 2 on no root yet, session 1 and a recall (one
    process), session 2 (a new process: the graph comes from disk), then a third process: a
    recall, session 2 again with the root's state (status, revision log) taken before and after
    it, and ``explain K`` (JSON and words). What each printed, and the root as they left it
    (revised once); the tests below read these outputs and run the whole demo on a copy of the root."""
    work = tmp_path_factory.mktemp("demo")
    root = work / "demo"
    early, one, before = run_batch(
        root,
        [
            {"name": "session 2 first", "op": "cli", "argv": ["--session", "2"]},  # on no root yet
            {"name": "session 1", "op": "cli", "argv": ["--session", "1"]},
            {"name": "recall", "op": "cli", "argv": ["recall", "--json"]},
        ],
        work / "b1",
        env=clean_env(),
    )
    assert one["code"] == 0, one["stderr"]
    two = cli(root, "--session", "2")
    assert two.returncode == 0, two.stderr
    after, again, why, human = run_batch(
        root,
        [
            {"name": "recall", "op": "cli", "argv": ["recall", QUESTION, "--json"]},
            {"name": "session 2 again", "op": "cli", "argv": ["--session", "2"], "snapshot": True},
            {"name": "explain K", "op": "cli", "argv": ["explain", "K", "--json"]},
            {"name": "explain K in words", "op": "cli", "argv": ["explain", "K"]},
        ],
        work / "b2",
        env=clean_env(),
    )
    return SimpleNamespace(
        root=root,
        early=early,
        before=js(before),
        after=js(after),
        again=again,
        why=js(why),
        human=ok(human)["stdout"],
    )


def test_cross_session_recall_and_stale_baseline(sessions):
    # before the revision both answers point to the same story (A, March 2021)
    before = sessions.before
    assert before["falsify"]["nodes"][0] == "A" and "Mar" in before["falsify"]["answer"]
    assert "March 2021" in before["baseline"]["answer"]
    assert before["scoreboard"] == {"falsify_mark": "", "baseline_mark": ""}
    after = sessions.after
    # test_cross_session_recall_skips_dead: B, never K or A-as-truth
    assert after["falsify"]["nodes"][0] == "B" and "K" not in after["falsify"]["nodes"]
    assert "A" not in after["falsify"]["nodes"] and "E_qa" not in after["falsify"]["nodes"]
    assert "January 2021" in after["falsify"]["answer"] and "supplier email" in after["falsify"]["answer"]
    # test_baseline_still_stale: plain vector search still returns the back-dated March QA claim
    assert "E_qa" in after["baseline"]["nodes"] and "15 March 2021" in after["baseline"]["answer"]
    assert after["baseline_states"]["E_qa"] == "refuted"
    assert after["scoreboard"] == {"falsify_mark": "[revised]", "baseline_mark": "[STALE]"}
    assert set(after) >= {"question", "falsify", "baseline", "verdict"}
    # session 2 again: nothing changes (the graph, the revision log), and it says so
    again = sessions.again
    assert again["code"] == 0 and "already" in again["stdout"] and "nothing changed" in again["stdout"]
    assert again["before"]["status"]["nodes"] and again["after"]["status"] == again["before"]["status"]
    assert again["after"]["log"] == again["before"]["log"]


def test_session_two_before_one_says_what_to_do(sessions):
    early = sessions.early  # the sessions' process, before session 1: the root did not exist
    assert early["code"] == 2
    assert "--session 1" in early["stdout"]


def test_full_demo_output_tells_the_story_with_measured_figures(sessions, tmp_path):
    """``--demo`` on a root the two sessions already ran on: with ``--keep`` it reuses the root
    (nothing new recorded); without, it starts clean and tells the whole story again, with the
    figures it measured. (On a fresh root it says nothing about clearing: the installed demo in
    tests/system/test_packaging.py runs there.)"""
    root = copy_root(sessions.root, tmp_path / "d")
    kept = demo(root, "--keep", work=tmp_path)
    assert kept.returncode == 0, kept.stderr
    assert (
        "reused" in kept.stdout and "already recorded" in kept.stdout and "started clean" not in kept.stdout
    )
    proc = demo(root, work=tmp_path)  # running the demo again starts clean (and says so)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "started clean" in out and "Session 1" in out and "Session 2" in out
    assert (
        "nothing new to load" not in out and "already recorded" not in out
    )  # really clean: built and revised anew
    assert re.search(r"new process \d+", out)
    assert re.search(
        r"contradiction \(pinned, gates skipped\): E_qa \(cosine distance 0\.\d{3}, shown only; "
        r"judge=pinned conf=1\.00\)",
        out,
    )
    assert "judge pinned" in out
    # offline, gate 1's ranked candidates come first (E_qa ranked first), then the pin decides
    assert re.search(r"#1 E_qa \(cosine distance 0\.\d{3}, lexical \d+\.\d{2}\)", out)
    assert "E_qa (ranked first) is contradicted" in out and "the pin decides" in out
    assert out.index("#1 E_qa") < out.index("contradiction (pinned")
    assert "forward cascade: K invalidated" in out
    assert "A superseded -> B ignites" in out
    assert "forgot 1 orphan (K) from graph + vector" in out
    assert re.search(r"revision total \d+ ms", out)
    board = out[out.rindex("[SCOREBOARD]") :]
    assert re.search(r"FALSIFY recall : .*January 2021.* \[revised\]", board)
    assert re.search(r"Plain-RAG {6}: .*15 March 2021.* \[STALE\]", board)
    assert "AI revised, not forgot." in board
    assert re.search(r"demo finished in \d+\.\d s wall", out)


def test_explain_after_demo(sessions):
    why = sessions.why
    assert [e["rule"] for e in why["events"]] == ["loaded", "justification_lost", "orphaned"]
    human = sessions.human
    assert "invalidated: it rested on E_qa" in human and "forgotten" in human


def test_with_a_key_llm_answers_and_judge_fallback(tmp_path):
    """With LLM_API_KEY: recall answers come from the LLM (each from its own context)
    and session 2 runs the real two-gate judge first, falling back to the pin only
    when it finds nothing -- and says which happened."""
    from llm_stub import StubLLM

    root = tmp_path / "k"
    with StubLLM() as stub:
        env = stub.judge_env()
        stub.verdict = {"rationale": "different claims", "relation": "unrelated", "confidence": 0.9}
        one, two, after = run_batch(
            root,
            [
                {"name": "session 1", "op": "cli", "argv": ["--session", "1"]},
                {"name": "session 2", "op": "cli", "argv": ["--session", "2"]},
                {"name": "recall", "op": "cli", "argv": ["recall", "--json"]},
            ],
            tmp_path / "batch",
            env=env,
        )
        ok(one)
        assert (
            "fell back to the pin" in ok(two)["stdout"]
            or "two-gate judge (hybrid gate 1 + LLM)" in two["stdout"]
        )
        after = js(after)
    assert after["mode"] == "llm"
    assert after["falsify"]["answer"].startswith("stub LLM answer from: X knew via supplier email")
    assert after["baseline"]["answer"].startswith("stub LLM answer from: Company X's internal QA report")
    assert after["scoreboard"] == {"falsify_mark": "[revised]", "baseline_mark": "[STALE]"}
