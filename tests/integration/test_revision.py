"""On real stores: two-gate detection, cascade, promotion, forget, explain."""

from __future__ import annotations

import json

import pytest

from conftest import investigation, seed_with_prefix
from memory_core.core.investigation import InputError

FACT = "Forensic audit: the March QA report was back-dated."


def states(status, prefix):
    return {n["key"][len(prefix) :]: n for n in status["nodes"] if n["key"].startswith(prefix)}


async def truth(app, prefix, key, kind):
    from memory_core.store.models import node_id

    nid = node_id(kind, prefix + key)
    return (await app.store.truth_states([nid])).get(nid)  # every backend (cognee's API is Ladybug-only)


async def test_contract_4_1_on_real_stores(app, prefix):
    from memory_core.store.models import collection, node_id

    await app.load(seed_with_prefix(prefix))
    result = await app.revise(FACT + f" ({prefix})", target=prefix + "E_qa")
    assert result["judge"] == "pinned" and "pinned" in result["note"]
    # test_direct_refutation
    assert (await truth(app, prefix, "E_qa", "evidence"))["truth_alignment"] == ["refuted"]
    # test_competing_hypothesis_promoted
    assert (await truth(app, prefix, "A", "hypothesis"))["truth_alignment"] == ["superseded"]
    hyps = await app.store.raw_nodes([node_id("hypothesis", prefix + k) for k in ("A", "B", "C")])
    weights = {i: p["feedback_weight"] for i, p in hyps.items()}
    b, a, c = (weights[node_id("hypothesis", prefix + k)] for k in ("B", "A", "C"))
    assert b > a
    # promotion, not just A's fall: B now sits above the untouched alive rival C (0.5 before), by the promotion step
    assert c == 0.5 and b == 0.75
    s = states(await app.status(), prefix)
    assert s["B"]["state"] == "alive"
    # test_orphan_forgotten_from_both_stores (K invalidated, then deleted from graph AND vector)
    k_id = node_id("conclusion", prefix + "K")
    assert result["invalidated"] == [prefix + "K"] and result["forgotten"] == [prefix + "K"]
    assert not await app.store.graph.has_node(k_id)
    assert k_id not in await app.store.vector_ids(collection("conclusion"))
    # test_provenance_kept: E_qa stays, refuted, superseded by the new fact
    assert s["E_qa"]["state"] == "refuted"
    new = result["new_evidence"]
    edges = [e for e in (await app.status())["edges"] if e["from"] == new]
    assert edges == [{"type": "supersedes", "from": new, "to": prefix + "E_qa", "confidence": 1.0}]
    assert result["epoch"] == app.journal.epoch()
    # explain K (forgotten): loaded, invalidated because of E_qa, forgotten
    why = await app.explain(prefix + "K")
    assert [e["rule"] for e in why["events"]] == ["loaded", "justification_lost", "orphaned"]
    assert why["events"][1]["cause"] == [prefix + "E_qa"]


async def test_revising_the_same_fact_twice_changes_nothing(app, prefix):
    await app.load(seed_with_prefix(prefix))
    fact = FACT + f" [{prefix}]"
    first = await app.revise(fact, target=prefix + "E_qa")
    status = await app.status()
    epoch = app.journal.epoch()
    second = await app.revise(fact, target=prefix + "E_qa")
    assert second.get("already_applied") and "nothing changed" in second["note"]
    assert second["refuted"] == [] and first["refuted"] == [prefix + "E_qa"]
    assert await app.status() == status and app.journal.epoch() == epoch


def chain(prefix, subject):
    """E1 (triple) <- K1 <- K2 (non-critical to E2), two hypotheses."""
    return investigation(
        prefix,
        hypotheses=[
            {"key": "H1", "statement": "the plant in Ulm made the part"},
            {"key": "H2", "statement": "the plant in Graz made the part"},
        ],
        evidence=[
            {
                "key": "E1",
                "claim": f"The part {subject} was made in Ulm.",
                "subject": f"part {subject}",
                "predicate": "was made in",
                "object": "Ulm",
            },
            {
                "key": "E2",
                "claim": f"The part {subject} passed inspection in Graz.",
                "subject": f"part {subject}",
                "predicate": "passed inspection in",
                "object": "Graz",
            },
        ],
        conclusions=[
            {"key": "K1", "statement": f"{subject} is an Ulm part", "confidence": 0.9},
            {"key": "K2", "statement": f"{subject} warranty is German", "confidence": 0.8},
        ],
        edges=[
            {"type": "depends_on", "from": "K1", "to": "E1"},
            {"type": "depends_on", "from": "K2", "to": "K1"},
            {"type": "depends_on", "from": "K2", "to": "E2", "critical": False},
            {"type": "supports", "from": "E1", "to": "H1", "weight": 0.9},
            {"type": "supports", "from": "E2", "to": "H2", "weight": 0.6},
        ],
    )


