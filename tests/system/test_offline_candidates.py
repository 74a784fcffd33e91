"""Offline, the caller decides; gate 1 is hybrid (vector + lexical, fused, top k).

* the lexical search module's contract on the real store (words only, best first,
  each hit with its row's vector, nothing for a text with no words);
* reciprocal rank fusion (pure) and one call path: a batch's in-memory vector ranking
  equals the per-fact searches;
* without an LLM key a fact in words lists gate 1's ranked candidates, records nothing,
  exits 0 and prints a ready ``--target`` command per candidate; running the printed
  command completes the revision;
* the MCP offline agent protocol through the official SDK client: ``revise`` returns
  the candidates in its structured content, the agent calls again with ``target``.
"""

from __future__ import annotations

import json
import shlex

import pytest

import forkserver
from conftest import BACKEND, REPO, clean_env, investigation

AUDIT = "Forensic audit: the March QA report was back-dated."


def test_rrf_is_the_documented_rule():
    from memory_core.judging.retrieval import RRF_K, rrf

    scores = rrf([["a", "b", "c"], ["c", "a"]])
    assert scores["a"] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert scores["c"] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert scores["b"] == pytest.approx(1 / (RRF_K + 2))
    assert sorted(scores, key=lambda i: -scores[i]) == ["a", "c", "b"]


async def test_lexical_search_contract(app, prefix):
    from memory_core.store.lexical import query_words

    assert query_words("Forensic audit: the 'March' QA-report!") == [
        "forensic",
        "audit",
        "the",
        "march",
        "qa",
        "report",
    ]
    word = f"zq{prefix.strip('_')}"  # a word no other test's evidence has
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "E1", "claim": f"The {word} ledger was filed."},
                {"key": "E2", "claim": f"The {word} ledger and the {word} invoice were filed."},
                {"key": "E3", "claim": "Penguins live in the southern hemisphere."},
            ],
        )
    )
    keys = await app.store.find_keys([prefix + k for k in ("E1", "E2", "E3")])
    by_id = {props["id"]: key for key, props in keys.items()}
    [hits, none] = await app.store.lexical("Evidence_claim", [f"{word} invoice", "?! ..."], 10)
    [missing_collection] = await app.store.lexical("No_such_collection", ["x"], 10)
    found = [by_id.get(i) for i, _, _ in hits]
    assert found[:2] == [prefix + "E2", prefix + "E1"]  # the row with both words first
    assert prefix + "E3" not in found
    scores = [s for _, s, _ in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert all(v is not None and len(v) == 384 for _, _, v in hits[:2])
    assert none == [] and missing_collection == []


async def test_batch_vector_ranking_equals_per_fact_search(app, prefix):
    from memory_core.judging.retrieval import BATCH_GATE1_MIN, Query, VectorRetriever, gate1_many

    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": f"E{i}", "claim": f"{prefix} part {i} came from plant {i % 3}."} for i in range(6)
            ],
        )
    )
    facts = [f"{prefix} part {i} was made at plant {i % 2}." for i in range(BATCH_GATE1_MIN)]
    vectors = await app.store.embed(facts)
    queries = [Query(f, None, v) for f, v in zip(facts, vectors)]
    together = await gate1_many(
        app.store, queries, 5, None, (VectorRetriever(),)
    )  # in memory: one read of the vectors
    for q, got in zip(queries, together):
        [alone] = await gate1_many(app.store, [q], 5, None, (VectorRetriever(),))  # one search
        assert got.ids == alone.ids
        assert [got.distance[i] for i in got.ids] == pytest.approx(
            [alone.distance[i] for i in alone.ids], abs=1e-4
        )


