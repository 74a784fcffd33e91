"""Several processes, one PostgreSQL database: two writers and two readers run
as separate processes, each with its OWN data root (as on separate machines; only the
database is shared). Every revision lands exactly once, every reader sees complete epochs
only, and ``check`` is clean at the end. Runs in the postgres session of ``make test``.

Each writer process runs the real CLI (``tests/support/cli_batch.py``: ``revise --target E_w_i``
twice, each revision its own commit); the readers run ``status --json`` in a loop.
The investigation is built so that the state at epoch ``e`` is known exactly: loaded at
epoch 1, every revision refutes one evidence node and adds one, so a status at epoch ``e``
must show ``e - 1`` refuted evidence nodes and ``e - 1`` new ones, and nothing else.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forkserver
from conftest import BACKEND, REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        BACKEND != "postgres", reason="PostgreSQL backend only (FALSIFY_TEST_BACKEND=postgres)"
    ),
]

WRITERS, PER_WRITER, READERS, READS = 2, 2, 2, 3


def investigation() -> dict:
    evidence = [
        {
            "key": f"E_{w}_{i}",
            "claim": f"Witness {w}-{i} saw the shipment leave the depot on day {w * 10 + i}.",
            "stance": "supports",
        }
        for w in range(WRITERS)
        for i in range(PER_WRITER)
    ]
    return {
        "question": {"key": "Q", "text": "Did the shipment leave the depot?"},
        "hypotheses": [{"key": "H", "statement": "The shipment left the depot.", "prior": 0.5}],
        "evidence": evidence,
        "conclusions": [],
        "edges": [{"type": "supports", "from": e["key"], "to": "H", "weight": 1.0} for e in evidence],
    }


def harness_env(url: str) -> dict:
    from harness import clean_env

    return clean_env(FALSIFY_BACKEND="postgres", FALSIFY_DATABASE_URL=url, FALSIFY_LOCK_TIMEOUT="300")


def spawn_batch(root: Path, steps: list[dict], work: Path, env: dict) -> tuple[subprocess.Popen, Path]:
    work.mkdir(parents=True, exist_ok=True)
    plan, out = work / "plan.json", work / "result.jsonl"
    plan.write_text(json.dumps({"root": str(root), "steps": steps}), encoding="utf-8")
    proc = forkserver.popen(
        [sys.executable, str(REPO / "tests" / "support" / "cli_batch.py"), str(plan), str(out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return proc, out


def loaded_database(tmp_path: Path) -> tuple[str, dict]:
    """A fresh database holding :func:`investigation`, loaded by a process of its own root:
    (its url, the environment that points a FALSIFY process at it)."""
    import pg_server
    from harness import run_cli

    url = pg_server.root_env(tmp_path / "shared-database", fresh=True)["FALSIFY_DATABASE_URL"]
    env = harness_env(url)
    inv = tmp_path / "inv.json"
    inv.write_text(json.dumps(investigation()), encoding="utf-8")
    loaded = run_cli(tmp_path / "loader-root", "load", str(inv), "--json", env=env)
    assert loaded.returncode == 0, loaded.stderr.decode(errors="replace")
    assert json.loads(loaded.stdout)["epoch"] == 1
    return url, env


def test_two_writers_three_readers_one_database(tmp_path):
    import pg_server
    from harness import run_cli

    url, env = loaded_database(tmp_path)

    procs = []
    for w in range(WRITERS):
        steps = [
            {
                "name": f"w{w}r{i}",
                "op": "cli",
                "argv": [
                    "revise",
                    f"Depot log {w}-{i}: the shipment was still inside on day {w * 10 + i}.",
                    "--target",
                    f"E_{w}_{i}",
                    "--key",
                    f"N_{w}_{i}",
                    "--json",
                ],
            }
            for i in range(PER_WRITER)
        ]
        procs.append(("writer", *spawn_batch(tmp_path / f"writer{w}", steps, tmp_path / f"w{w}", env)))
    for r in range(READERS):
        steps = [{"name": f"r{r}s{i}", "op": "cli", "argv": ["status", "--json"]} for i in range(READS)]
        procs.append(("reader", *spawn_batch(tmp_path / f"reader{r}", steps, tmp_path / f"r{r}", env)))

    deadline = time.monotonic() + 900
    results = {}
    for role, proc, out in procs:
        _, err = proc.communicate(timeout=max(1, deadline - time.monotonic()))
        assert proc.returncode == 0, f"{role} failed: {err.decode(errors='replace')[-3000:]}"
        results[out] = (
            role,
            [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line],
        )

    revisions, statuses = [], []
    for role, steps in results.values():
        for step in steps:
            assert step["code"] == 0, step
            data = json.loads(step["stdout"])
            (revisions if role == "writer" else statuses).append(data)

    # every revision landed exactly once, each its own epoch
    epochs = sorted(r["epoch"] for r in revisions)
    assert epochs == list(range(2, 2 + WRITERS * PER_WRITER)), epochs

    # every status a reader saw is a complete epoch: exactly epoch - 1 revisions in it
    for status in statuses:
        by_key = {n["key"]: n for n in status["nodes"]}
        # the epoch a reader saw: the newest node's (every revision adds one node at its epoch)
        epoch = max(n["epoch"] for n in by_key.values())
        done = epoch - 1
        refuted = [k for k, n in by_key.items() if k.startswith("E_") and n["state"] == "refuted"]
        new = [k for k in by_key if k.startswith("N_")]
        assert len(refuted) == done and len(new) == done, (epoch, refuted, new)
        assert sorted(by_key[k]["epoch"] for k in new) == list(
            range(2, epoch + 1)
        )  # no epoch missing or torn

    final = run_cli(tmp_path / "checker-root", "status", "--json", env=env)
    by_key = {n["key"]: n for n in json.loads(final.stdout)["nodes"]}
    assert sorted(k for k in by_key if k.startswith("N_")) == sorted(
        f"N_{w}_{i}" for w in range(WRITERS) for i in range(PER_WRITER)
    )
    assert all(by_key[f"E_{w}_{i}"]["state"] == "refuted" for w in range(WRITERS) for i in range(PER_WRITER))
    check = run_cli(tmp_path / "checker-root", "check", "--json", env=env)
    assert check.returncode == 0, check.stderr.decode(errors="replace")
    report = json.loads(check.stdout)
    assert report.get("clean", report.get("ok")) is True, report
    log = pg_server._admin_sql("SELECT count(*), count(DISTINCT epoch) FROM falsify_log", url)
    assert log == [(1 + WRITERS * PER_WRITER, 1 + WRITERS * PER_WRITER)]


# one process, one CLI command per event loop (as tests/support/cli_batch.py runs them): status and
# explain leave the vector adapter and the model alone; a revise builds them on its loop; the commands
# after it, each on a loop of its own, reach pgvector through pools of their own loop
COMMANDS_ON_NEW_LOOPS = """
import contextlib, io, json, sys
from memory_core.shell import cli as shell
from memory_core.store import engines
root = sys.argv[1]

