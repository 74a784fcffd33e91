"""Valid time through the real CLI on the real stores, one batch process
(tests/support/cli_batch.py) for every case:

* each interval case of a contradiction judged by the structured judge (same subject
  and predicate, another object): the stored value ended by a later one (``superseded``,
  ``valid_to`` written, its conclusion superseded and never forgotten, ``explain`` says
  "held until D"), intervals that do not overlap (both alive), a new value earlier than
  the stored one (recorded ``superseded``), the same period (refuted, as before);
* ``revise --file`` lines with ``valid_from`` / ``valid_to``;
* ``recall --as-of`` before, inside and after the supersession; a refuted fact never used;
* ``undo`` restores validity exactly (status byte-equal to before);
* bad dates and ``valid_to`` before ``valid_from``: exit 2, nothing written.
"""

from __future__ import annotations

import json

import pytest

from harness import js, nodes_by_key, ok, run_batch

pytestmark = pytest.mark.slow

QUESTION = "Who runs Acme?"


def acme(prefix: str, valid_from=None, valid_to=None, extra=()) -> dict:
    ev = {
        "key": f"E_{prefix}",
        "claim": f"Alice is the CEO of Acme-{prefix}.",
        "subject": f"acme {prefix}",
        "predicate": "ceo",
        "object": "Alice",
    }
    ev.update({k: v for k, v in (("valid_from", valid_from), ("valid_to", valid_to)) if v})
    return {
        "question": {"key": f"Q_{prefix}", "text": f"Who runs Acme-{prefix}? ({QUESTION})"},
        "hypotheses": [
            {"key": f"H_{prefix}_alice", "statement": f"Alice runs Acme-{prefix}."},
            {"key": f"H_{prefix}_bob", "statement": f"Bob runs Acme-{prefix}."},
        ],
        "evidence": [ev, *extra],
        "conclusions": [{"key": f"K_{prefix}", "statement": f"Acme-{prefix}'s 2012 plan was Alice's."}],
        "edges": [
            {"type": "depends_on", "from": f"K_{prefix}", "to": f"E_{prefix}"},
            {"type": "supports", "from": f"E_{prefix}", "to": f"H_{prefix}_alice", "weight": 0.9},
        ],
    }


def bob(prefix: str, *flags) -> list[str]:
    return [
        "revise",
        f"Bob is the CEO of Acme-{prefix}.",
        "--triple",
        f"acme {prefix}|ceo|Bob",
        "--key",
        f"F_{prefix}",
        *flags,
        "--json",
    ]