async def test_structured_judge_contradicts_by_triple(app, prefix):
    subject = f"X-{prefix}"
    await app.load(chain(prefix, subject))
    result = await app.revise(
        f"The part {subject} was actually made in Lyon.", triple=f"part {subject}|was made in|Lyon"
    )
    assert result["judge"] == "structured"
    assert result["refuted"] == [prefix + "E1"]
    assert sorted(result["invalidated"]) == [prefix + "K1", prefix + "K2"]
    assert result["superseded"] == [prefix + "H1"] and result["promoted"] == [prefix + "H2"]
    cand = next(c for c in result["candidates"] if c["key"] == prefix + "E1")
    assert cand["relation"] == "contradicts" and cand["confidence"] == 0.9


async def test_structured_judge_supports_same_object(app, prefix):
    subject = f"Y-{prefix}"
    await app.load(chain(prefix, subject))
    before = states(await app.status(), prefix)
    # named into its question: a claim of another test no judge can decide lying near the fact
    # (test_decided_contradiction_lands_despite_undecidable_neighbours's "The part R-... was made
    # in Ulm by hand.") would hold the fact back unrecorded (failed so on PostgreSQL after that test)
    result = await app.revise(
        f"Records confirm part {subject} came from Ulm.",
        triple=f"part {subject}|was made in|Ulm",
        inquiry=f"{prefix}Q",
    )
    assert result["refuted"] == [] and result["invalidated"] == []
    assert [c["relation"] for c in result["candidates"] if c["key"] == prefix + "E1"] == ["supports"]
    after = states(await app.status(), prefix)
    assert {k: v["state"] for k, v in after.items() if k in before} == {
        k: v["state"] for k, v in before.items()
    }
    assert result["new_evidence"] in {n["key"] for n in (await app.status())["nodes"]}  # the fact is recorded


async def test_unrelated_fact_records_nothing(app, prefix):
    subject = f"Z-{prefix}"
    await app.load(chain(prefix, subject))
    epoch = app.journal.epoch()
    result = await app.revise("Penguins are flightless birds of the southern hemisphere.")
    assert result["new_evidence"] is None and result["epoch"] is None
    assert app.journal.epoch() == epoch


async def test_no_judge_can_decide_records_nothing(app, prefix):
    subject = f"W-{prefix}"
    await app.load(chain(prefix, subject))
    epoch = app.journal.epoch()
    # close paraphrase (gate 1 finds it) but no triple and no LLM key: undecidable
    result = await app.revise(f"The part {subject} was made in Ulm, Germany.")
    assert result["candidates"], "gate 1 should find the paraphrased evidence"
    assert "no judge could decide" in result["note"] and result["epoch"] is None
    assert app.journal.epoch() == epoch


async def test_dry_run_changes_nothing(app, prefix):
    subject = f"V-{prefix}"
    await app.load(chain(prefix, subject))
    status, epoch = await app.status(), app.journal.epoch()
    result = await app.revise(
        f"The part {subject} was made in Lyon.", triple=f"part {subject}|was made in|Lyon", dry_run=True
    )
    assert [c["relation"] for c in result["candidates"] if c["key"] == prefix + "E1"] == ["contradicts"]
    # the preview lists what the revision would apply, and writes nothing
    assert result["refuted"] == [prefix + "E1"] and result["dry_run"] is True and "dry run" in result["note"]
    assert result["new_evidence"] is None and result["epoch"] is None
    assert await app.status() == status and app.journal.epoch() == epoch


async def test_noncritical_decay_on_real_stores(app, prefix):
    subject = f"U-{prefix}"
    await app.load(chain(prefix, subject))
    result = await app.revise(
        f"Part {subject} never passed inspection in Graz; it passed in Porto.",
        triple=f"part {subject}|passed inspection in|Porto",
    )
    assert result["refuted"] == [prefix + "E2"] and result["weakened"] == [prefix + "K2"]
    s = states(await app.status(), prefix)
    assert s["K2"]["state"] == "alive" and s["K2"]["confidence"] == pytest.approx(0.4)
    assert s["H1"]["state"] == "alive"  # H2 lost support but H1 is a supported rival
    assert s["H2"]["state"] == "superseded"


