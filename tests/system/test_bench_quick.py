"""MQuAKE-hard, quick mode: multi-hop consequences through the real product.

Runs ``python -m bench.mquake --quick --json`` in a subprocess (one process
serves one data root) on a fresh temporary root with the offline embedder:
the first 20 per_case cases (8 on PostgreSQL) and batch_10 go through ``Falsify.load`` and
``Falsify.revise`` (structured judge), each case is reverted with
``Falsify.undo``. The expected sets are read here, straight from the shared
data file, and must match EXACTLY: no collateral, no misses, in the store,
in the revision log and in the pure core. Nothing here asserts timing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import forkserver
from backend_helpers import POSTGRES

REPO = Path(__file__).resolve().parents[2]
DATA = Path(
    os.environ.get("FALSIFY_BENCH_DATA") or REPO.parent / "shared" / "bench" / "out_mquake_hard_beliefs.json"
)
# the first 20 per_case cases on the embedded default (bench.mquake --quick); the PostgreSQL session
# runs the same checks on the first 8 (32 edits, cross-case invalidations among them) and batch_10
QUICK_CASES = 8 if POSTGRES else 20
QUICK_BATCH = "batch_10"
TIMEOUT = 2400  # seconds; a loaded 2-core machine needed more than 1200 for the quick run


def missing_data(env=os.environ) -> str | None:
    """None when the data is there; else what to do: skip locally, FAIL in CI
    (``CI`` set to true/1/yes: a CI run that silently skips the benchmark proves nothing)."""
    if DATA.is_file():
        return None
    why = (
        f"MQuAKE-hard benchmark data not found at {DATA} (the shared data directory ../shared/bench "
        "beside the clone, or $FALSIFY_BENCH_DATA)"
    )
    if env.get("CI", "").strip().lower() in ("1", "true", "yes"):
        return "fail: " + why
    return "skip: " + why


@pytest.fixture(scope="module")
def data():
    why = missing_data()
    if why and why.startswith("fail"):
        pytest.fail(why[6:] + "; CI=true: failing instead of skipping")
    if why:
        pytest.skip(why[6:])
    return json.loads(DATA.read_text(encoding="utf-8"))


def test_missing_data_fails_in_ci_and_skips_locally(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "DATA", tmp_path / "absent.json")
    assert missing_data({"CI": "true"}).startswith("fail: ")
    assert missing_data({}).startswith("skip: ")


@pytest.fixture(scope="module")
def result(data, tmp_path_factory):
    root = tmp_path_factory.mktemp("bench") / "root"
    env = {k: v for k, v in os.environ.items() if k != "LLM_API_KEY" and not k.startswith("EMBEDDING_")}
    env["FALSIFY_BENCH_DATA"] = str(DATA)
    env.pop("FALSIFY_GATE1_THRESHOLD", None)
    if (
        os.environ.get("FALSIFY_TEST_BACKEND") == "postgres"
    ):  # the root's own database (tests/support/pg_server.py)
        import pg_server

        env.update(pg_server.root_env(root))
    proc = forkserver.run(
        [
            sys.executable,
            "-m",
            "bench.mquake",
            "--quick",
            "--limit",
            str(QUICK_CASES),
            "--json",
            "--progress",
            "0",
            "--root",
            str(root),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, f"bench.mquake --quick failed ({proc.returncode}):\n{proc.stderr[-6000:]}"
    return json.loads(proc.stdout)


def pre_edit(data) -> set[str]:
    return {n["id"] for n in data["nodes"] if n["kind"] == "Conclusion" and n.get("phase") == "pre_edit"}


def recomputed(data, edit_ids) -> set[str]:
    """The dataset's rule, recomputed here: a pre-edit conclusion dies iff one of its
    hops has the (subject, relation) of an applied edit and another object."""
    nodes = {n["id"]: n for n in data["nodes"]}
    edits = {e["id"]: e for e in data["edits"]}
    new = {}
    for eid in edit_ids:
        s, r, o = edits[eid]["new_fact"]["triple"]
        new.setdefault((s, r), set()).add(o)
    concl = pre_edit(data)
    dead = set()
    for edge in data["edges"]:
        if edge["from"] in concl:
            s, r, o = nodes[edge["to"]]["triple"]
            if (s, r) in new and o not in new[(s, r)]:
                dead.add(edge["from"])
    return dead


def test_expected_sets_are_the_datasets_rule(data):
    """The scenarios' expected sets follow from the edges and edits (guards the data file)."""
    for case in data["scenarios"]["per_case"][:QUICK_CASES]:
        assert set(case["expected_invalidated"]) == recomputed(data, case["apply"]), case["case_id"]
    batch = next(b for b in data["scenarios"]["batches"] if b["name"] == QUICK_BATCH)
    assert set(batch["expected_invalidated"]) == recomputed(data, batch["apply"])


@pytest.mark.slow
def test_loaded_through_the_product(result, data):
    asserted = [n for n in data["nodes"] if n["kind"] == "Evidence" and n.get("initially_asserted")]
    expected_nodes = 1 + len(asserted) + len(pre_edit(data))
    expected_edges = sum(1 for e in data["edges"] if e["from"] in pre_edit(data))
    assert result["load"]["nodes"] == expected_nodes
    assert result["load"]["edges"] == expected_edges
    assert result["after_undo"]["identical"], result["after_undo"]
    assert result["after_undo"]["nodes"] == expected_nodes and result["after_undo"]["edges"] == expected_edges


