"""Belief at an earlier epoch: ``status --epoch N`` and ``recall --epoch N`` rebuild the
graph as it stood after epoch N from the present graph and the revision log, without
writing anything.

Through the real CLI (one batch process, tests/support/cli_batch.py) on a copy of the loaded
example root: a revision (refutes E_qa, forgets K, promotes B), a revision that refutes
that one (reinstates E_qa), a third revision, then two undos (the second undoes the
reinstatement). ``status --json`` and ``recall --json`` are recorded after every epoch;
afterwards ``status --epoch N`` / ``recall --epoch N`` must print exactly what they
printed then (plus ``"epoch": N``). Through the API the same on the session root, and an
epoch that does not exist is exit 2 / InputError with nothing written.
"""

from __future__ import annotations

import json

import pytest

from harness import DEMO_FACT, copy_root, loaded_root, run_batch

RETRACTION = "The audit itself was retracted by the auditor."
R2_FACT = "Discovery showed the Valtec email of 12 January 2021 was fabricated after the recall."
LAST = 6  # the epoch the batch ends at


def status_step(name):
    return {"name": name, "op": "cli", "argv": ["status", "--json"]}


def recall_step(name):
    return {"name": name, "op": "cli", "argv": ["recall", "--json"]}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    base = loaded_root(tmp_path_factory)
    work = tmp_path_factory.mktemp("epochs")
    root = copy_root(base, work / "root")
    steps = [
        status_step("status_1"),
        recall_step("recall_1"),
        {
            "name": "audit",
            "op": "cli",
            "argv": ["revise", DEMO_FACT, "--target", "E_qa", "--key", "F_audit", "--json"],
        },
        status_step("status_2"),
        recall_step("recall_2"),
        {"name": "retraction", "op": "cli", "argv": ["revise", RETRACTION, "--target", "F_audit", "--json"]},
        status_step("status_3"),
        recall_step("recall_3"),
        {"name": "r2", "op": "cli", "argv": ["revise", R2_FACT, "--target", "E_email", "--json"]},
        status_step("status_4"),
        recall_step("recall_4"),
        {"name": "undo_r2", "op": "cli", "argv": ["undo", "--json"]},
        status_step("status_5"),
        recall_step("recall_5"),
        {"name": "undo_retraction", "op": "cli", "argv": ["undo", "--json"]},
        status_step("status_6"),
        recall_step("recall_6"),
    ]
    steps += [
        {"name": f"at_{n}", "op": "cli", "argv": ["status", "--epoch", str(n), "--json"]}
        for n in range(LAST + 1)
    ]
    steps += [
        {"name": f"recall_at_{n}", "op": "cli", "argv": ["recall", "--epoch", str(n), "--json"]}
        for n in range(1, LAST + 1)
    ]
    steps += [{"name": "text_at_1", "op": "cli", "argv": ["status", "--epoch", "1"]}]
    steps += [
        {"name": f"bad_{i}", "op": "cli", "argv": [command, "--epoch", value, "--json"], "snapshot": True}
        for i, (command, value) in enumerate(
            [
                ("status", "-1"),
                ("status", str(LAST + 1)),
                ("status", "x"),
                ("recall", "1.5"),
                ("recall", "99"),
                ("status", ""),
            ]
        )
    ]
    return {r["name"]: r for r in run_batch(root, steps, work / "batch")}


def ok(r):
    assert r["code"] == 0, f"{r['name']}: exit {r['code']}\n{r['stderr'][-2000:]}"
    return json.loads(r["stdout"])


def states(status):
    return {n["key"]: n["state"] for n in status["nodes"]}


@pytest.mark.slow
def test_the_history_has_the_revisions_reinstatement_and_undos(run):
    assert ok(run["audit"])["refuted"] == ["E_qa"] and "K" in ok(run["audit"])["forgotten"]
    retraction = ok(run["retraction"])
    assert retraction["refuted"] == ["F_audit"] and "E_qa" in retraction["reinstated"]
    assert ok(run["undo_r2"])["undone"] == 4 and ok(run["undo_retraction"])["undone"] == 3
    assert states(ok(run["status_1"]))["K"] == "alive" and "K" not in states(ok(run["status_2"]))
    assert states(ok(run["status_3"]))["E_qa"] == "alive" and states(ok(run["status_6"]))["E_qa"] == "refuted"