def built():
    made = sys.modules.get("cognee.infrastructure.databases.vector.embeddings.get_embedding_engine")
    models = made.create_embedding_engine.cache_info().currsize if made else 0
    return {"vector": engines.vector_built(), "models": models}

def run(*argv):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = shell.main(["--root", root, *argv])
    return {"code": code, "out": printed.getvalue(), **built()}

out = [run("status", "--json"), run("explain", "E_0_0")]
out.append(run("revise", "Depot log: the shipment never left on day 0.", "--target", "E_0_0", "--json"))
out.append(run("status", "--json"))
out.append(run("recall", "when did the shipment leave the depot", "--json"))
print(json.dumps(out))
"""


def test_status_and_explain_leave_pgvector_and_the_model_to_their_first_use(tmp_path):
    _, env = loaded_database(tmp_path)
    proc = forkserver.run(
        [sys.executable, "-c", COMMANDS_ON_NEW_LOOPS, str(tmp_path / "root")],
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-4000:]
    status, explain, revise, again, recall = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    codes = [s["code"] for s in (status, explain, revise, again, recall)]
    assert codes == [0] * 5, proc.stderr.decode(errors="replace")[-3000:]
    assert (status["vector"], status["models"], explain["vector"], explain["models"]) == (False, 0, False, 0)
    keys = {n["key"] for n in json.loads(status["out"])["nodes"]}
    assert {e["key"] for e in investigation()["evidence"]} | {"Q", "H"} <= keys
    assert json.loads(revise["out"])["refuted"] == ["E_0_0"]
    assert revise["models"] == 1  # the model, built on its first use, stays; the adapters are released
    assert {n["key"]: n["state"] for n in json.loads(again["out"])["nodes"]}["E_0_0"] == "refuted"
    assert json.loads(recall["out"])
