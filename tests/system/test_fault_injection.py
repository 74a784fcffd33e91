"""Crash safety: SIGKILL revise / undo / load (and resolve, a reinstatement, a supersession
in time) at named write steps and at random moments, recover in a new process, and require
a consistent root holding the change wholly or not at all.

The trials run in ``tests/support/fault_driver.py`` (see its docstring: one driver per
data-root path, a child forked from the warm driver per step, real stores, real SIGKILL).
Quick mode (``make test``) runs every named-step trial (each operation killed at every
write step it reaches: 33) and 4 random ones, split over two driver processes; set
``FALSIFY_FAULT_TRIALS=N`` for N random-kill trials on top of the named-step ones
(``make bench`` runs 300).

For every trial:
* ``check`` (in a fresh process, after the recovery that opening performs) is
  clean: graph and vector store agree, every state obeys the revision rules, no
  journal intent is left, the log parses;
* ``status`` equals exactly the before-state or exactly the after-state of an
  uninterrupted run (nodes, states, weights, epochs, texts, edges), and the vector
  rows (every collection's, as node keys) equal that same state's;
* the revision log agrees: it has the operation's entry iff the after-state holds;
* a kill at a named step before the commit point rolls back (before-state): its
  intent was there right after the kill, and the opening reports "rolled back the
  unfinished change of epoch N"; a kill after it (``committed``) keeps the change
  (after-state), with no intent left and nothing rolled back.

Both backends: with ``FALSIFY_TEST_BACKEND=postgres`` the drivers work on their
roots' own databases (the intent and the log are rows there; see tests/support/fault_driver.py),
and run ``PG_SAMPLE_STEPS``: revise killed at every step it reaches, each other operation at
one or two named steps (some at the commit point), plus ``PG_QUICK_RANDOM`` random kills
(``FALSIFY_FAULT_TRIALS`` overrides that count too).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import forkserver
from backend_helpers import POSTGRES
from harness import DEMO_FACT, EXAMPLE, REPO, backend_env, clean_env

pytestmark = pytest.mark.slow

# the write steps each operation reaches on the example (intent shapes differ)
STEPS_REACHED = {
    "load": ["journalled", "nodes", "node_edges", "edges", "committed"],
    "revise": ["journalled", "nodes", "node_edges", "updates", "del_nodes", "committed"],
    "undo": ["journalled", "nodes", "node_edges", "updates", "del_nodes", "committed"],
    # a dispute resolved for the new fact (K forgotten), a refuter refuted (K restored)
    "resolve": ["journalled", "edges", "updates", "del_edges", "del_nodes", "committed"],
    "reinstate": ["journalled", "nodes", "node_edges", "updates", "committed"],
    # a supersession in time: the stored CEO's valid_to and state, its conclusion superseded
    "end_validity": ["journalled", "nodes", "node_edges", "updates", "committed"],
}
QUICK_RANDOM = 4  # random kills on top of the named-step trials (make bench runs 300)
# the PostgreSQL sample: revise killed at every step it reaches, the other operations before and
# (some) after their commit point; 13 named + 2 random = 15 trials
PG_SAMPLE_STEPS = {
    "load": ["edges", "committed"],
    "revise": STEPS_REACHED["revise"],
    "undo": ["del_nodes", "committed"],
    "resolve": ["del_edges"],
    "reinstate": ["node_edges"],
    "end_validity": ["updates"],
}
PG_QUICK_RANDOM = 2


def plan(random_trials: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    steps_of = PG_SAMPLE_STEPS if POSTGRES else STEPS_REACHED
    trials = [{"op": op, "step": step} for op, steps in steps_of.items() for step in steps]
    ops = ["revise"] * 5 + ["undo"] * 3 + ["load"] * 2
    for i in range(random_trials):
        trial = {"op": rng.choice(ops), "kill": "window" if rng.random() < 0.8 else "fork"}
        if rng.random() < 0.3:
            trial["kill_recovery"] = 1.5  # also kill the recovering process, somewhere in its first 1.5 s
        trials.append(trial)
    return trials


def run_driver(work: Path, trials: list[dict], seed: int, prepared: Path | None = None) -> subprocess.Popen:
    """A driver process for ``trials``; with ``prepared`` (another driver's work directory) it
    copies that driver's pristine roots and reference runs instead of preparing its own."""
    work.mkdir(parents=True, exist_ok=True)
    config = {
        "work": str(work),
        "fact": DEMO_FACT,
        "target": "E_qa",
        "example": str(EXAMPLE),
        "seed": seed,
        "trials": trials,
        "prepared": str(prepared) if prepared else None,
    }
    (work / "config.json").write_text(json.dumps(config))
    # on postgres the driver's root (work/root) has its own database, named after its path
    return forkserver.popen(
        [
            sys.executable,
            str(REPO / "tests" / "support" / "fault_driver.py"),
            str(work / "config.json"),
            str(work / "result.json"),
        ],
        cwd=REPO,
        env=backend_env(work / "root", clean_env()),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    n = int(os.environ.get("FALSIFY_FAULT_TRIALS", PG_QUICK_RANDOM if POSTGRES else QUICK_RANDOM))
    all_trials = plan(n, seed=int(os.environ.get("FALSIFY_FAULT_SEED", "20240611")))
    # two drivers, two roots: both cores busy. Driver 0 prepares the pristine roots and the
    # uninterrupted reference runs; driver 1 imports meanwhile, then copies them (one prepare,
    # ~9 forked CLI children, instead of the same twice), leaving the cores to the other work
    halves = [all_trials[0::2], all_trials[1::2]]
    base = tmp_path_factory.mktemp("faults")
    procs = [
        run_driver(base / "driver0", halves[0], seed=1),
        run_driver(base / "driver1", halves[1], seed=2, prepared=base / "driver0"),
    ]
    reports = []
    try:
        for i, proc in enumerate(procs):
            _, err = proc.communicate(timeout=3600)
            result = base / f"driver{i}" / "result.json"
            report = json.loads(result.read_text()) if result.exists() else {"trials": []}
            assert proc.returncode == 0 and len(report["trials"]) == len(halves[i]), (
                f"fault driver {i} failed (exit {proc.returncode}) after {len(report['trials'])} trials:\n"
                f"{err.decode(errors='replace')[-4000:]}"
            )
            reports.append(report)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return reports


def test_enough_trials(trials):
    count = sum(len(r["trials"]) for r in trials)
    named = sum(len(steps) for steps in (PG_SAMPLE_STEPS if POSTGRES else STEPS_REACHED).values())
    assert count >= named + (1 if POSTGRES else QUICK_RANDOM), count
    kinds = {
        (t["spec"]["op"], "step" if t["spec"].get("step") else t["spec"]["kill"])
        for r in trials
        for t in r["trials"]
    }
    assert {op for op, _ in kinds} == {"load", "revise", "undo", "resolve", "reinstate", "end_validity"}


def test_reference_runs(trials):
    """The uninterrupted runs the trials compare against are what they claim."""
    for report in trials:
        s = report["states"]
        assert s["empty"] == {"nodes": [], "edges": []}
        assert {n["key"] for n in s["loaded"]["nodes"]} == {"Q", "A", "B", "C", "E_qa", "E_email", "K"}
        revised = {n["key"]: n for n in s["revised"]["nodes"]}
        assert revised["E_qa"]["state"] == "refuted" and "K" not in revised
        assert s["undone"] == s["loaded"], "undo must restore the loaded state exactly"
        disputed, resolved = ({n["key"]: n for n in s[name]["nodes"]} for name in ("disputed", "resolved"))
        assert disputed["E_qa"]["state"] == disputed["K"]["state"] == "disputed"
        assert resolved["E_qa"]["state"] == "refuted" and "K" not in resolved
        reinstated = {n["key"]: n for n in s["reinstated"]["nodes"]}
        assert reinstated["E_qa"]["state"] == reinstated["K"]["state"] == "alive"
        timed, ended = ({n["key"]: n for n in s[name]["nodes"]} for name in ("timed", "ended"))
        assert (
            timed["E_ceo"]["state"] == timed["K_ceo"]["state"] == "alive" and "valid_to" not in timed["E_ceo"]
        )
        assert ended["E_ceo"]["state"] == ended["K_ceo"]["state"] == "superseded"
        assert ended["E_ceo"]["valid_to"] == "2021-06-01"


def _describe(t: dict) -> str:
    return (
        f"{t['spec']} child={t['child']} delay={t['delay']} recovery_kill={t['killed_recovery']} "
        f"outcome={t['outcome']} check={t['check']} check_how={t['check_how']} recovered={t['recovered']} "
        f"log_lines={t['log_lines']} pending={t['pending']} pending_at_kill={t['pending_at_kill']}\n"
        f"vectors={t['vectors']} expected_vectors={t['expected_vectors']}\n"
        f"child stderr: {t['child_stderr'][-800:]}\n"
        f"check stderr: {t['check_stderr'][-800:]}\nstatus diff:\n{t['status_diff']}"
    )


def test_every_trial_is_whole_or_absent_and_clean(trials):
    failures = []
    for report in trials:
        for t in report["trials"]:
            ok = (
                t["check_how"] == "exit 0"
                and t["check_clean"]
                and not t["pending"]
                and t["outcome"] in ("before", "after")
                and t["log_ok"]
                and t["vectors_ok"]
            )
            if not ok:
                failures.append(_describe(t))
    assert not failures, f"{len(failures)} trial(s) left an inconsistent root:\n\n" + "\n\n".join(failures)


def test_named_steps_fire_and_commit_point_decides(trials):
    for report in trials:
        for t in report["trials"]:
            step = t["spec"].get("step")
            if not step:
                continue
            assert t["child"] == "signal 9", f"the fault hook never reached {step}: {_describe(t)}"
            expected = "after" if step == "committed" else "before"
            assert t["outcome"] == expected, _describe(t)
            recovered = str(t["check"].get("recovered_at_open") or "")
            if expected == "before":
                # killed mid-write: its intent was there, and the next process rolled it back
                assert t["pending_at_kill"], _describe(t)
                assert f"rolled back the unfinished change of epoch {t['epoch']}" in recovered, _describe(t)
                assert any("rolled back" in line for line in t["recovered"]), _describe(t)
            else:  # the intent went with the commit: nothing to roll back
                assert not t["pending_at_kill"], _describe(t)
                assert "rolled back" not in recovered, _describe(t)


def test_random_kills_summary(trials):
    """Random kills land anywhere; each must still be whole-or-absent (checked
    above). Here: they were real kills of real processes."""
    randoms = [t for r in trials for t in r["trials"] if not t["spec"].get("step")]
    assert randoms
    assert all(t["child"] in ("signal 9", "exit 0") for t in randoms), [t["child"] for t in randoms]