@pytest.mark.slow
def test_per_case_exact(result, data):
    cases = data["scenarios"]["per_case"][:QUICK_CASES]
    report = result["scenarios"]["per_case"]
    groups = report["detail"]["groups"]
    assert [g["group"] for g in groups] == [f"case {c['case_id']}" for c in cases]
    assert any(c["cross_case_invalidated"] for c in cases), (
        "the quick cases must include cross-case invalidations"
    )
    for case, group in zip(cases, groups):
        assert group["observed"] == sorted(case["expected_invalidated"]), group["group"]
        assert group["collateral"] == [] and group["missed"] == [], group
        assert group["other_replicas_dead"] == [] and group["log_disagrees"] == [], group
        assert group["refuted_wrong"] == [], group
        assert group["restore_problems"] == [], group
    assert report["precision"] == 1.0 and report["recall"] == 1.0
    assert report["collateral"] == 0 and report["misses"] == 0
    assert report["true_positives"] == sum(len(c["expected_invalidated"]) for c in cases)
    assert report["revisions"] == report["recorded"] == sum(len(c["apply"]) for c in cases)


@pytest.mark.slow
def test_batch_exact(result, data):
    batch = next(b for b in data["scenarios"]["batches"] if b["name"] == QUICK_BATCH)
    report = result["scenarios"][QUICK_BATCH]
    (group,) = report["detail"]["groups"]
    assert group["observed"] == sorted(batch["expected_invalidated"])
    assert group["collateral"] == [] and group["missed"] == [] and group["log_disagrees"] == []
    assert group["refuted_wrong"] == [] and group["restore_problems"] == []
    assert report["precision"] == 1.0 and report["recall"] == 1.0
    distinct_new = len({e["new_fact"]["id"] for e in data["edits"] if e["id"] in set(batch["apply"])})
    assert report["recorded"] == distinct_new
    assert report["already_applied"] == len(batch["apply"]) - distinct_new


@pytest.mark.slow
def test_lower_bound_computes_the_same_cascades(result):
    for name in ("per_case", QUICK_BATCH):
        lb = result["scenarios"][name]["lower_bound"]
        assert lb["agrees_with_store"] is True
        assert lb["precision"] == 1.0 and lb["recall"] == 1.0 and lb["collateral"] == 0 and lb["misses"] == 0


@pytest.mark.slow
def test_detection_study_is_consistent(result, data):
    det = result["detection"]
    cases = data["scenarios"]["per_case"][:QUICK_CASES]
    batch = next(b for b in data["scenarios"]["batches"] if b["name"] == QUICK_BATCH)
    assert det["edits"] == len(dict.fromkeys([e for c in cases for e in c["apply"]] + batch["apply"]))
    assert det["limit"] == 5
    recalls = [s["recall_at_5"] for s in det["sweep"]]
    assert recalls == sorted(recalls), "recall must not fall as the threshold rises"
    at_threshold = next(s for s in det["sweep"] if s["threshold"] == det["threshold"])
    assert at_threshold["recall_at_5"] == det["recall_at_5"]  # raw search and detect.gate1 agree
    assert at_threshold["mean_candidates"] == det["mean_candidates"]
    assert det["found"] + det["miss_count"] == det["edits"]


# ---- the deep-graph benchmark (bench/deep.py) can fail ------------------------------


def deep_pure(where: Path, cases: int = 10) -> dict:
    env = dict(os.environ, PYTHONPATH=str(where), FALSIFY_BENCH_DATA=str(DATA))
    proc = forkserver.run(
        [sys.executable, "-m", "bench.deep", "--pure", "--cases", str(cases), "--sequences", "20", "--json"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def deep_intact(data):
    """The pure deep-graph run on the rules as they are: the same for every mutant, run once."""
    return deep_pure(REPO)


# the pure engine only (no store): the embedded session runs it; the PostgreSQL one would repeat it
@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("FALSIFY_TEST_BACKEND") == "postgres",
    reason="pure engine, no backend: run once, in the embedded session",
)
@pytest.mark.parametrize(
    "mutant", ["justifications_ignore_group", "labels_gamma_single_pass", "forget_superseded_too"]
)
def test_deep_benchmark_fails_on_a_broken_rule(data, deep_intact, tmp_path, mutant):
    """The deep-graph scenario scores the pure engine against the independent
    reference: 100 % on the rules as they are, and not on a copy of the package
    with one rule broken (the mutation gate's one-line mutants; the working tree is
    never edited)."""
    from bench.mutants import MUTANTS, apply, copy_tree

    intact = deep_intact
    for name in ("mquake_deep", "generated"):
        assert (
            intact[name][
                "revisions_equal_to_reference" if name == "generated" else "graph_equal_to_reference"
            ]
            == intact[name]["revisions"]
        ), intact[name]
    assert intact["mquake_deep"]["precision"] == intact["mquake_deep"]["recall"] == 1.0

    copy = tmp_path / "repo"
    copy.mkdir()
    copy_tree(copy)
    m = next(x for x in MUTANTS if x.name == mutant)
    path = copy / "memory_core" / "core" / m.file
    path.write_text(apply(path.read_text(encoding="utf-8"), m), encoding="utf-8")
    broken = deep_pure(copy)
    deep, gen = broken["mquake_deep"], broken["generated"]
    assert deep["graph_equal_to_reference"] < deep["revisions"] or gen["sequences_with_differences"] > 0, (
        broken
    )