@pytest.mark.slow
@pytest.mark.parametrize("epoch", range(1, LAST + 1))
def test_status_at_an_epoch_is_what_status_printed_then(run, epoch):
    at = ok(run[f"at_{epoch}"])
    assert at.pop("epoch") == epoch
    assert at == ok(run[f"status_{epoch}"])


@pytest.mark.slow
def test_status_at_epoch_zero_is_the_empty_root(run):
    assert ok(run["at_0"]) == {"nodes": [], "edges": [], "epoch": 0}


@pytest.mark.slow
def test_status_at_an_epoch_prints_the_table_too(run):
    r = run["text_at_1"]
    assert r["code"] == 0 and "K " in r["stdout"] and "alive" in r["stdout"]
    assert r["stdout"].startswith("as it stood after epoch 1")


def _without_distances(recall):
    """The result without what is recomputed at an epoch: distances (the same model's vectors,
    to float32 precision) and the list of beliefs near the question with their fused ranks (the
    past has no full-text index: its lexical ranking is computed in memory, so near ties may
    order differently; the answer, its nodes and sources must not differ)."""
    falsify = {k: v for k, v in recall["falsify"].items() if k != "matches"}
    return {k: v for k, v in dict(recall, falsify=falsify).items() if k != "baseline_distances"}


@pytest.mark.slow
@pytest.mark.parametrize("epoch", range(1, LAST + 1))
def test_recall_at_an_epoch_answers_from_the_beliefs_alive_then(run, epoch):
    at = ok(run[f"recall_at_{epoch}"])
    assert at.pop("epoch") == epoch
    then = ok(run[f"recall_{epoch}"])
    # distances are recomputed from the same model's vectors (no row of a forgotten node is
    # left in the vector store): equal to the stored rows' to float32 precision
    assert at["baseline_distances"] == pytest.approx(then["baseline_distances"], abs=2e-4)
    assert _without_distances(at) == _without_distances(then)


@pytest.mark.slow
def test_recall_before_the_audit_uses_the_qa_report_and_after_it_the_email(run):
    assert ok(run["recall_at_1"])["falsify"]["nodes"][:2] == ["A", "E_qa"]
    assert ok(run["recall_at_2"])["falsify"]["nodes"][0] == "B"


@pytest.mark.slow
@pytest.mark.parametrize("i", range(6))
def test_an_epoch_that_does_not_exist_is_exit_2_and_writes_nothing(run, i):
    r = run[f"bad_{i}"]
    assert r["code"] == 2, r
    assert "epoch" in r["stderr"] and "Traceback" not in r["stderr"]
    assert r["before"] == r["after"]


# ---- the API, on the session root -------------------------------------------------------------