def cli(name, *argv, snapshot=False):
    return {"name": name, "op": "cli", "argv": list(argv), "snapshot": snapshot}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("validity_cli")

    def write(name, data):
        path = work / name
        path.write_text(json.dumps(data), encoding="utf-8")
        return str(path)

    carol = {
        "key": "E_end_carol",
        "claim": "Carol is the CFO of Acme-end.",
        "subject": "acme end",
        "predicate": "cfo",
        "object": "Carol",
    }
    support_bob = {
        "question": {"key": "Q_end"},
        "edges": [{"type": "supports", "from": "F_end", "to": "H_end_bob", "weight": 0.9}],
    }
    facts = work / "facts.jsonl"
    rows = [
        {
            "fact": "Dan is the CEO of Acme-file.",
            "triple": "acme file|ceo|Dan",
            "key": "F_file",
            "valid_from": "1990-01-01",
        },
        {
            "fact": "Gus is the CEO of Acme-file.",
            "triple": "acme file|ceo|Gus",
            "key": "F_file3",
            "valid_from": "1980-01-01",
            "valid_to": "1985-01-01",
        },
        {
            "fact": "Eve is the CEO of Acme-file.",
            "triple": "acme file|ceo|Eve",
            "key": "F_file2",
            "valid_from": "2020-01-01",
        },
    ]
    facts.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    bad_facts = work / "bad.jsonl"
    bad_facts.write_text(
        json.dumps({"fact": "Zed is the CEO.", "valid_from": "2020-02-30"}) + "\n", encoding="utf-8"
    )
    steps = [
        cli(
            "load_end",
            "load",
            write(
                "end.json",
                dict(
                    acme("end", "2010-01-01"),
                    evidence=acme("end", "2010-01-01")["evidence"] + [carol],
                    edges=acme("end")["edges"]
                    + [{"type": "supports", "from": "E_end_carol", "to": "H_end_alice", "weight": 0.1}],
                ),
            ),
            "--json",
        ),
        # Carol's evidence is refuted (never true): never used, at any date
        cli(
            "no_carol",
            "revise",
            "Nobody was CFO of Acme-end.",
            "--triple",
            "acme end|cfo|nobody",
            "--key",
            "F_nocarol",
            "--json",
        ),
        cli("status_before", "status", "--json", snapshot=True),
        cli("end", *bob("end", "--valid-from", "2016-01-01"), snapshot=True),
        cli("status_ended", "status", "--json"),
        cli("explain", "explain", "E_end", "--json"),
        cli("explain_text", "explain", "E_end"),
        cli("check_end", "check", "--json"),
        cli("undo_end", "undo", "--json"),
        cli("status_undone", "status", "--json", snapshot=True),
        cli("end_again", *bob("end", "--valid-from", "2016-01-01")[:-1]),  # the text output
        cli("support_bob", "load", write("support.json", support_bob), "--json"),
        cli("recall_now", "recall", QUESTION + " end", "--json"),
        cli("recall_before", "recall", QUESTION + " end", "--as-of", "2001-01-01", "--json"),
        cli("recall_inside", "recall", QUESTION + " end", "--as-of", "2012-06-01", "--json"),
        cli("recall_after", "recall", QUESTION + " end", "--as-of", "2020-01-01", "--json"),
        cli("recall_inside_text", "recall", QUESTION + " end", "--as-of", "2012-06-01"),
        cli("recall_bad", "recall", QUESTION + " end", "--as-of", "2012-02-30", "--json"),
        cli("load_gap", "load", write("gap.json", acme("gap", "2000-01-01", "2005-01-01")), "--json"),
        cli("gap", *bob("gap", "--valid-from", "2010-01-01")),
        cli("load_early", "load", write("early.json", acme("early", "2016-01-01")), "--json"),
        cli("early", *bob("early", "--valid-from", "2005-01-01")),
        cli("load_same", "load", write("same.json", acme("same", "2010-01-01")), "--json"),
        cli("same", *bob("same", "--valid-from", "2010-01-01")),
        cli("load_file", "load", write("file.json", acme("file", "2000-01-01")), "--json"),
        cli("file", "revise", "--file", str(facts), "--json"),
        cli("status_all", "status", "--json"),
        cli("check_all", "check", "--json"),
        # bad input: exit 2, nothing written
        cli("bad_date", *bob("early", "--valid-from", "2016-13-01"), snapshot=True),
        cli(
            "bad_order",
            *bob("early", "--valid-from", "2016-01-01", "--valid-to", "2015-01-01"),
            snapshot=True,
        ),
        cli("bad_file", "revise", "--file", str(bad_facts), "--json", snapshot=True),
        cli(
            "bad_load",
            "load",
            write("bad.json", acme("badload", "2016-01-01", "2015-12-31")),
            "--json",
            snapshot=True,
        ),
        cli(
            "bad_flag_with_file",
            "revise",
            "--file",
            str(facts),
            "--valid-from",
            "2016-01-01",
            "--json",
            snapshot=True,
        ),
        cli("empty", *bob("early", "--valid-from", "2016-01-01", "--valid-to", "2016-01-01"), snapshot=True),
        cli(
            "empty_load",
            "load",
            write("empty.json", acme("emptyload", "2016-01-01", "2016-01-01")),
            "--json",
            snapshot=True,
        ),
        # a dry run's text prints the whole plan, marked as a preview; the real run then applies it
        cli("load_dry", "load", write("dry.json", acme("dry", "2010-01-01")), "--json"),
        cli("dry_text", *bob("dry", "--valid-from", "2016-01-01", "--dry-run")[:-1], snapshot=True),
        cli("dry_json", *bob("dry", "--valid-from", "2016-01-01", "--dry-run")),
        cli("real", *bob("dry", "--valid-from", "2016-01-01")),
        cli("status_text", "status"),
        cli("explain_nope", "explain", "NOPE_KEY"),
    ]
    return {r["name"]: r for r in run_batch(work / "root", steps, work / "batch", timeout=900)}


def test_a_later_value_ends_the_stored_one(run):
    result = js(run["end"])
    assert result["refuted"] == [] and result["forgotten"] == []
    assert set(result["superseded"]) >= {"E_end", "K_end"}
    assert result["validity"] == {"E_end": "ends_stored"}
    nodes = nodes_by_key(js(run["status_ended"]))
    assert nodes["E_end"]["state"] == nodes["K_end"]["state"] == "superseded"
    assert nodes["E_end"]["valid_from"] == "2010-01-01" and nodes["E_end"]["valid_to"] == "2016-01-01"
    assert nodes["F_end"]["state"] == "alive" and nodes["F_end"]["valid_from"] == "2016-01-01"
    assert "held until 2016-01-01" in json.dumps(js(run["explain"]))
    assert "held until 2016-01-01" in ok(run["explain_text"])["stdout"]
    assert js(run["check_end"])["clean"] is True


def test_undo_restores_validity_exactly(run):
    undone = js(run["undo_end"])
    assert undone["undone"] is not None and "E_end" in undone["reverted"]
    assert run["status_undone"]["after"]["status"] == run["status_before"]["after"]["status"]
    assert js(run["status_undone"]) == js(run["status_before"])


