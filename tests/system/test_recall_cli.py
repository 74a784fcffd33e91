"""Recall through the real CLI on a root of its own: the demo's story after the audit, then a
second inquiry beside it (one batch process, tests/support/cli_batch.py).

* a question about one of the demo's facts is answered from it, never from the refuted one;
* an off-topic question uses no node, says nothing stored matches and lists the stored
  questions, exit 0 (with one inquiry, then with two);
* the demo's question still answers from B [revised] while plain RAG cites E_qa [STALE];
* with two inquiries a question about one is answered from it; ``--inquiry`` pins one (its
  own question when none is asked; another's question finds nothing in it); an inquiry of
  evidence and conclusions only answers;
* ``--path`` follows the stored triples; bad ``--inquiry``/``--path`` are exit 2;
* with ``LLM_API_KEY`` (a local stub) FALSIFY's answer is written from alive beliefs only.
"""

from __future__ import annotations

import json

import pytest

from harness import DEMO_FACT, copy_root, js, loaded_root, ok, run_batch, run_cli

pytestmark = pytest.mark.slow

DEMO_QUESTION = "Did Company X know about the defect before the recall?"
OFF_TOPIC = "Who painted the Mona Lisa?"
LIMIT_QUESTION = "What was the posted weight limit of the Elm Street bridge?"
BRIDGE = {
    "question": {"key": "Q_bridge", "text": "What do we know about the Elm Street bridge?"},
    "evidence": [
        {
            "key": "E_limit",
            "claim": "The posted weight limit of the Elm Street bridge was 40 tonnes.",
            "subject": "Elm Street bridge",
            "predicate": "posted weight limit",
            "object": "40 tonnes",
            "source_id": "county sign register",
        },
        {
            "key": "E_span",
            "claim": "The Elm Street bridge spans 60 metres over the canal.",
            "source_id": "survey 2019",
        },
    ],
    "conclusions": [
        {"key": "K_trucks", "statement": "Trucks over 40 tonnes must not use the Elm Street bridge."}
    ],
    "edges": [{"type": "depends_on", "from": "K_trucks", "to": "E_limit"}],
}


def cli(name, *argv):
    return {"name": name, "op": "cli", "argv": list(argv)}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("recall_cli")
    root = copy_root(loaded_root(tmp_path_factory), work / "root")
    bridge = work / "bridge.json"
    bridge.write_text(json.dumps(BRIDGE), encoding="utf-8")
    steps = [
        cli("audit", "revise", DEMO_FACT, "--target", "E_qa", "--json"),
        cli("off_topic", "recall", OFF_TOPIC, "--json"),
        cli("off_topic_text", "recall", OFF_TOPIC),
        cli("warned", "recall", "When did the supplier warn Company X?", "--json"),
        cli("documented", "recall", "What did the QA report document?", "--json"),
        cli("load_bridge", "load", str(bridge), "--json"),
        cli("demo", "recall", DEMO_QUESTION, "--json"),
        cli("limit", "recall", LIMIT_QUESTION, "--json"),
        cli("neither", "recall", OFF_TOPIC, "--json"),
        cli("no_question", "recall", "--json"),
        cli("pinned_own", "recall", "--inquiry", "Q_bridge", "--json"),
        cli("pinned_other", "recall", LIMIT_QUESTION, "--inquiry", "Q", "--json"),
        cli("path", "recall", "--path", "Elm Street bridge|posted weight limit", "--json"),
        cli("path_text", "recall", "--path", "Elm Street bridge|posted weight limit"),
        cli("bad_inquiry", "recall", LIMIT_QUESTION, "--inquiry", "Q_nope"),
        cli("bad_path", "recall", "--path", "Elm Street bridge"),
        cli("path_and_question", "recall", LIMIT_QUESTION, "--path", "Elm Street bridge|posted weight limit"),
        cli(
            "lower",
            "revise",
            "The posted weight limit of the Elm Street bridge was lowered to 30 tonnes.",
            "--triple",
            "Elm Street bridge|posted weight limit|30 tonnes",
            "--key",
            "F_limit",
            "--json",
        ),
        cli("before_lower", "recall", f"{LIMIT_QUESTION[:-1]} before 30 tonnes?"),
    ]
    results = {r["name"]: r for r in run_batch(root, steps, work / "batch", timeout=900)}
    results["root"] = root
    return results