async def test_equal_scores_rank_the_same_whatever_order_the_engine_returns(app, prefix):
    """Claims stored with the same text tie on distance and on lexical score; an engine may
    return ties in any order (a scan over several fragments does). Gate 1 ranks them the
    same either way (node-id order), so one fact asked twice gets the same candidates."""
    from memory_core.judging.retrieval import gate1_many, Query

    word = f"zt{prefix.strip('_')}"
    # words no other test stores, so that the four are the fact's nearest claims whatever else the
    # session's root holds (every in-process test's evidence on this worker): worded like the other
    # tests' QA-report claims, one of the four once fell out of the top 8 before any tie was ranked
    claim = f"The {word} lighthouse keeper counted ninety herons at dawn."
    for part in range(4):  # four loads: four appends, as separate writes lay them out
        await app.load(investigation(f"{prefix}{part}", evidence=[{"key": "E", "claim": claim}]))

    class EngineReversing:
        """The real store, with every search's rows handed back in reverse order."""

        def __init__(self, store):
            self._store = store

        def __getattr__(self, name):
            return getattr(self._store, name)

        async def search(self, *args):
            return list(reversed(await self._store.search(*args)))

        async def search_vector(self, *args):
            return list(reversed(await self._store.search_vector(*args)))

        async def lexical(self, *args):
            return [list(reversed(rows)) for rows in await self._store.lexical(*args)]

    fact = f"Audit: the {word} lighthouse keeper counted ninety herons at dawn, not at dusk."
    [vector] = await app.store.embed([fact])
    for query in (Query(fact), Query(fact, vector=vector)):
        [as_stored] = await gate1_many(app.store, [query], 8)
        [reversed_] = await gate1_many(EngineReversing(app.store), [query], 8)
        assert len([i for i in as_stored.ids if as_stored.props[i]["key"].startswith(prefix)]) == 4
        assert as_stored.ids == reversed_.ids and as_stored.rank == reversed_.rank


async def test_offline_fact_in_words_returns_ranked_candidates_records_nothing(app, prefix):
    # The session's root is shared: other tests store the seed's claims under their own prefixes and
    # record restatements of its audit fact ("Forensic audit: the March QA report was back-dated.",
    # every in-process demo revision), which lie nearer to a restatement of that fact than any claim
    # of this test's and fill gate 1's top k. So this test's claims and fact are about a subject no
    # other test stores (a tidal turbine), with a word only they carry: its own claim is the nearest
    # in the whole root, whatever ran before (the revision it records is undone at the end: a
    # restatement of its fact is the one thing that would lie nearer)
    word = f"zr{prefix.strip('_')}"
    await app.load(
        investigation(
            prefix,
            evidence=[
                {
                    "key": "E_qa",
                    "claim": f"The {word} tidal turbine's QA report documented the blade crack on 15 March 2021.",
                },
                {
                    "key": "E_mail",
                    "claim": f"Supplier {word} warned of cracked turbine blades in January 2021.",
                },
            ],
            conclusions=[{"key": "K", "statement": f"{word} knew of the blade crack in March"}],
            edges=[{"type": "depends_on", "from": "K", "to": "E_qa"}],
        )
    )
    epoch = app.journal.epoch()
    fact = f"An inspection of the {word} tidal turbine found its QA report's date was forged."
    result = await app.revise(fact)
    assert result["epoch"] is None and result["new_evidence"] is None and app.journal.epoch() == epoch
    assert result["candidates"][0]["key"] == prefix + "E_qa"  # the nearest of the whole root
    assert result["to_decide"] == [c["key"] for c in result["candidates"]]
    first = result["candidates"][0]
    assert first["relation"] is None
    assert first["lexical"] > 0 and 0 < first["distance"] < 2 and "QA report" in first["claim"]
    assert [c["rank"] for c in result["candidates"]] == list(range(1, len(result["candidates"]) + 1))
    assert len(result["candidates"]) <= 8  # a bounded top k
    assert "target=" in result["note"]  # a Python caller reads the keyword (the CLI's --target: below)
    done = await app.revise(fact, target=first["key"])
    assert done["refuted"] == [prefix + "E_qa"] and done["invalidated"] == [prefix + "K"]
    assert (await app.undo())["undone"] == done["epoch"]