def test_recall_as_of_before_inside_and_after(run):
    now = js(run["recall_now"])
    assert now["falsify"]["nodes"][0] == "H_end_bob" and "as_of" not in now
    inside = js(run["recall_inside"])
    assert inside["as_of"] == "2012-06-01" and inside["falsify"]["nodes"] == ["H_end_alice", "E_end"]
    after = js(run["recall_after"])
    assert after["falsify"]["nodes"] == ["H_end_bob", "F_end"]
    before = js(run["recall_before"])  # Alice not yet CEO; Carol's refuted support never counts
    timed = {"H_end_alice", "H_end_bob", "E_end", "F_end", "E_end_carol", "K_end"}
    assert not set(before["falsify"]["nodes"]) & timed
    # what answers then holds only because it has no valid time, and says so
    assert before["falsify"]["untimed"] == before["falsify"]["nodes"]
    assert "as of 2012-06-01" in ok(run["recall_inside_text"])["stdout"]
    assert run["recall_bad"]["code"] == 2 and "--as-of must be" in run["recall_bad"]["stderr"]


def test_intervals_that_do_not_overlap_and_an_earlier_value(run):
    gap = js(run["gap"])
    assert gap["refuted"] == gap["superseded"] == [] and gap["validity"] == {"E_gap": "disjoint"}
    early = js(run["early"])
    assert early["refuted"] == [] and early["superseded"] == ["F_early"]
    nodes = nodes_by_key(js(run["status_all"]))
    assert nodes["E_gap"]["state"] == nodes["K_gap"]["state"] == nodes["F_gap"]["state"] == "alive"
    assert nodes["F_early"]["state"] == "superseded" and nodes["F_early"]["valid_to"] == "2016-01-01"
    assert (
        nodes["E_early"]["state"] == nodes["K_early"]["state"] == "alive"
        and "valid_to" not in nodes["E_early"]
    )


def test_the_same_period_is_a_revision_as_before(run):
    same = js(run["same"])
    assert same["refuted"] == ["E_same"] and "K_same" in same["invalidated"] + same["forgotten"]
    assert same["validity"] == {"E_same": "same_period"}


def test_file_lines_carry_validity(run):
    lines = [json.loads(line) for line in ok(run["file"])["stdout"].splitlines() if line.strip()]
    # the later lines are compared with the whole timeline: F_file, superseded in time by then, too
    assert [line["validity"] for line in lines] == [
        {"E_file": "new_precedes"},
        {"E_file": "disjoint", "F_file": "disjoint"},
        {"E_file": "ends_stored", "F_file3": "disjoint", "F_file": "disjoint"},
    ]
    nodes = nodes_by_key(js(run["status_all"]))
    assert nodes["F_file"]["state"] == "superseded" and nodes["F_file"]["valid_to"] == "2000-01-01"
    assert nodes["F_file3"]["state"] == "alive" and nodes["F_file3"]["valid_to"] == "1985-01-01"
    assert nodes["E_file"]["state"] == "superseded" and nodes["E_file"]["valid_to"] == "2020-01-01"
    assert nodes["F_file2"]["state"] == "alive"
    assert js(run["check_all"])["clean"] is True


def test_a_dry_run_prints_the_whole_plan_as_a_preview(run):
    text = ok(run["dry_text"])["stdout"]
    assert run["dry_text"]["before"] == run["dry_text"]["after"]  # nothing written
    real = js(run["real"])
    assert (
        f"PREVIEW (dry run, nothing written): the revision would record F_dry as epoch {real['epoch']}"
        in text
    )
    assert f"superseded: {', '.join(real['superseded'])}" in text and real["superseded"], text
    assert "valid time: F_dry [2016-01-01, …); E_dry [2010-01-01, 2016-01-01) (was open)" in text, text
    dry = js(run["dry_json"])
    assert dry["preview"] == {"new_evidence": "F_dry", "epoch": real["epoch"]}
    assert {k: dry[k] for k in ("superseded", "refuted", "invalidated", "forgotten", "intervals")} == {
        k: real[k] for k in ("superseded", "refuted", "invalidated", "forgotten", "intervals")
    }


def test_text_outputs_show_intervals(run):
    assert (
        "valid time: F_end [2016-01-01, …); E_end [2010-01-01, 2016-01-01) (was open)"
        in ok(run["end_again"])["stdout"]
    )
    status = ok(run["status_text"])["stdout"]
    assert "VALID" in status.splitlines()[0]
    line = next(row for row in status.splitlines() if row.startswith("E_dry "))
    assert "[2010-01-01, 2016-01-01)" in line and "superseded" in line


def test_explain_of_an_unknown_key_is_exit_2(run):
    r = run["explain_nope"]
    assert r["code"] == 2 and "NOPE_KEY" in r["stderr"]


# the CLI names a revision's field by its flag (--valid-from); a --file line (JSON) and an
# investigation file by the field's own name (valid_from, bad_load)
@pytest.mark.parametrize(
    "name, words",
    [
        ("bad_date", "--valid-from"),
        ("bad_order", "before"),
        ("bad_file", "line 1: valid_from must be an ISO date"),
        ("bad_load", "before"),
        ("bad_flag_with_file", "valid_from"),
        ("empty", "empty"),
        ("empty_load", "empty"),
    ],
)
def test_bad_dates_are_exit_2_and_write_nothing(run, name, words):
    r = run[name]
    assert r["code"] == 2 and words in r["stderr"], (r["stdout"], r["stderr"])
    assert r["before"] == r["after"]