def test_an_off_topic_question_uses_no_node_and_lists_the_stored_questions(run):
    for name, stored in (("off_topic", ["Q"]), ("neither", ["Q", "Q_bridge"])):
        result = js(run[name])
        assert (
            result["falsify"]["nodes"] == []
            and result["falsify"]["answer"] == "nothing stored matches the question"
        )
        assert [q["key"] for q in result["stored_questions"]] == stored
        assert result["relevance"]["matched"] is False
        assert result["relevance"]["best_distance"] > result["relevance"]["floor"]
        assert result["scoreboard"]["falsify_mark"] == "" and "nothing stored matches" in result["verdict"]
    text = ok(run["off_topic_text"])["stdout"]
    assert "nothing stored matches" in text and "stored questions: Q: Did Company X know" in text


def test_a_question_about_a_fact_of_the_demo(run):
    warned = js(run["warned"])  # the claim lies far in meaning (a long sentence) but holds every word asked
    assert warned["falsify"]["nodes"] == ["E_email"] and "12 January 2021" in warned["falsify"]["answer"]
    documented = js(run["documented"])  # the QA report's claim is refuted: the audit that refuted it answers
    assert "E_qa" not in documented["falsify"]["nodes"] and "back-dated" in documented["falsify"]["answer"]
    assert all(m["key"] != "E_qa" for m in documented["falsify"]["matches"])


def test_the_demo_question_keeps_its_scoreboard_beside_a_second_inquiry(run):
    result = js(run["demo"])
    assert result["investigation"] == "Q" and result["falsify"]["nodes"][0] == "B"
    assert "E_qa" in result["baseline"]["nodes"]
    assert result["scoreboard"] == {"falsify_mark": "[revised]", "baseline_mark": "[STALE]"}


def test_a_question_about_the_second_inquiry_is_answered_from_it(run):
    result = js(run["limit"])
    assert result["investigation"] == "Q_bridge" and result["falsify"]["nodes"][0] == "E_limit"
    assert "40 tonnes" in result["falsify"]["answer"] and result["falsify"]["sources"] == [
        "county sign register"
    ]


def test_no_question_with_several_inquiries_asks_for_one(run):
    result = js(run["no_question"])
    assert result["falsify"]["nodes"] == [] and "pin an inquiry" in result["falsify"]["answer"]
    assert [q["key"] for q in result["stored_questions"]] == ["Q", "Q_bridge"]


def test_a_pinned_inquiry(run):
    own = js(run["pinned_own"])  # evidence and a conclusion only: they answer its own question
    assert own["inquiry"] == own["investigation"] == "Q_bridge"
    assert own["falsify"]["nodes"] and set(own["falsify"]["nodes"]) <= {"E_limit", "E_span", "K_trucks"}
    other = js(run["pinned_other"])  # the demo's inquiry holds nothing about the bridge
    assert other["inquiry"] == "Q" and other["falsify"]["nodes"] == []
    assert run["bad_inquiry"]["code"] == 2 and "Q_nope" in run["bad_inquiry"]["stderr"]


def test_a_path_and_bad_paths(run):
    result = js(run["path"])
    assert result["path"]["values"] == ["40 tonnes"] and result["falsify"]["nodes"] == ["E_limit"]
    assert "Elm Street bridge -posted weight limit-> 40 tonnes (E_limit)" in ok(run["path_text"])["stdout"]
    assert run["bad_path"]["code"] == 2 and "path" in run["bad_path"]["stderr"]
    assert run["path_and_question"]["code"] == 2 and "not both" in run["path_and_question"]["stderr"]


def test_with_a_key_the_llm_writes_from_alive_beliefs_only(run):
    from llm_stub import StubLLM

    assert js(run["lower"])["refuted"] == ["E_limit"]
    with StubLLM() as stub:
        env = stub.judge_env()
        proc = run_cli(run["root"], "recall", LIMIT_QUESTION, "--json", env=env)
        asked = [json.dumps(r["body"]) for r in stub.requests if "Question:" in json.dumps(r.get("body"))]
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["mode"] == "llm" and result["falsify"]["nodes"][0] == "F_limit"
    assert result["falsify"]["answer"].startswith(
        "stub LLM answer from: The posted weight limit of the Elm Street bridge was lowered to 30 tonnes"
    )
    falsify_request = next(
        a for a in asked if "lowered to 30 tonnes" in a.split("Context")[1].split("\\n")[1]
    )
    assert "was 40 tonnes" not in falsify_request  # the refuted limit is never in FALSIFY's context


def test_a_question_before_a_value_says_how_it_was_read(run):
    """Without valid time, "before 30 tonnes" is the value as it stood before the revision that
    recorded 30 tonnes: the text output says which words it read and from which value."""
    out = run["before_lower"]["stdout"]
    assert run["before_lower"]["code"] == 0, run["before_lower"]
    assert "read from its words 'before 30 tonnes': the value before F_limit" in out, out
    assert (
        "as it stood after epoch" in out and "40 tonnes" in out.split("FALSIFY recall :")[1].split("\n")[0]
    ), out