@pytest.mark.slow
def test_cli_prints_ready_target_commands_and_the_printed_one_completes(tmp_path):
    from harness import run_batch

    root = tmp_path / "root"
    steps = [
        {"name": "load", "argv": ["load", str(REPO / "examples" / "company_x.json")]},
        {"name": "text", "argv": ["--root", str(root), "revise", AUDIT], "snapshot": True},
        {"name": "json", "argv": ["revise", AUDIT, "--json"]},
        # the first printed --target command, as a user would paste it (minus `python main.py --root ROOT`)
        {
            "name": "pasted",
            "argv": ["--json"],
            "argv_from": {"step": "text", "startswith": "python", "contains": "--target", "drop": 4},
        },
    ]
    results = run_batch(root, [dict(s, op="cli") for s in steps], tmp_path / "w1")
    text, as_json, done = results[1], results[2], results[3]
    assert text["code"] == 0 and as_json["code"] == 0, (text, as_json)
    assert text["before"] == text["after"]  # nothing recorded
    out = text["stdout"]
    assert "candidate #1 E_qa" in out and "undecided" in out and "you decide" in out
    commands = [
        line.strip() for line in out.splitlines() if "--target" in line and line.strip().startswith("python")
    ]
    assert commands and commands[0].endswith("--target E_qa")
    parsed = json.loads(as_json["stdout"])
    assert parsed["to_decide"][0] == "E_qa" and parsed["epoch"] is None
    assert {"claim", "lexical", "rank", "distance"} <= set(parsed["candidates"][0])
    # the printed command, as a user would paste it (minus `python main.py`): the batch ran exactly it
    argv = shlex.split(commands[0])[2:]
    assert argv[:2] == ["--root", str(root)]
    assert done["argv"] == argv[2:] + ["--json"]
    assert done["code"] == 0, done
    assert json.loads(done["stdout"])["refuted"] == ["E_qa"]


@pytest.mark.slow
def test_a_fact_recorded_beside_an_undecided_claim_is_decided_against_it_with_resolve(tmp_path):
    """A triple fact is recorded when the judge decided its candidates and the claim it could not
    judge lies far: no "you decide" (a repeated fact changes nothing, so a --target would be
    dropped); the note names the decision that works (resolve), a repeat with a decision is refused
    with it and writes nothing, and resolve refutes the claim as a pinned revision would."""
    from harness import run_batch

    root, file = tmp_path / "root", tmp_path / "part.json"
    file.write_text(
        investigation(
            "",
            hypotheses=[{"key": "H1", "statement": "part R-7 is from Ulm"}],
            evidence=[
                {
                    "key": "E1",
                    "claim": "The part R-7 was made in Ulm.",
                    "subject": "part R-7",
                    "predicate": "was made in",
                    "object": "Ulm",
                },
                {  # no triple: no offline judge decides on it (cosine distance 0.61 from the fact)
                    "key": "E3",
                    "claim": "Invoices for R-7 were archived by the finance office in 2019 after the yearly "
                    "audit of all suppliers.",
                },
            ],
            conclusions=[{"key": "K3", "statement": "the R-7 invoices are on file"}],
            edges=[
                {"type": "supports", "from": "E1", "to": "H1"},
                {"type": "depends_on", "from": "K3", "to": "E3"},
            ],
        )
    )
    fact = ["revise", "The part R-7 is painted red."]
    steps = [
        {"name": "load", "argv": ["--root", str(root), "load", str(file)]},
        {"name": "text", "argv": fact + ["--triple", "part R-7|colour|red"], "snapshot": True},
        {"name": "target", "argv": fact + ["--target", "E3"], "snapshot": True},
        {"name": "supports", "argv": fact + ["--supports", "H1"], "snapshot": True},
        {"name": "repeat", "argv": fact + ["--triple", "part R-7|colour|red", "--json"]},
        {"name": "resolve", "argv": ["resolve", "E3", "--winner", "NEW", "--json"]},
        {"name": "explain", "argv": ["explain", "E3", "--json"]},
        {"name": "undo", "argv": ["undo"], "snapshot": True},
    ]
    out = run_batch(root, [dict(s, op="cli") for s in steps[:5]], tmp_path / "w1")
    text, target, supports, repeat = out[1], out[2], out[3], out[4]
    assert text["code"] == 0, text
    recorded = text["after"]["status"]
    new = next(n["key"] for n in recorded["nodes"] if n["text"] == "The part R-7 is painted red.")
    assert "undecided" in text["stdout"] and "you decide" not in text["stdout"]
    assert "not judged (far from the fact): E3" in text["stdout"]
    assert f"resolve E3 --winner '{new}'" in text["stdout"]
    assert target["code"] == 2 and f"resolve E3 --winner '{new}'" in target["stderr"], target
    assert supports["code"] == 2 and f'"from": "{new}", "to": "H1"' in supports["stderr"], supports
    for refused in (target, supports):
        assert refused["before"] == refused["after"]  # nothing written
    assert repeat["code"] == 0 and json.loads(repeat["stdout"])["already_applied"]
    rest = [dict(s, op="cli", argv=[new if a == "NEW" else a for a in s["argv"]]) for s in steps[5:]]
    resolved, explained, undone = run_batch(root, rest, tmp_path / "w2")
    result = json.loads(resolved["stdout"])
    assert result["refuted"] == ["E3"] and result["invalidated"] == ["K3"] and result["forgotten"] == ["K3"]
    last = json.loads(explained["stdout"])["events"][-1]
    assert last["rule"] == "contradicted" and last["cause"] == [new]
    assert "the caller's decision: resolve" in last["text"]
    assert undone["code"] == 0 and undone["after"]["status"]["nodes"] == recorded["nodes"]
    assert undone["after"]["status"]["edges"] == recorded["edges"]


