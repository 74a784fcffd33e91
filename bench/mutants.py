"""Mutation gate over the pure revision rules: named one-line mutants, each run
against the tests, reporting the ones that survive.

    python -m bench.mutants [--tests FILE ...] [--only NAME ...] [--json] [--out FILE]

Every mutant is a one-line change that alters real behaviour of
``memory_core/core/{beliefs,cascade,promotion,forget,tms,revision,reinstatement}.py``. The working tree is
never edited: the package, the tests and the benchmark code are copied to a
temporary directory, the mutant is written into the copy, and pytest runs there
(its working directory and ``PYTHONPATH`` are the copy; a check makes sure the
copy, not the working tree, is what gets imported). A mutant is *killed* when
the tests fail, *survives* when they pass. Tests run with a fixed hypothesis
seed, so a report can be reproduced.

The six mutants of the known rule failures, and the same single-pass fixpoint in the
three-valued labelling revisions now use (``GATE``), must be killed by the tests
``make test`` runs; the command exits 1 if one of them survives or no longer
applies (the rule's code changed: update the mutant). The others are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from bench.common import log, machine

REPO = Path(__file__).resolve().parent.parent
DEFAULT_TESTS = (
    "tests/unit/test_property_rules.py",
    "tests/unit/test_cascade_pure.py",
    "tests/unit/test_tms_three_valued.py",
    "tests/unit/test_property_pure.py",
    "tests/unit/test_reinstatement_pure.py",
)
COPY = ("memory_core", "tests", "bench", "examples", "main.py", "pytest.ini")


@dataclass
class Mutant:
    name: str
    file: str  # under memory_core/core/
    old: str  # the text replaced (its first occurrence after ``after``)
    new: str
    after: Optional[str] = None  # an anchor that precedes the line (e.g. the function)
    why: str = ""


GATE = (
    "unfounded_single_pass",
    "neighbourhood_ignores_supersedes",
    "tiebreak_weight_inverted",
    "tiebreak_prior_before_weight",
    "tiebreak_weight_before_support",
    "justifications_ignore_group",
    "labels_gamma_single_pass",
    "labels_alternation_one_round",
)

MUTANTS = [
    # the six known rule failures
    Mutant(
        "unfounded_single_pass",
        "cascade.py",
        "changed = True",
        "changed = False",
        after="out.discard(key)",
        why="the well-founded fixpoint stops after one pass",
    ),
    Mutant(
        "neighbourhood_ignores_supersedes",
        "forget.py",
        "(DEPENDS_ON, SUPERSEDES)",
        "(DEPENDS_ON,)",
        after="def neighbourhood",
        why="a node whose superseder died is never re-examined for forgetting",
    ),
    Mutant(
        "tiebreak_weight_inverted",
        "promotion.py",
        "-view.nodes[h].weight, -(view.nodes[h].prior",
        "view.nodes[h].weight, -(view.nodes[h].prior",
        why="equal support: the lighter rival wins",
    ),
    Mutant(
        "tiebreak_prior_before_weight",
        "promotion.py",
        "(-view.support(h), -view.nodes[h].weight, -(view.nodes[h].prior or 0.0), h)",
        "(-view.support(h), -(view.nodes[h].prior or 0.0), -view.nodes[h].weight, h)",
        why="prior decides before feedback weight",
    ),
    Mutant(
        "tiebreak_weight_before_support",
        "promotion.py",
        "(-view.support(h), -view.nodes[h].weight, -(view.nodes[h].prior or 0.0), h)",
        "(-view.nodes[h].weight, -view.support(h), -(view.nodes[h].prior or 0.0), h)",
        why="feedback weight decides before support",
    ),
    Mutant(
        "justifications_ignore_group",
        "beliefs.py",
        'setdefault(group or "", [])',
        'setdefault("", [])',
        after="def justifications",
        why="alternative justifications merge into one",
    ),
    # the same fixpoint in the three-valued labelling revisions use (core/tms.py)
    Mutant(
        "labels_gamma_single_pass",
        "tms.py",
        "changed = True",
        "changed = False",
        after="true.add(key)",
        why="the least model inside the alternating fixpoint stops after one pass",
    ),
    Mutant(
        "labels_alternation_one_round",
        "tms.py",
        "if nxt == alive:",
        "if True:",
        why="the alternating fixpoint stops after one round",
    ),
    # more, reported
    Mutant(
        "closure_follows_noncritical",
        "cascade.py",
        "critical_only=True",
        "critical_only=False",
        after="def dependent_closure",
        why="non-critical dependents are relabelled too",
    ),
    Mutant(
        "unfounded_ignores_dead_antecedents",
        "cascade.py",
        "a not in out and view.state(a) == ALIVE",
        "a not in out",
        after="def unfounded",
        why="a dead antecedent outside the closure still counts",
    ),
    Mutant(
        "justifications_include_noncritical",
        "beliefs.py",
        "if edge.critical:",
        "if True:",
        after="def justifications",
        why="non-critical edges become part of a justification",
    ),
    Mutant(
        "decay_once_per_node",
        "cascade.py",
        "DECAY ** len(dead)",
        "DECAY",
        why="several dead non-critical dependencies decay once",
    ),
    Mutant(
        "decay_unset_confidence_base",
        "cascade.py",
        "(1.0 if base is None else base)",
        "(0.5 if base is None else base)",
        why="an unset confidence counts as 0.5",
    ),
    Mutant(
        "decay_ignores_gained_dependencies",
        "cascade.py",
        "counted = [d for d in deps if d not in gained.get(key, ())]",
        "counted = deps",
        why="a node loaded onto a dead non-critical dependency is not halved",
    ),
    Mutant(
        "invalidated_keep_weight",
        "cascade.py",
        "state=INVALIDATED, weight=0.0",
        "state=INVALIDATED",
        why="invalidated nodes keep their weight",
    ),
    Mutant(
        "refute_dead_again",
        "tms.py",
        "premises = [k for k in dying if not view.justifications(k) or struck(k)]",
        "premises = [k for k in scope if new[k] == L_DEAD and (not view.justifications(k) or struck(k))]",
        after="def relabel",
        why="already-dead evidence is refuted again",
    ),
    Mutant(
        "forget_superseded_too",
        "forget.py",
        "if node.state not in (REFUTED, INVALIDATED):",
        'if node.state == "alive":',
        why="superseded provenance is forgotten",
    ),
    Mutant(
        "forget_ignores_superseders",
        "forget.py",
        "for s in view.superseders(key)):",
        "for s in []):",
        why="rule (c): the provenance anchor is forgotten",
    ),
    Mutant(
        "consumers_ignore_supports",
        "beliefs.py",
        "found += [e.dst for e in self.out_edges(key, SUPPORTS)]",
        "found += []",
        why="evidence supporting an alive hypothesis is forgotten",
    ),
    Mutant(
        "neighbourhood_ignores_supporters",
        "forget.py",
        "keys.update(e.src for e in view.in_edges(key, SUPPORTS))",
        "keys.update([])",
        why="a superseded hypothesis's dead supporters are not re-examined",
    ),
    Mutant(
        "support_ignores_refutes_sign",
        "beliefs.py",
        "edge.weight if edge.kind == SUPPORTS else -edge.weight",
        "edge.weight",
        why="refuting evidence adds support",
    ),
    Mutant(
        "alive_supporters_any_state",
        "beliefs.py",
        "if self.state(e.src) == ALIVE]",
        "]",
        after="def alive_supporters",
        why="dead evidence still supports",
    ),
    Mutant(
        "no_rival_keeps_weight",
        "promotion.py",
        "weight=round(node.weight * NO_RIVAL_FACTOR, 6)",
        "weight=node.weight",
        why="a hypothesis without rival keeps its weight",
    ),
    Mutant(
        "rivals_include_losers",
        "promotion.py",
        "if h not in losers and view.nodes[h].alive",
        "if view.nodes[h].alive",
        why="a loser can be its own rival",
    ),
    Mutant(
        "loser_needs_no_support_loss",
        "promotion.py",
        "and not view.alive_supporters(edge.dst)",
        "and True",
        after="def rescore",
        why="a hypothesis with alive support left is superseded",
    ),
    Mutant(
        "rebalance_strict",
        "promotion.py",
        "if view.nodes[h].weight >= 1.0:",
        "if view.nodes[h].weight > 1.0:",
        why="a rival at 1.0 is not lowered",
    ),
    Mutant(
        "promote_may_lower",
        "promotion.py",
        "weight=max(new, view.nodes[winner].weight)",
        "weight=new",
        why="promotion can lower the winner",
    ),
    Mutant(
        "loser_not_superseded",
        "promotion.py",
        "state=SUPERSEDED,",
        "",
        after="Rule.SUPPORT_LOST",
        why="the loser stays alive",
    ),
    Mutant(
        "attackers_ignore_supersedes",
        "tms.py",
        "found = [e.src for e in view.in_edges(key, SUPERSEDES)]",
        "found = []",
        why="a superseded node is not attacked by its superseder",
    ),
    Mutant(
        "downstream_ignores_superseded",
        "tms.py",
        "nxt += [e.dst for e in view.out_edges(key, SUPERSEDES)]",
        "nxt += []",
        why="what a dying node superseded is not relabelled (no reinstatement)",
    ),
    Mutant(
        "unattacked_dead_premise_holds",
        "tms.py",
        "ok = stored != L_DEAD",
        "ok = True",
        why="a premise killed without a recorded winner comes back",
    ),
    Mutant(
        "revival_forgets_old_weight",
        "tms.py",
        'after["weight"] = before.get("weight", 0.5) if before.get("weight") is not None else 0.5',
        'after["weight"] = 0.5',
        why="a reinstated node does not get its weight back",
    ),
    Mutant(
        "reinstated_hypothesis_prior_weight",
        "tms.py",
        "weight=weight if weight is not None else (node.prior or 0.5),",
        "weight=node.prior or 0.5,",
        after="def reinstate_hypotheses",
        why="a reinstated hypothesis does not get its weight back",
    ),
    Mutant(
        "promotion_never_undone",
        "promotion.py",
        "if r is not None and r.alive and r.weight > before",
        "if False",
        why="the rival promoted over a reinstated hypothesis keeps its promotion",
    ),
    Mutant(
        "forget_ignores_disputed_need",
        "revision.py",
        "if k not in gone and not disputed_need(k)]",
        "if k not in gone]",
        why="a node a disputed node needs is forgotten",
    ),
    # re-judged reinstatement (core/reinstatement.py)
    Mutant(
        "returning_alive_only",
        "reinstatement.py",
        "if lab != L_DEAD",
        'if lab == "alive"',
        after="def returning",
        why="evidence a dispute would make disputed (not dead) is not re-judged",
    ),
    Mutant(
        "kept_dead_edge_not_written",
        "reinstatement.py",
        "        plan.new_edges.append(edge)",
        "        pass",
        after="def keep_dead",
        why="the supersedes edge that keeps the evidence dead is not in the plan (not written)",
    ),
    Mutant(
        "unjudged_note_dropped",
        "revision.py",
        "    note_unjudged(plan)",
        "    pass",
        after="plan.revived = plan.revived + outcome.revived",
        why="evidence reinstated without a verdict does not say so",
    ),
]


def apply(text: str, m: Mutant) -> str:
    start = 0
    if m.after is not None:
        start = text.find(m.after)
        if start < 0:
            raise LookupError(f"anchor {m.after!r} not found")
    at = text.find(m.old, start)
    if at < 0:
        raise LookupError(f"{m.old!r} not found")
    if "\n" in m.old or "\n" in m.new:
        raise ValueError("a mutant changes one line")
    return text[:at] + m.new + text[at + len(m.old) :]


def copy_tree(dest: Path) -> None:
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(
                src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "results", ".hypothesis")
            )
        elif src.exists():
            shutil.copy2(src, dest / name)


def pytest_cmd(tests: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "--hypothesis-seed=0",
        "-o",
        "addopts=",
        *tests,
    ]


def run_tests(copy: Path, tests: list[str], timeout: int) -> tuple[int, str, float]:
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            pytest_cmd(tests), cwd=copy, env=env, capture_output=True, text=True, timeout=timeout
        )
        code, out = proc.returncode, proc.stdout[-3000:]
    except subprocess.TimeoutExpired:
        code, out = -1, "timeout"
    return code, out, time.perf_counter() - start


def failing_test(output: str) -> Optional[str]:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" ", 1)[1].split(" - ")[0]
    return None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.mutants", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--tests",
        nargs="+",
        default=[t for t in DEFAULT_TESTS if (REPO / t).exists()],
        help="test files run against each mutant (default: the pure tests make test runs)",
    )
    p.add_argument("--only", nargs="+", help="run only these mutants")
    p.add_argument("--timeout", type=int, default=900, help="seconds per mutant run")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", help="also write the report as JSON to this file")
    args = p.parse_args(argv)
    mutants = [m for m in MUTANTS if not args.only or m.name in args.only]
    result = {"machine": machine(), "tests": args.tests, "mutants": []}
    with tempfile.TemporaryDirectory(prefix="falsify-mutants-") as tmp:
        copy = Path(tmp) / "repo"
        copy.mkdir()
        copy_tree(copy)
        probe = subprocess.run(
            [sys.executable, "-c", "import memory_core.core.cascade as m; print(m.__file__)"],
            cwd=copy,
            env=dict(os.environ, PYTHONPATH=str(copy)),
            capture_output=True,
            text=True,
        )
        if not probe.stdout.strip().startswith(str(copy)):
            log(f"the copy is not what gets imported: {probe.stdout.strip() or probe.stderr[-500:]}")
            return 2
        code, out, secs = run_tests(copy, args.tests, args.timeout)
        result["baseline"] = {"exit": code, "seconds": round(secs, 1)}
        log(f"baseline (no mutant): exit {code} in {secs:.0f} s")
        if code != 0:
            log(out)
            log("the tests fail without any mutant: no mutation report")
            return 2
        for m in mutants:
            path = copy / "memory_core" / "core" / m.file
            original = path.read_text(encoding="utf-8")
            entry = {**asdict(m), "gate": m.name in GATE}
            try:
                path.write_text(apply(original, m), encoding="utf-8")
            except (LookupError, ValueError) as error:
                entry.update(status="not applicable", detail=str(error))
                result["mutants"].append(entry)
                log(f"  {m.name}: NOT APPLICABLE ({error})")
                continue
            try:
                code, out, secs = run_tests(copy, args.tests, args.timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            status = "survived" if code == 0 else "killed"
            entry.update(status=status, exit=code, seconds=round(secs, 1), killed_by=failing_test(out))
            if status == "killed" and not entry["killed_by"]:
                entry["output_tail"] = out[-1500:]
            result["mutants"].append(entry)
            log(
                f"  {m.name}: {status.upper()}{' by ' + entry['killed_by'] if entry['killed_by'] else ''} "
                f"({secs:.0f} s)"
            )
    counts = {
        s: sum(1 for e in result["mutants"] if e["status"] == s)
        for s in ("killed", "survived", "not applicable")
    }
    result["summary"] = counts
    gate_bad = [e["name"] for e in result["mutants"] if e["gate"] and e["status"] != "killed"]
    result["gate_failures"] = gate_bad
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1))
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        m = result["machine"]
        print(
            f"FALSIFY mutation gate ({m['date']}, {m['cpu_count']} CPU {m['cpu_model']}, commit {m['commit']})"
        )
        print(f"tests: {' '.join(args.tests)}")
        for e in result["mutants"]:
            mark = " [gate]" if e["gate"] else ""
            print(
                f"  {e['status']:>15}  {e['name']}{mark}: {e['why']}"
                + (f" (killed by {e['killed_by']})" if e.get("killed_by") else "")
            )
        print(
            f"killed {counts['killed']}, survived {counts['survived']}, not applicable {counts['not applicable']}"
        )
        survivors = [e["name"] for e in result["mutants"] if e["status"] == "survived"]
        print("surviving mutants: " + (", ".join(survivors) if survivors else "none"))
        if gate_bad:
            print(f"GATE FAILED: {', '.join(gate_bad)} must be killed by the tests")
    return 1 if gate_bad else 0


if __name__ == "__main__":
    sys.exit(main())