async def test_multiple_contradictions_and_diamond_on_real_stores(app, prefix):
    inv = investigation(
        prefix,
        evidence=[
            {"key": "E0", "claim": f"{prefix} base fact"},
            {"key": "E1", "claim": f"{prefix} derived one"},
            {"key": "E2", "claim": f"{prefix} derived two"},
            {"key": "E3", "claim": f"{prefix} other base"},
        ],
        conclusions=[
            {"key": "K", "statement": f"{prefix} diamond top"},
            {"key": "L", "statement": f"{prefix} needs E3"},
        ],
        edges=[
            {"type": "depends_on", "from": "E1", "to": "E0"},
            {"type": "depends_on", "from": "E2", "to": "E0"},
            {"type": "depends_on", "from": "K", "to": "E1"},
            {"type": "depends_on", "from": "K", "to": "E2"},
            {"type": "depends_on", "from": "L", "to": "E3"},
        ],
    )
    await app.load(inv)
    result = await app.revise(f"{prefix} audit voids E0", target=prefix + "E0")
    assert sorted(result["invalidated"]) == sorted(prefix + k for k in ("E1", "E2", "K"))
    assert sorted(result["forgotten"]) == sorted(prefix + k for k in ("E1", "E2", "K"))
    assert len((await app.explain(prefix + "K"))["events"]) == 3  # loaded, invalidated once, forgotten


async def test_cycle_on_real_stores(app, prefix):
    inv = investigation(
        prefix,
        evidence=[{"key": "E0", "claim": f"{prefix} root fact"}],
        conclusions=[{"key": "K1", "statement": f"{prefix} k1"}, {"key": "K2", "statement": f"{prefix} k2"}],
        edges=[
            {"type": "depends_on", "from": "K1", "to": "E0", "group": "a"},
            {"type": "depends_on", "from": "K1", "to": "K2", "group": "b"},
            {"type": "depends_on", "from": "K2", "to": "K1"},
        ],
    )
    await app.load(inv)
    result = await app.revise(f"{prefix} E0 is false", target=prefix + "E0")
    assert sorted(result["invalidated"]) == [prefix + "K1", prefix + "K2"]


async def test_partial_refutation_on_real_stores(app, prefix):
    inv = investigation(
        prefix,
        evidence=[{"key": "E_qa", "claim": f"{prefix} qa"}, {"key": "E_alt", "claim": f"{prefix} alt"}],
        conclusions=[{"key": "K", "statement": f"{prefix} k"}],
        edges=[
            {"type": "depends_on", "from": "K", "to": "E_qa", "group": "g1"},
            {"type": "depends_on", "from": "K", "to": "E_alt", "group": "g2"},
        ],
    )
    await app.load(inv)
    result = await app.revise(f"{prefix} qa was wrong", target=prefix + "E_qa")
    assert result["invalidated"] == [] and result["forgotten"] == []
    s = states(await app.status(), prefix)
    assert s["K"]["state"] == "alive" and s["E_qa"]["state"] == "refuted"


async def test_gate1_finds_near_paraphrase(app, prefix):
    from memory_core.judging.detect import gate1, gate1_threshold

    subject = f"T-{prefix}"
    await app.load(chain(prefix, subject))
    found = await gate1(
        app.store,
        f"The part {subject} was manufactured in Ulm.",
        gate1_threshold("fastembed-local", app.store.settings),
        5,
        set(),
    )
    assert prefix + "E1" in [c.key for c in found]


async def test_bad_revise_input_is_rejected_before_anything(app, prefix):
    epoch = app.journal.epoch()
    for kwargs, fragment in [
        ({"fact": "  "}, "empty"),
        ({"fact": "x" * 9000}, "limit"),
        ({"fact": "ok", "triple": "a|b"}, "subject|predicate|object"),
        ({"fact": "ok", "target": prefix + "NOPE"}, "no evidence with that key"),
        ({"fact": "ok", "asserted_at": "yesterday"}, "ISO date"),
        ({"fact": "bell\x07"}, "control character"),
    ]:
        with pytest.raises(InputError) as error:
            await app.revise(**kwargs)
        assert fragment in str(error.value)
    assert app.journal.epoch() == epoch