@pytest.mark.slow
def test_the_first_fact_of_a_bare_question_is_recorded_in_it(tmp_path):
    """A fact with no candidate at all contradicts nothing stored: it is recorded (no judge needed) in
    the root's only question, and the next facts are judged against it as usual; with several
    questions and none near the fact, or nothing loaded, nothing is recorded and the note says why."""
    from harness import run_batch

    one, two, empty = tmp_path / "one", tmp_path / "two", tmp_path / "empty"
    bare = {"Q1": tmp_path / "q1.json", "Q2": tmp_path / "q2.json"}
    for key, file in bare.items():
        file.write_text(json.dumps({"question": {"key": key, "text": f"What do we know about {key}?"}}))
    lives = ["revise", "Maria lives in Lisbon.", "--triple", "Maria|lives in|Lisbon", "--json"]
    steps = [
        {"name": "load", "argv": ["--root", str(one), "load", str(bare["Q1"])]},
        {"name": "first", "argv": lives},
        {
            "name": "moved",
            "argv": ["revise", "Maria lives in Berlin.", "--triple", "Maria|lives in|Berlin", "--json"],
        },
        {"name": "recall", "argv": ["recall", "Where does Maria live?", "--json"]},
    ]
    load, first, moved, recall = run_batch(one, [dict(s, op="cli") for s in steps], tmp_path / "w1")
    first, moved = json.loads(first["stdout"]), json.loads(moved["stdout"])
    assert first["new_evidence"] and first["question"] == "Q1" and first["candidates"] == []
    assert f"recorded as {first['new_evidence']} in question Q1" in first["note"]
    assert moved["question"] == "Q1" and moved["refuted"] + moved["superseded"] == [first["new_evidence"]]
    assert json.loads(recall["stdout"])["falsify"]["answer"].startswith("Maria lives in Berlin.")

    steps = [
        {"name": "q1", "argv": ["--root", str(two), "load", str(bare["Q1"])]},
        {"name": "q2", "argv": ["load", str(bare["Q2"])]},
        {"name": "free", "argv": lives, "snapshot": True},
        {"name": "record", "argv": lives[:-1] + ["--record"], "snapshot": True},
    ]
    free, record = run_batch(two, [dict(s, op="cli") for s in steps], tmp_path / "w2")[2:]
    assert free["code"] == 0 and json.loads(free["stdout"])["new_evidence"] is None
    assert "2 questions are stored and none is this root's default" in json.loads(free["stdout"])["note"]
    assert record["code"] == 2 and "2 questions are stored" in record["stderr"]
    for step in (free, record):
        assert step["before"] == step["after"]  # nothing written

    (nothing,) = run_batch(
        empty, [{"name": "free", "op": "cli", "argv": ["--root", str(empty)] + lives}], tmp_path / "w3"
    )
    assert json.loads(nothing["stdout"])["note"].startswith("nothing loaded yet")


