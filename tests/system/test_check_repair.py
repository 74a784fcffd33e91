"""``check`` on a root corrupted on purpose, then ``check --repair``.

The corruption is real (tests/support/corrupt_root.py): a vector row deleted and an
orphan row added with ``lancedb`` directly, a state that breaks well-foundedness
set through cognee's graph engine, plus a genuine interrupted revision (the real
``revise``, SIGKILLed by the fault hook after writing its new node, leaving its
journal intent) and a torn last line in ``revisions.jsonl``.

Both backends: with ``FALSIFY_TEST_BACKEND=postgres`` the same corruptions are
made with SQL on the root's own database (the pgvector row, the orphan row, the JSONB
state), the interrupted revision leaves its intent in ``falsify_intent``, and the journal
is read through tests/support/backend_helpers.py. The torn log line is embedded-only: a
PostgreSQL log row is inserted whole or not at all, so there is no torn line to make.

``check`` must exit 1 naming every problem (the interrupted revision and the
torn line are recovered when the root is opened, and named under
``recovered_at_open``); ``check --repair`` must fix the rest and say what it did;
``check`` must then be clean, with the data as it was before the corruption.
"""

from __future__ import annotations

import json
import sys

import pytest

from backend_helpers import POSTGRES, has_pending_intent, log_entries, log_is_whole
import forkserver
from harness import REPO, backend_env, clean_env, copy_root, loaded_root, nodes_by_key, run_batch

pytestmark = pytest.mark.slow

FACT = "Discovery showed the Valtec email of 12 January 2021 was fabricated after the recall."
E_EMAIL = "Supplier Valtec warned Company X of cracked brake-valve housings in an email of 12 January 2021."


@pytest.fixture(scope="module")
def repaired(tmp_path_factory):
    base = loaded_root(tmp_path_factory)
    work = tmp_path_factory.mktemp("check")
    root = copy_root(base, work / "root")
    # one process: corrupt the stores, then a real revise that the fault hook kills mid-write
    corrupt = forkserver.run(
        [sys.executable, str(REPO / "tests" / "support" / "corrupt_root.py"), str(root), FACT, "E_email"],
        cwd=REPO,
        env=backend_env(root, clean_env()),
        capture_output=True,
        timeout=300,
    )
    assert corrupt.returncode == -9, corrupt.stderr.decode(errors="replace")[-3000:]
    orphan = corrupt.stdout.decode().strip().splitlines()[0]
    assert has_pending_intent(root)
    assert [e["epoch"] for e in log_entries(root)] == [1]  # the load; the killed revise never committed
    if not POSTGRES:  # a torn append: only a file can have one
        with open(root / "revisions.jsonl", "ab") as log:
            log.write(b'{"epoch": 2, "kind": "revise", "fact": "Discovery sh')  # an append cut short
    steps = [
        {"name": "check", "op": "cli", "argv": ["check", "--json"]},
        {"name": "repair", "op": "cli", "argv": ["check", "--repair", "--json"]},
        {"name": "check_again", "op": "cli", "argv": ["check", "--json"]},
        {"name": "check_text", "op": "cli", "argv": ["check"]},
        {"name": "status", "op": "cli", "argv": ["status", "--json"]},
        {"name": "search", "op": "search", "kind": "evidence", "text": E_EMAIL, "limit": 3},
        {"name": "vectors", "op": "vector_keys"},
    ]
    results = {r["name"]: r for r in run_batch(root, steps, work / "b1")}
    return results, orphan, root


def test_check_names_every_problem_and_exits_1(repaired):
    results, orphan, _ = repaired
    r = results["check"]
    assert r["code"] == 1, r["stderr"][-2000:]
    out = json.loads(r["stdout"])
    assert out["clean"] is False
    problems = out["problems"]
    assert "E_email (evidence) has no row in vector collection Evidence_claim" in problems
    assert f"vector row {orphan} in Evidence_claim has no graph node" in problems
    assert "K is alive but has no well-founded justification" in problems
    assert len(problems) == 3, problems  # nothing else: the killed revision's node was rolled back
    recovered = out["recovered_at_open"]
    assert "rolled back the unfinished change of epoch 2" in recovered
    if not POSTGRES:
        assert "cut a torn last line from revisions.jsonl" in recovered
        assert "[recovery] cut a torn last line" in r["stderr"]
    else:
        assert "torn" not in recovered, recovered


def test_repair_says_what_it_did_and_check_is_clean_after(repaired):
    results, _, root = repaired
    r = results["repair"]
    assert r["code"] == 0, r["stderr"][-2000:]
    out = json.loads(r["stdout"])
    done = "\n".join(out["repaired"])
    assert "deleted 1 orphan vector row(s) from Evidence_claim" in done
    assert "re-indexed 1 node(s) missing their vector rows" in done
    assert "invalidated unfounded node(s) K" in done
    assert out["clean_after_repair"] is True and out["problems_after_repair"] == []
    again = results["check_again"]
    assert again["code"] == 0 and json.loads(again["stdout"]) == {"clean": True, "problems": []}
    assert results["check_text"]["stdout"].startswith("check: clean")
    assert not has_pending_intent(root)
    assert log_is_whole(root)
    # the log: the load, then whatever the repair recorded; never the killed revision's fact
    entries = log_entries(root)
    assert entries[0]["epoch"] == 1 and entries[0]["kind"] == "load"
    assert not any(e.get("kind") == "revise" for e in entries), [e.get("kind") for e in entries]


def test_the_data_after_repair(repaired):
    results, orphan, _ = repaired
    now = nodes_by_key(json.loads(results["status"]["stdout"]))
    assert set(now) == {"Q", "A", "B", "C", "E_qa", "E_email", "K"}  # the interrupted revision left nothing
    assert now["K"]["state"] == "invalidated"  # the repair settled the broken justification
    assert now["E_qa"]["state"] == "refuted"  # the corrupted state itself is data, kept
    email = now["E_email"]  # re-indexed with its state, weight and epoch intact
    assert (email["state"], email["feedback_weight"], email["epoch"], email["text"]) == (
        "alive",
        0.5,
        1,
        E_EMAIL,
    )
    top = results["search"]["keys"][0]
    assert top[0] == "E_email" and top[1] < 0.01  # found again by vector search
    assert orphan not in json.dumps(results["vectors"]["keys"])