async def test_judge_threshold_rule():
    from memory_core.judging.detect import Candidate

    assert Candidate("E", "Q", "c", 0.1, "contradicts", 0.6).acts
    assert not Candidate("E", "Q", "c", 0.1, "contradicts", 0.59).acts
    assert not Candidate("E", "Q", "c", 0.1, "supports", 0.99).acts
    assert Candidate("E", "Q", "c", 0.1, "supersedes", 0.7).acts


@pytest.mark.slow
def test_revise_file_applies_lines_in_order(tmp_path):
    """A --file is one batch: each line sees the lines before it (line 3 repeats line 1:
    already recorded), one epoch for the batch, one result per line, and one undo
    reverts the whole batch."""
    import json as _json

    from harness import run_batch

    root = tmp_path / "r"
    inv = tmp_path / "inv.json"
    inv.write_text(chain("", "P1"))
    facts = tmp_path / "facts.jsonl"
    facts.write_text(
        "\n".join(
            _json.dumps(x)
            for x in [
                {
                    "fact": "The part P1 was made in Lyon.",
                    "triple": "part P1|was made in|Lyon",
                    "key": "N1",
                    "source": "audit",
                },
                {
                    "fact": "Part P1 passed inspection in Porto.",
                    "triple": "part P1|passed inspection in|Porto",
                    "key": "N2",
                },
                {"fact": "The part P1 was made in Lyon.", "triple": "part P1|was made in|Lyon", "key": "N1"},
            ]
        )
        + "\n"
    )
    # the four commands in one CLI process (tests/support/cli_batch.py: each step is
    # ``python main.py ...``'s own entry point, opening the root afresh)
    steps = [
        {"name": "load", "op": "cli", "argv": ["load", str(inv)]},
        {"name": "revise", "op": "cli", "argv": ["revise", "--file", str(facts), "--json"]},
        {"name": "undo", "op": "cli", "argv": ["undo", "--json"]},
        {"name": "status", "op": "cli", "argv": ["status", "--json"]},
    ]
    r = {x["name"]: x for x in run_batch(root, steps, tmp_path / "batch")}
    for name in ("load", "revise", "undo", "status"):
        assert r[name]["code"] == 0, (name, r[name]["stderr"][-2000:])
    lines = [_json.loads(x) for x in r["revise"]["stdout"].splitlines()]
    assert len(lines) == 3
    assert (
        lines[0]["refuted"] == ["E1"]
        and sorted(lines[0]["invalidated"]) == ["K1", "K2"]
        and lines[0]["epoch"] == 2
    )
    assert lines[1]["refuted"] == ["E2"] and lines[1]["epoch"] == 2
    assert lines[2].get("already_applied") and lines[2]["epoch"] is None
    undo = _json.loads(r["undo"]["stdout"])
    assert undo["undone"] == 2 and sorted(undo["removed"]) == ["N1", "N2"]
    states = {n["key"]: n["state"] for n in _json.loads(r["status"]["stdout"])["nodes"]}
    assert states["E1"] == "alive" and states["E2"] == "alive" and "N1" not in states


async def test_structured_lookup_finds_evidence_gate1_missed(app, prefix):
    subject = f"S-{prefix}"
    inv = json.loads(chain(prefix, subject))
    # gate 1 keeps a bounded top k: claims worded like the fact (about other shipments, so the
    # structured judge finds them unrelated) fill it, whatever else the shared root holds
    inv["evidence"] += [
        {
            "key": f"{prefix}D{i}",
            "claim": f"Customs papers list Lyon as the origin of shipment {i}.",
            "subject": f"shipment {i} {prefix}",
            "predicate": "has origin",
            "object": "Lyon",
        }
        for i in range(10)
    ]
    await app.load(json.dumps(inv))
    # worded far from the stored claim: gate 1 alone would not pass it
    fact = "Customs papers list Lyon as the origin."
    from memory_core.judging.detect import gate1, gate1_threshold

    near = await gate1(app.store, fact, gate1_threshold("fastembed-local", app.store.settings), 8, set())
    assert prefix + "E1" not in [c.key for c in near]
    result = await app.revise(fact, triple=f"part {subject}|was made in|Lyon")
    cand = next(c for c in result["candidates"] if c["key"] == prefix + "E1")
    assert cand["distance"] is None and cand["relation"] == "contradicts"
    assert result["refuted"] == [prefix + "E1"]