@pytest.mark.slow
async def test_mcp_offline_agent_protocol(tmp_path):
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root = tmp_path / "root"
    env = clean_env()
    if BACKEND == "postgres":  # the root's own database, as conftest.cli gives every root
        import pg_server

        env.update(pg_server.root_env(root))
    # forked from the fork server on the SDK client's pipes: a real process, the third-party imports paid once
    command, args = forkserver.stdio_command([REPO / "main.py", "--root", root, "mcp"])
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(REPO))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert "to_decide" in tools["revise"].description and "target" in tools["revise"].description
        seed = json.loads((REPO / "examples" / "company_x.json").read_text())
        assert not (await session.call_tool("add_beliefs", {"fragment": seed})).is_error
        first = await session.call_tool("revise", {"fact": AUDIT})
        assert not first.is_error
        offered = first.structured_content
        assert offered["epoch"] is None and offered["to_decide"][0] == "E_qa"
        assert offered["candidates"][0]["claim"].startswith("Company X's internal QA report")
        # the agent (a language model) judges the candidates, then calls again with its decision
        second = await session.call_tool("revise", {"fact": AUDIT, "target": offered["to_decide"][0]})
        assert not second.is_error and second.structured_content["refuted"] == ["E_qa"]


async def test_a_new_judge_is_one_class_in_the_chain():
    """The Judge protocol: a judge added to the chain (here one that reads a marker word, the
    place a local cross-encoder would take) decides what the judges before it left, and only
    that; the chain's other judges and the candidates' shape are untouched."""
    from memory_core.judging.chain import JUDGES, Case, StructuredJudge, judge_cases
    from memory_core.judging.detect import Candidate, finish_detection
    from memory_core.judging.prompts import ContradictionJudgement

    class MarkerJudge:
        name = "marker"

        def enabled(self, use_llm: bool) -> bool:
            return True

        async def decide(self, cases):
            return [
                {
                    c.key: ContradictionJudgement(rationale="marker", relation="contradicts", confidence=0.8)
                    for c in case.undecided
                    if "forged" in case.fact and "report" in c.claim
                }
                for case in cases
            ]

    cands = [
        Candidate("E1", "Q", "The QA report is dated March.", 0.6),
        Candidate("E2", "Q", "Lot 7 came from Ulm.", 0.3),
    ]
    props = {"E2": {"subject": "lot 7", "predicate": "came from", "object": "Ulm"}}
    case = Case("The QA report was forged; lot 7 came from Ulm.", ("lot 7", "came from", "Ulm"), cands, props)
    assert await judge_cases([case], use_llm=False, judges=[StructuredJudge(), MarkerJudge()]) is None
    assert [(c.key, c.relation, c.judge) for c in cands] == [
        ("E1", "contradicts", "marker"),
        ("E2", "supports", "structured"),
    ]
    assert finish_detection(cands, None).judge == "marker+structured"
    assert [j.name for j in JUDGES] == ["structured", "llm"]  # the default chain is unchanged


async def test_gate1_k_bounds_what_revise_judges(app, prefix, monkeypatch):
    """FALSIFY_GATE1_K (the opened stores' settings) is the k of revise's gate 1: with k=1
    one candidate is offered, with the default more (the shared root holds other evidence)."""
    import dataclasses

    word = f"zk{prefix.strip('_')}"
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "E_qa", "claim": f"The {word} QA report documented the defect on 15 March 2021."},
                {"key": "E_mail", "claim": f"Supplier {word} warned of cracked housings in January 2021."},
            ],
        )
    )
    fact = f"Forensic audit: the {word} March QA report was back-dated."
    wide = await app.revise(fact, dry_run=True)
    assert len(wide["candidates"]) >= 2
    monkeypatch.setattr(app.store.backend, "settings", dataclasses.replace(app.store.settings, gate1_k=1))
    narrow = await app.revise(fact, dry_run=True)
    assert [c["key"] for c in narrow["candidates"]] == [wide["candidates"][0]["key"]]
