"""Every public method's arguments are checked before anything runs: a value of the wrong type
is an InputError naming the argument (``error.field``) in the caller's words, and nothing is
written; results come in plain JSON types; a fact left to decide keeps the hypothesis the
caller named; a fragment redefining a stored node with other words is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import seed_with_prefix
from memory_core import InputError

FACT = "Forensic audit: the March QA report was back-dated."
MAIN = Path(__file__).resolve().parents[2] / "main.py"


async def refused(app, call, field: str, words: str) -> InputError:
    """``call()`` raises an InputError about ``field`` whose message holds ``words``; the
    revision log is as it was."""
    before = app.journal.epoch()
    with pytest.raises(InputError) as caught:
        await call()
    assert caught.value.field == field, (caught.value.field, str(caught.value))
    assert words in str(caught.value), str(caught.value)
    assert "--" not in str(caught.value), str(caught.value)  # a Python caller reads no CLI flag
    assert app.journal.epoch() == before
    return caught.value


WRONG = [
    # (call, field, words): each argument of the wrong type
    (lambda fx, p: fx.revise(5, target=p + "E_qa"), "fact", "fact: must be a string, got 5"),
    (lambda fx, p: fx.revise(b"abc", target=p + "E_qa"), "fact", "fact: must be a string"),
    (lambda fx, p: fx.revise(FACT, target=5), "target", "target: must be a string, got 5"),
    (lambda fx, p: fx.revise(FACT, supports=["A"]), "supports", "supports: must be a string"),
    (
        lambda fx, p: fx.revise(FACT, target=p + "E_qa", dry_run="no"),
        "dry_run",
        "dry_run: must be true or false",
    ),
    (lambda fx, p: fx.revise(FACT, target=p + "E_qa", dry_run=1), "dry_run", "got 1"),
    (lambda fx, p: fx.revise(FACT, record="yes"), "record", "record: must be true or false, got 'yes'"),
    (lambda fx, p: fx.revise_many("abc"), "facts", "facts: must be a list of facts"),
    (lambda fx, p: fx.revise_many({"fact": "a"}), "facts", "got a single dict"),
    (lambda fx, p: fx.revise_many(None), "facts", "got None"),
    (lambda fx, p: fx.revise_many([FACT, None]), "facts", "facts line 2: a fact is its text or an object"),
    (lambda fx, p: fx.revise_many([{"target": "E"}]), "fact", "facts line 1: missing 'fact'"),
    (lambda fx, p: fx.revise_many([FACT], dry_run="yes"), "dry_run", "dry_run: must be true or false"),
    (lambda fx, p: fx.status(epoch="1"), "epoch", "epoch: must be a whole number"),
    (lambda fx, p: fx.status(epoch=1.0), "epoch", "got 1.0"),
    (lambda fx, p: fx.status(epoch=True), "epoch", "got True"),
    (lambda fx, p: fx.status(epoch=-1), "epoch", "got -1"),
    (lambda fx, p: fx.recall(epoch="1"), "epoch", "epoch: must be a whole number"),
    (lambda fx, p: fx.recall(5), "question", "question: must be a string"),
    (lambda fx, p: fx.recall(as_of=20200101), "as_of", "as_of: must be a string"),
    (lambda fx, p: fx.recall(inquiry=1), "inquiry", "inquiry: must be a string"),
    (lambda fx, p: fx.recall(path=("a", "b")), "path", "path: must be a string"),
    (lambda fx, p: fx.search(5), "query", "query: must be a string"),
    (
        lambda fx, p: fx.search("QA", top_k="2"),
        "top_k",
        "top_k: must be a whole number from 1 to 100, got '2'",
    ),
    (lambda fx, p: fx.search("QA", top_k=True), "top_k", "got True"),
    (lambda fx, p: fx.search("QA", top_k=0), "top_k", "got 0"),
    (
        lambda fx, p: fx.search("QA", include_dead="yes"),
        "include_dead",
        "include_dead: must be true or false",
    ),
    (lambda fx, p: fx.explain(None), "key", "key: must be a string, got None"),
    (lambda fx, p: fx.resolve(1, p + "E_qa"), "loser", "loser: must be a string, got 1"),
    (lambda fx, p: fx.resolve(p + "E_qa", 2), "winner", "winner: must be a string, got 2"),
    (lambda fx, p: fx.check(repair="no"), "repair", "repair: must be true or false, got 'no'"),
    (lambda fx, p: fx.load(5), "source", "expected a path, JSON text or bytes, or a dict, got int"),
    (lambda fx, p: fx.load(["a"]), "source", "got list"),
    (lambda fx, p: fx.load("/nonexistent/x.json"), "source", "cannot read /nonexistent/x.json"),
    (
        lambda fx, p: fx.load({"question": {"key": "Q"}, "bad": float("nan")}),
        "source",
        "not JSON-serialisable",
    ),
]


@pytest.mark.parametrize("case", range(len(WRONG)))
async def test_an_argument_of_the_wrong_type_is_refused_naming_it(app, prefix, case):
    call, field, words = WRONG[case]
    await refused(app, lambda: call(app, prefix), field, words)


async def test_the_right_types_still_pass(app, prefix):
    await app.load(seed_with_prefix(prefix))
    epoch = app.journal.epoch()
    assert (await app.status(epoch=epoch))["epoch"] == epoch
    assert isinstance(await app.search("QA report", top_k=2, include_dead=False), list)
    preview = await app.revise(FACT, target=prefix + "E_qa", dry_run=True)
    assert preview["dry_run"] is True and app.journal.epoch() == epoch


async def test_results_are_plain_json_types(app, prefix):
    await app.load(seed_with_prefix(prefix))
    await app.revise(FACT + f" ({prefix})", target=prefix + "E_qa")

    def plain(value, where="result"):
        if isinstance(value, dict):
            for name, item in value.items():
                plain(item, f"{where}.{name}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                plain(item, f"{where}[{i}]")
        else:
            assert value is None or type(value) in (str, int, float, bool), (where, type(value))

    status = await app.status()
    plain(status)
    assert {type(n["type"]) for n in status["nodes"]} == {str}
    plain(await app.explain(prefix + "K"))
    plain(await app.search("QA report", include_dead=True))
    plain(await app.recall())


async def test_check_with_repair_has_the_documented_shape(app):
    result = await app.check(repair=True)
    assert {
        "clean",
        "problems",
        "repaired",
        "clean_after_repair",
        "problems_after_repair",
        "cannot_restore",
    } <= set(result)
    if result["clean"]:  # nothing to repair: empty lists, clean after
        assert (
            result["repaired"] == []
            and result["problems_after_repair"] == []
            and result["cannot_restore"] == []
        )
        assert result["clean_after_repair"] is True
    assert set(await app.check()) <= {"clean", "problems", "recovered_at_open"}


async def test_a_hypothesis_named_before_the_decision_is_kept_in_the_note(app, prefix):
    await app.load(seed_with_prefix(prefix))
    words = f"An unrelated remark about the weather at the plant ({prefix})."
    before = app.journal.epoch()
    result = await app.revise(words, supports=prefix + "B", weight=0.7)
    if not result.get("to_decide"):
        pytest.skip("a judge decided the fact (an LLM key is set): nothing is left to decide")
    assert app.journal.epoch() == before and result["new_evidence"] is None
    assert f"supports='{prefix}B' (weight 0.7) is part of your decision" in result["note"], result["note"]
    assert "target=KEY" in result["note"] and "record=True" in result["note"]
    # a host's cognee pipeline of the revision Tasks says it too
    import cognee

    from memory_core import revision_tasks
    from memory_core.store.pipeline import task

    seen = []

    async def keep(results, ctx=None):
        seen.extend(results)
        return results

    await cognee.run_custom_pipeline(
        tasks=revision_tasks(app) + [task(keep)],
        data=[{"fact": words, "supports": prefix + "B"}],
        dataset="falsify",
        pipeline_name="kept_note_test",
    )
    assert app.journal.epoch() == before and len(seen) == 1 and seen[0]["to_decide"]
    assert f"supports='{prefix}B' is part of your decision" in seen[0]["note"], seen[0]["note"]
    # the decision with the same hypothesis writes the edge
    recorded = await app.revise(words, record=True, supports=prefix + "B", weight=0.7)
    assert recorded["edges_added"] == [f"supports {recorded['new_evidence']} -> {prefix}B"]


async def test_one_node_named_twice_in_two_spellings_is_not_resolved_against_itself(app, prefix):
    """Keys match whatever their case (as node ids do): ``resolve`` given one evidence key as
    the loser and, spelt in another case, as the winner says they are one node (not that the
    loser does not exist), as it says for one spelling; nothing is written."""
    await app.load(seed_with_prefix(prefix))
    loser = prefix + "E_qa"
    for winner in (loser.lower(), loser.upper(), loser):
        error = await refused(
            app,
            lambda: app.resolve(loser, winner),
            "winner",
            "the loser and the winner must be two different nodes",
        )
        assert "no node" not in str(error)
        if winner != loser:
            assert f"'{loser}' and '{winner}' are one key" in str(error), str(error)


@pytest.mark.parametrize("item", [5, None, 2.5, b"a fact as bytes"])
async def test_a_revision_pipeline_data_item_of_another_type_is_refused_naming_it(app, item):
    """A host's pipeline data item for the revision Tasks is a fact's text, a dict of revise's
    fields or a list of those: anything else fails the run with an InputError naming the item
    and what an item may be (never a bare TypeError from inside the Task); nothing is written."""
    import cognee

    from memory_core import revision_tasks

    before = app.journal.epoch()
    with pytest.raises(InputError) as caught:
        await cognee.run_custom_pipeline(
            tasks=revision_tasks(app), data=[item], dataset="falsify", pipeline_name="bad_item_test"
        )
    message = str(caught.value)
    assert "a data item is a fact (its text), a dict of revise's fields (fact, triple, target" in message
    assert f"or a list of those, got {'None' if item is None else type(item).__name__}" in message
    assert "nothing of this pipeline run was applied" in message
    assert app.journal.epoch() == before


async def test_a_fragment_redefining_a_stored_node_is_refused(app, prefix):
    await app.load(seed_with_prefix(prefix))
    before = app.journal.epoch()
    question = prefix + "Q"
    fragment = {
        "question": {"key": question},
        "evidence": [{"key": prefix + "E_qa", "claim": "Other words."}],
    }
    with pytest.raises(InputError) as caught:
        await app.load(fragment)
    assert f"evidence '{prefix}E_qa' is stored with other text" in str(caught.value)
    assert "nothing was written" in str(caught.value)
    # the same text again adds nothing and is fine
    stored = next(n for n in (await app.status())["nodes"] if n["key"] == prefix + "E_qa")
    same = await app.load(
        {"question": {"key": question}, "evidence": [{"key": prefix + "E_qa", "claim": stored["text"]}]}
    )
    assert same["epoch"] is None and app.journal.epoch() == before
    # another kind under a stored key: named with the right article
    with pytest.raises(InputError) as caught:
        await app.load(
            {"question": {"key": question}, "hypotheses": [{"key": prefix + "E_qa", "statement": "x"}]}
        )
    assert f"key '{prefix}E_qa' is already evidence in this data root, not a hypothesis" in str(caught.value)
    assert app.journal.epoch() == before


def cli(tmp_path, *args, stdin=None):
    env = dict(os.environ, FALSIFY_NO_SERVER="1")
    return subprocess.run(
        [sys.executable, str(MAIN), "--cold", "--root", str(tmp_path / "root"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_file_line_names_its_fields_as_the_line_spells_them(tmp_path):
    """``revise --file``: every message about a line names its JSON fields (no CLI flag), and
    the root is never created (the file is checked before anything opens)."""
    cases = [
        (
            {"fact": "a", "source": "s", "trust": "0.5"},
            "line 2: trust: must be a number from 0 to 1, got '0.5'",
        ),
        ({"fact": "b", "record": "yes"}, "line 2: record: must be true or false, got 'yes'"),
        ({"fact": "c", "weight": 0.3}, "line 2: weight needs supports or refutes"),
        ({"fact": "d", "target": "E_qa", "record": True}, "line 2: record: true (the fact"),
        ({"fact": "e", "target": "NOPE"}, "line 2: target 'NOPE': no evidence with that key"),
    ]
    for line, words in cases:
        facts = tmp_path / "facts.jsonl"
        facts.write_text(json.dumps({"fact": "first"}) + "\n" + json.dumps(line) + "\n")
        done = cli(tmp_path, "revise", "--file", str(facts))
        assert done.returncode == 2, done.stderr
        assert f"facts.jsonl {words}" in done.stderr, done.stderr
        assert "--" not in done.stderr.split("facts.jsonl", 1)[1], done.stderr
        assert not (tmp_path / "root").exists()


def test_the_cli_epoch_reaches_the_api_as_a_number(tmp_path):
    done = cli(tmp_path, "status", "--epoch", "1x")
    assert done.returncode == 2 and "whole number" in done.stderr