async def test_decided_contradiction_lands_despite_undecidable_neighbours(app, prefix):
    subject = f"R-{prefix}"
    inv = investigation(
        prefix,
        evidence=[
            {
                "key": "E1",
                "claim": f"The part {subject} was made in Ulm.",
                "subject": f"part {subject}",
                "predicate": "was made in",
                "object": "Ulm",
            },
            {"key": "E3", "claim": f"The part {subject} was made in Ulm by hand."},
        ],  # no triple
        conclusions=[{"key": "K1", "statement": f"{subject} is an Ulm part"}],
        edges=[{"type": "depends_on", "from": "K1", "to": "E1"}],
    )
    await app.load(inv)
    # named into its question: the note lists every candidate no judge decided, and another test's
    # such claim near the fact would be listed too
    result = await app.revise(
        f"The part {subject} was made in Lyon.",
        triple=f"part {subject}|was made in|Lyon",
        inquiry=f"{prefix}Q",
    )
    assert prefix + "E3" in [c["key"] for c in result["candidates"]]
    assert result["refuted"] == [prefix + "E1"] and result["invalidated"] == [prefix + "K1"]
    # the note says what happened: applied, with E3 left as it is (no "decide yourself" on an applied revision)
    assert f"not judged: {prefix}E3 (no judge could decide; left as they are)" in result["note"]
    assert "decide yourself" not in result["note"]


async def test_early_detection_is_taken_when_nothing_came_between(app, prefix):
    """FALSIFY's own pipeline run detects before cognee's runner reaches its first task (the
    runner's start-up overlaps gate 1 and the judge); with nothing in between, the task takes
    that result instead of detecting again."""
    from memory_core.tasks.detect_contradictions import EARLY

    subject = f"U-{prefix}"
    await app.load(chain(prefix, subject))
    used, redone = EARLY["used"], EARLY["redone"]
    result = await app.revise(
        f"The part {subject} was made in Lyon.", triple=f"part {subject}|was made in|Lyon"
    )
    assert result["refuted"] == [prefix + "E1"]
    assert (EARLY["used"], EARLY["redone"]) == (used + 1, redone)
    assert result["timings"]["detect_contradictions"] > 0


async def test_early_detection_is_redone_when_another_revision_came_between(app, prefix):
    """If another revision holds the lock between the early detection and the task, the stores
    may have changed: the task detects again, so the fact sees what was revised in between."""
    import asyncio

    from memory_core.core.requests import requests_from
    from memory_core.judging.detect import DEFAULT_LIMIT
    from memory_core.ops.revise import result_of
    from memory_core.tasks import RevisionBatch, RevisionOptions, run_revision, threshold
    from memory_core.tasks.detect_contradictions import EARLY, start_detection

    subject = f"V-{prefix}"
    await app.load(chain(prefix, subject))
    late = requests_from(
        [
            {
                "fact": f"The part {subject} was made in Graz.",
                "triple": f"part {subject}|was made in|Graz",
                "key": prefix + "N_graz",
            }
        ]
    )
    batch = RevisionBatch(
        app.stores, late, RevisionOptions(threshold=threshold(app.stores.settings), limit=DEFAULT_LIMIT)
    )
    await start_detection(batch)
    await asyncio.wait([batch.detecting])  # detected while only E1 said where the part was made
    between = await app.revise(
        f"The part {subject} was made in Lyon.",
        triple=f"part {subject}|was made in|Lyon",
        key=prefix + "N_lyon",
    )
    assert between["refuted"] == [prefix + "E1"]
    redone = EARLY["redone"]
    await run_revision(app.stores, batch)
    assert EARLY["redone"] == redone + 1
    result = result_of(batch.jobs[0])
    assert result["refuted"] == [
        prefix + "N_lyon"
    ]  # not the stale view, in which only E1 (now dead) contradicted it
    state = {n["key"]: n["state"] for n in (await app.status())["nodes"]}
    assert state[prefix + "N_lyon"] == "refuted" and state[prefix + "N_graz"] == "alive"