async def test_api_status_and_recall_at_each_epoch(app, prefix):
    from conftest import investigation
    from memory_core.core.errors import InputError

    inv = investigation(
        prefix,
        hypotheses=[
            {"key": "H1", "statement": "The pump failed first."},
            {"key": "H2", "statement": "The valve failed first."},
        ],
        evidence=[
            {"key": "E1", "claim": "The pump log shows a fault at 09:00."},
            {"key": "E2", "claim": "The valve sensor tripped at 09:05."},
        ],
        conclusions=[{"key": "C1", "statement": "The pump caused the outage."}],
        edges=[
            {"type": "supports", "from": "E1", "to": "H1"},
            {"type": "supports", "from": "E2", "to": "H2"},
            {"type": "depends_on", "from": "C1", "to": "E1"},
        ],
    )
    seen, question = {}, f"Question {prefix}: what happened?"
    # recall pinned to its inquiry: every test's question reads "Question <prefix>: what happened?",
    # and unpinned, the other tests' questions in the session's root were among the matches, their
    # fused ranks shifting between the recall then and the one at the epoch (on PostgreSQL, after
    # tests/integration/test_revision.py in the same process)
    recall = lambda **at: app.recall(question, inquiry=f"{prefix}Q", **at)  # noqa: E731
    await app.load(inv)
    seen[app.journal.epoch()] = (await app.status(), await recall())
    first = await app.revise("The pump log was from another plant.", target=f"{prefix}E1")
    seen[app.journal.epoch()] = (await app.status(), await recall())
    await app.revise(
        "The other plant's log was itself misfiled.", target=first["new_evidence"]
    )  # reinstates E1
    seen[app.journal.epoch()] = (await app.status(), await recall())
    await app.undo()
    seen[app.journal.epoch()] = (await app.status(), await recall())
    mine = lambda s: {n["key"]: n["state"] for n in s["nodes"] if n["key"].startswith(prefix)}
    loaded, refuted, reinstated, undone = sorted(seen)
    assert (
        mine(seen[loaded][0])[f"{prefix}C1"] == "alive"
        and mine(seen[refuted][0]).get(f"{prefix}C1") != "alive"
    )
    assert (
        mine(seen[reinstated][0])[f"{prefix}E1"] == "alive"
        and mine(seen[undone][0])[f"{prefix}E1"] == "refuted"
    )
    for epoch, (status, then) in seen.items():
        at = await app.status(epoch=epoch)
        assert at.pop("epoch") == epoch and at == status
        past = await recall(epoch=epoch)
        assert past.pop("epoch") == epoch
        assert past["falsify"] == then["falsify"] and past["verdict"] == then["verdict"]
    rows = {row["epoch"]: row for row in app.timeline()}
    assert rows[refuted]["kind"] == "revise" and rows[refuted]["judge"] == "pinned"
    assert {"key": f"{prefix}E1", "rule": "contradicted", "from": "alive", "to": "refuted"} in rows[refuted][
        "changes"
    ]
    assert rows[reinstated]["undone_at"] == undone and rows[undone]["undoes"] == reinstated
    current = app.journal.epoch()
    log = list(app.journal.entries())  # the log lives in files, or on PostgreSQL in the database
    for bad in (-1, current + 1, "x", True, 1.5, "2a"):
        with pytest.raises(InputError, match="epoch"):
            await app.status(epoch=bad)
    with pytest.raises(InputError, match="epoch"):
        await app.recall(epoch=current + 1)
    assert app.journal.epoch() == current and list(app.journal.entries()) == log
    assert await app.status() == seen[undone][0]


async def test_api_status_at_an_epoch_before_and_after_a_supersession_in_time(app, prefix):
    """valid_to written by a supersession in time, then undone: each epoch's status again."""
    from acme import bob, company

    await app.load(company(prefix, "2010-01-01"))
    seen = {app.journal.epoch(): await app.status()}
    result = await bob(app, prefix, valid_from="2016-01-01")
    assert result["validity"] == {f"{prefix}E_alice": "ends_stored"}
    seen[app.journal.epoch()] = await app.status()
    await app.undo()
    seen[app.journal.epoch()] = await app.status()
    loaded, ended, undone = sorted(seen)
    alice = lambda s: next(n for n in s["nodes"] if n["key"] == f"{prefix}E_alice")
    assert alice(seen[ended])["valid_to"] == "2016-01-01" and "valid_to" not in alice(seen[loaded])
    for epoch, status in seen.items():
        at = await app.status(epoch=epoch)
        assert at.pop("epoch") == epoch and at == status
    assert alice(await app.status(epoch=ended))["state"] == "superseded"


async def test_mcp_status_and_recall_take_an_epoch(app):
    """The MCP tools over the session root's facade (in process): status(epoch), recall(epoch)."""
    from memory_core.session import Gate
    from memory_core.mcp.server import build_server

    server = build_server(Gate(app))
    epoch = app.journal.epoch()
    at = await server.call_tool("status", {"epoch": epoch})
    assert not at.is_error and at.structured_content == dict(await app.status(), epoch=epoch)
    recalled = await server.call_tool("recall", {"epoch": epoch})
    assert not recalled.is_error and recalled.structured_content["epoch"] == epoch
    bad = await server.call_tool("status", {"epoch": epoch + 1})
    assert bad.is_error and f"epoch {epoch + 1} does not exist" in bad.content[0].text