async def test_a_key_that_names_a_forgotten_node_or_no_evidence_is_refused_saying_what_it_names(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(seed_with_prefix(prefix))
    assert p("K") in (await app.revise(FACT + f" <{prefix}>", target=p("E_qa")))["forgotten"]
    epoch = app.journal.epoch()
    for call, said in (
        (app.revise("x", target=p("K")), f"target={p('K')!r} names a forgotten conclusion (explain {p('K')}"),
        (app.revise("x", target=p("Q")), f"target={p('Q')!r} is a question, not evidence"),
        (app.resolve(p("K"), p("E_email")), f"loser {p('K')!r} names a forgotten conclusion"),
        (app.resolve(p("A"), p("E_email")), f"loser {p('A')!r} is a hypothesis, not evidence"),
    ):
        with pytest.raises(InputError) as refused:
            await call
        assert said in str(refused.value), str(refused.value)
    assert app.journal.epoch() == epoch  # nothing written


async def test_a_fact_named_into_its_question_is_compared_and_recorded_there_only(app, prefix):
    """``inquiry``: the fact belongs to that question: only its evidence is a candidate (a near
    claim of another question is not asked about) and the fact is recorded there; an unknown
    question, a contradiction with another question's evidence, or a recorded fact named into
    another question are refused, nothing written."""
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    for q, about in (("QM", "Maria"), ("QA", "Acme")):
        await app.load(
            json.dumps({"question": {"key": p(q), "text": f"What do we know about {about} ({prefix})?"}})
        )
    lisbon = f"Maria{prefix} lives in Lisbon."
    first = await app.revise(lisbon, triple=f"Maria{prefix}|lives in|Lisbon", inquiry=p("QM"))
    assert first["new_evidence"]
    near = f"Maria{prefix} lives in Lisbon now."
    asked = await app.revise(near)  # every question's evidence: the near claim is the caller's to decide
    assert asked["new_evidence"] is None and first["new_evidence"] in asked["to_decide"]
    placed = await app.revise(near, inquiry=p("qa"))  # matched as keys are
    assert placed["new_evidence"] and placed["candidates"] == [] and "to_decide" not in placed
    status = {n["key"]: n for n in (await app.status())["nodes"]}
    assert status[placed["new_evidence"]]["question"] == p("QA")
    epoch = app.journal.epoch()
    for call, field, said in (
        (
            app.revise("x y z", inquiry=p("NOPE")),
            "inquiry",
            f"inquiry={p('NOPE')!r}: no question with that key",
        ),
        (
            app.revise(f"Maria{prefix} moved.", target=first["new_evidence"], inquiry=p("QA")),
            "inquiry",
            f"evidence of question {p('QM')!r}",
        ),
        (
            app.revise(near, inquiry=p("QM")),
            "inquiry",
            f"already recorded as {placed['new_evidence']} in question",
        ),
    ):
        with pytest.raises(InputError) as refused:
            await call
        assert said in str(refused.value) and refused.value.field == field, str(refused.value)
    assert app.journal.epoch() == epoch  # nothing written


async def test_a_fact_named_into_its_question_is_compared_with_its_evidence_however_near_others_lie(
    app, prefix
):
    """``inquiry`` ranks that question's evidence among itself: other questions' claims lying
    nearer to the fact (more than gate 1's top k of them) do not push its own out."""
    tag = prefix.strip("_")
    fact = f"Forensic audit: the {tag} March QA report was back-dated."
    for i in range(12):  # other questions holding restatements of the fact, nearer than its own claim
        await app.load(
            investigation(
                f"{prefix}o{i}_",
                evidence=[
                    {"key": "F", "claim": f"Forensic audit: the {tag} March QA report was back-dated ({i})."}
                ],
            )
        )
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "E_qa", "claim": f"The {tag} QA report documented the defect on 15 March 2021."}
            ],
        )
    )
    unscoped = await app.revise(fact, dry_run=True)
    assert f"{prefix}E_qa" not in [c["key"] for c in unscoped["candidates"]]  # the others fill the top k
    scoped = await app.revise(fact, dry_run=True, inquiry=f"{prefix}Q")
    assert [c["key"] for c in scoped["candidates"]] == [f"{prefix}E_qa"], scoped["candidates"]
    assert scoped["to_decide"] == [f"{prefix}E_qa"]
    many = await app.revise_many([{"fact": fact, "inquiry": f"{prefix}Q"}], dry_run=True)
    assert [c["key"] for c in many[0]["candidates"]] == [f"{prefix}E_qa"]
