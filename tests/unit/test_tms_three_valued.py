"""Reconciliation policies and the three-valued labelling (pure core, no I/O):
the policies' decisions, disputes, resolve and reinstatement, and property tests
over random graphs against an independent model of the labelling."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings, strategies as st

from memory_core.core.beliefs import ALIVE, INVALIDATED, REFUTED, SUPERSEDED, BeliefView, Edge
from memory_core.core.errors import InputError
from memory_core.core.policy import EVIDENCE, FACT, Claim, Decision, check_policy, check_trust, decide
from memory_core.core.revision import plan_relabel, plan_resolve, plan_revision
from memory_core.core.tms import Memory, labels, three_valued_violations
from memory_core.core.vocabulary import DISPUTED
from belief_views import dep, fact, view_of

TODAY = "2026-12-01"


# ---- policies -----------------------------------------------------------------------


def test_latest_wins_by_date_undated_and_tie():
    e = Claim("E", asserted_at="2021-03-01")
    assert decide("latest_wins", e, Claim("F", asserted_at="2019-01-01"), TODAY).winner == EVIDENCE
    assert decide("latest_wins", e, Claim("F", asserted_at="2022-01-01"), TODAY).winner == FACT
    tie = decide("latest_wins", e, Claim("F", asserted_at="2021-03-01"), TODAY)
    assert tie.winner == FACT and "=" in tie.reason
    # the new fact without a date is dated today
    assert decide("latest_wins", e, Claim("F"), TODAY).winner == FACT
    assert decide("latest_wins", Claim("E", asserted_at="2030-01-01"), Claim("F"), TODAY).winner == EVIDENCE
    # undated evidence is older than any dated fact
    d = decide("latest_wins", Claim("E"), Claim("F", asserted_at="1900-01-01"), TODAY)
    assert d.winner == FACT and "undated" in d.reason
    # date-times and dates compare on one time line
    assert (
        decide(
            "latest_wins",
            Claim("E", asserted_at="2021-03-01T10:00:00Z"),
            Claim("F", asserted_at="2021-03-01"),
            TODAY,
        ).winner
        == EVIDENCE
    )


def test_trust_ranked_and_fallback():
    d = decide(
        "trust_ranked",
        Claim("E_qa", trust=0.9, asserted_at="2019-01-01"),
        Claim("F", trust=0.2, asserted_at="2024-01-01"),
        TODAY,
    )
    assert d.winner == EVIDENCE and d.reason == "E_qa kept: trust 0.9 > 0.2 (trust_ranked)"
    assert d.winner_key == "E_qa" and d.loser_key == "F"
    d = decide("trust_ranked", Claim("E", trust=0.3), Claim("F", trust=0.8), TODAY)
    assert d.winner == FACT and d.reason == "F wins: trust 0.8 > 0.3 (trust_ranked)"
    # equal trust: latest_wins
    d = decide(
        "trust_ranked",
        Claim("E", trust=0.5, asserted_at="2025-01-01"),
        Claim("F", trust=0.5, asserted_at="2020-01-01"),
        TODAY,
    )
    assert d.winner == EVIDENCE and "latest_wins" in d.reason


def test_preserve_both_is_a_dispute():
    d = decide("preserve_both", Claim("E", trust=0.9), Claim("F", trust=0.1), TODAY)
    assert d.winner is None and d.dispute and d.winner_key is None


def test_bad_policy_and_trust_values():
    for bad in ("newest", "", None, 3):
        with pytest.raises(InputError):
            check_policy(bad)
    for bad in (-0.1, 1.5, float("nan"), "0.5", True, None):
        with pytest.raises(InputError):
            check_trust(bad)
    assert check_trust(1) == 1.0 and check_trust(0) == 0.0


# ---- the worked example -------------------------------------------------------------


def seed_view():
    nodes = {
        "Q": "question",
        "A": "hypothesis",
        "B": "hypothesis",
        "C": "hypothesis",
        "E_qa": "evidence",
        "E_email": "evidence",
        "E_alt": "evidence",
        "K": "conclusion",
        "K2": "conclusion",
    }
    return view_of(
        nodes,
        [
            dep("K", "E_qa"),
            dep("K2", "E_qa", group="a"),
            dep("K2", "E_alt", group="b"),
            Edge("supports", "E_qa", "A", weight=0.8),
            Edge("supports", "E_email", "B", weight=0.7),
        ],
    )


def decision(e, f, winner):
    return Decision(e, f, winner, "test", f"{winner or 'dispute'} (test)")


def states(v):
    return {k: n.state for k, n in v.nodes.items()}


def test_evidence_wins_records_the_fact_refuted_and_changes_nothing_else():
    v = seed_view()
    before = states(v)
    plan = plan_revision(
        v, [("E_qa", "contradicts", 0.9)], 1, "tabloid", fact(), {"E_qa": decision("E_qa", "F", EVIDENCE)}
    )
    assert v.nodes["F"].state == REFUTED and plan.refuted == ["F"]
    assert [c.rule for c in plan.changes] == ["outranked"]
    assert {k: s for k, s in states(v).items() if k != "F"} == before
    assert [(e.kind, e.src, e.dst, e.confidence) for e in plan.new_edges] == [
        ("supersedes", "E_qa", "F", 0.9)
    ]
    assert plan.forgotten == [] and plan.decisions[0]["winner"] == "E_qa"


def test_dispute_makes_dependents_disputed_and_touches_no_hypothesis():
    v = seed_view()
    plan = plan_revision(
        v, [("E_qa", "contradicts", 0.9)], 1, None, fact(), {"E_qa": decision("E_qa", "F", None)}
    )
    assert v.nodes["E_qa"].state == DISPUTED and v.nodes["F"].state == DISPUTED
    assert v.nodes["K"].state == DISPUTED  # its only support runs through disputed evidence
    assert v.nodes["K2"].alive  # an alternative alive justification
    assert v.nodes["A"].alive and v.nodes["A"].weight == 0.5 and v.nodes["B"].weight == 0.5
    assert plan.forgotten == [] and plan.promoted == [] and sorted(plan.disputed) == ["E_qa", "F", "K"]
    assert v.support("A") == 0.0  # a disputed supporter counts 0
    assert three_valued_violations(v) == []


@pytest.mark.parametrize("winner", ["F", "E_qa"])
def test_resolve_equals_winning_outright(winner):
    disputed = seed_view()
    plan_revision(
        disputed, [("E_qa", "contradicts", 0.9)], 1, None, fact(), {"E_qa": decision("E_qa", "F", None)}
    )
    loser = "E_qa" if winner == "F" else "F"
    plan = plan_resolve(disputed, loser, winner, 2)
    outright = seed_view()
    plan_revision(
        outright,
        [("E_qa", "contradicts", 0.9)],
        1,
        None,
        fact(),
        {"E_qa": decision("E_qa", "F", FACT if winner == "F" else EVIDENCE)},
    )
    assert states(disputed) == states(outright)
    # each change names its cause: the winner the loser (its dispute edge is gone), what comes
    # back only what changed here (K2 held through E_alt all along: not its cause)
    causes = {c.key: c.cause for c in plan.changes}
    assert causes[winner] == [loser] and causes[loser] == [winner]
    if winner == "E_qa":
        assert causes["K"] == ["E_qa"]
    assert [(e.kind, e.src, e.dst) for e in plan.removed_edges] == [("disputes", "F", "E_qa")]
    assert [(e.kind, e.src, e.dst, e.confidence) for e in plan.new_edges] == [
        ("supersedes", winner, loser, 0.9)
    ]
    if winner == "F":
        assert disputed.nodes["K"].state == INVALIDATED and plan.forgotten == ["K"]
        assert plan.promoted == ["B"] and disputed.nodes["A"].state == SUPERSEDED
    else:
        assert disputed.nodes["K"].alive and plan.forgotten == [] and plan.refuted == ["F"]


def test_resolve_refuses_what_it_cannot_decide():
    v = seed_view()
    plan_revision(v, [("E_qa", "contradicts", 0.9)], 1, None, fact(), {"E_qa": decision("E_qa", "F", None)})
    before = {k: (n.state, n.weight) for k, n in v.nodes.items()}, list(v.edges)
    # E_qa is disputed with F, not with E_email; a dead side or two questions are refused too
    with pytest.raises(InputError, match="disputed and not in a dispute with E_email"):
        plan_resolve(v, "E_qa", "E_email", 2)
    with pytest.raises(InputError, match="no such node"):
        plan_resolve(v, "E_qa", "nope", 2)
    with pytest.raises(InputError, match="not evidence"):
        plan_resolve(v, "E_qa", "K", 2)
    with pytest.raises(InputError, match="two different nodes"):
        plan_resolve(v, "E_alt", "E_alt", 2)
    v.nodes["E_email"].question = "Q2"
    with pytest.raises(InputError, match="within one question"):
        plan_resolve(v, "E_alt", "E_email", 2)
    assert ({k: (n.state, n.weight) for k, n in v.nodes.items()}, list(v.edges)) == before  # nothing changed


def test_resolve_between_two_alive_facts_refutes_the_loser_as_a_pinned_revision_would():
    """The caller decides that E_email contradicts E_qa: the same labels as a new fact pinned
    on E_qa (K dies and is forgotten, A loses its support, B is promoted), with the cause said."""
    resolved, pinned = seed_view(), seed_view()
    plan = plan_resolve(resolved, "E_qa", "E_email", 1)
    plan_revision(pinned, [("E_qa", "contradicts", 1.0)], 1, None, fact())
    assert plan.refuted == ["E_qa"] and plan.forgotten == ["K"] and plan.promoted == ["B"]
    assert states(resolved) == {k: s for k, s in states(pinned).items() if k != "F"}
    change = next(c for c in plan.changes if c.key == "E_qa")
    assert change.rule == "contradicted" and change.cause == ["E_email"]
    assert change.detail == "the caller's decision: resolve"
    assert Edge("supersedes", "E_email", "E_qa", confidence=1.0) in resolved.out_edges(
        "E_email", "supersedes"
    )
    with pytest.raises(InputError, match="E_qa is refuted and not in a dispute"):
        plan_resolve(resolved, "E_qa", "E_email", 2)


def test_reinstatement_brings_back_forgotten_dependents_and_hypotheses():
    v = seed_view()
    memory = Memory()
    first = plan_revision(v, [("E_qa", "contradicts", 0.9)], 1, None, fact("F1"))
    memory.absorb(first)
    after_first = states(v)
    assert first.forgotten == ["K"] and first.promoted == ["B"] and v.nodes["B"].weight == 0.75
    ghosts = set(first.forgotten)
    second = plan_revision(v, [("F1", "contradicts", 0.8)], 2, None, fact("F2"), memory=memory, ghosts=ghosts)
    memory.absorb(second)
    assert v.nodes["F1"].state == REFUTED and v.nodes["E_qa"].alive and v.nodes["K"].alive
    assert second.restored == ["K"] and v.nodes["A"].alive and v.nodes["A"].weight == 0.5
    assert v.nodes["B"].weight == 0.5 and second.demoted == [
        "B"
    ]  # promoted only because A had lost its support
    assert v.nodes["E_qa"].weight == 0.5  # the weight it had before it died
    e = next(c for c in second.changes if c.key == "E_qa")
    assert e.rule == "reinstated" and e.cause == ["F1"]
    assert second.forgotten == []  # F1 stays: F2 supersedes it
    # and refuting the refuter's refuter returns exactly the earlier labels
    third = plan_revision(v, [("F2", "contradicts", 0.8)], 3, None, fact("F3"), memory=memory, ghosts=set())
    assert {k: s for k, s in states(v).items() if k in after_first} == after_first
    assert third.forgotten == ["K"]


def test_supersedes_verdict_passes_on_what_the_old_value_superseded():
    # E0 (2019) superseded by E1 (2020); F (2021) supersedes E1: refuting F later must not bring E0 back
    v = view_of({"E0": "evidence", "E1": "evidence"}, [Edge("supersedes", "E1", "E0")], E0=SUPERSEDED)
    plan = plan_revision(v, [("E1", "supersedes", 0.9)], 1, None, fact("F"))
    assert sorted((e.src, e.dst) for e in plan.new_edges) == [("F", "E0"), ("F", "E1")]
    plan_revision(v, [("F", "contradicts", 0.9)], 2, None, fact("G"))
    assert v.nodes["E1"].alive and v.nodes["E0"].state == SUPERSEDED


# ---- an independent model of the three-valued labelling -----------------------------


def model_labels(v: BeliefView) -> dict[str, str]:
    """The issue's rule, computed another way: premise statuses by Kleene
    iteration over the attack relation (supersedes and disputes; attackers are
    premises here), then two least fixpoints over justifications: alive from the
    alive premises, not-dead from the alive and disputed ones."""
    keys = [k for k, n in v.nodes.items() if n.kind in ("evidence", "conclusion")]
    premises = [k for k in keys if not v.justifications(k)]
    att = {k: set() for k in keys}
    for e in v.edges:
        if e.kind == "supersedes":
            att[e.dst].add(e.src)
        if e.kind == "disputes":
            att[e.dst].add(e.src)
            att[e.src].add(e.dst)
    status = {}
    for p in premises:
        if not att[p]:
            status[p] = "alive" if v.nodes[p].state in (ALIVE, DISPUTED) else "dead"
    changed = True
    while changed:
        changed = False
        for p in premises:
            if p in status:
                continue
            if any(status.get(a) == "alive" for a in att[p]):
                status[p], changed = "dead", True
            elif all(status.get(a) == "dead" for a in att[p]):
                status[p], changed = "alive", True
    for p in premises:
        status.setdefault(p, "disputed")

    def lfp(base: set[str]) -> set[str]:
        got = set(base)
        grew = True
        while grew:
            grew = False
            for k in keys:
                if (
                    k not in got
                    and k not in premises
                    and any(all(a in got for a in ants) for _, ants in v.justifications(k))
                ):
                    got.add(k)
                    grew = True
        return got

    alive = lfp({p for p in premises if status[p] == "alive"})
    not_dead = lfp({p for p in premises if status[p] != "dead"})
    return {k: "alive" if k in alive else "disputed" if k in not_dead else "dead" for k in keys}


def label(state: str) -> str:
    return "alive" if state == ALIVE else "disputed" if state == DISPUTED else "dead"


@st.composite
def scenarios(draw):
    n_e = draw(st.integers(2, 5))
    n_c = draw(st.integers(1, 7))
    ev = [f"E{i}" for i in range(n_e)]
    co = [f"K{i}" for i in range(n_c)]
    nodes = {
        **{e: "evidence" for e in ev},
        **{c: "conclusion" for c in co},
        "H1": "hypothesis",
        "H2": "hypothesis",
    }
    edges = []
    for c in co:
        for t in draw(st.lists(st.sampled_from(ev + co), min_size=0, max_size=3, unique=True)):
            if t != c:
                edges.append(
                    dep(
                        c,
                        t,
                        critical=draw(st.integers(0, 5)) > 0,
                        group=draw(st.sampled_from([None, "a", "b"])),
                    )
                )
    for e in draw(st.lists(st.sampled_from(ev), max_size=3, unique=True)):
        edges.append(Edge("supports", e, draw(st.sampled_from(["H1", "H2"])), weight=0.6))
    # operations: (index of the contradicted premise among evidence and earlier facts, decision)
    ops = draw(
        st.lists(
            st.tuples(st.integers(0, 20), st.sampled_from([FACT, EVIDENCE, None])), min_size=1, max_size=4
        )
    )
    return nodes, edges, ops


def settled(nodes, edges) -> BeliefView:
    """A consistent start; nodes dead from the start count as already forgotten (ghosts)."""
    v = view_of(nodes, edges)
    for k, lab in model_labels(v).items():
        if lab == "dead":
            v.nodes[k].state = INVALIDATED
    return v


def dead_from_start(v: BeliefView) -> set[str]:
    return {k for k, n in v.nodes.items() if n.state == INVALIDATED}


def run_ops(v: BeliefView, ops, memory: Memory, ghosts: set[str]):
    """Apply the operations one by one, yielding (plan, decision) after each."""
    for i, (pick, winner) in enumerate(ops, 1):
        premises = sorted(k for k, n in v.nodes.items() if n.kind == "evidence" and not v.justifications(k))
        target = premises[pick % len(premises)]
        new = fact(f"F{i}")
        plan = plan_revision(
            v,
            [(target, "contradicts", 0.9)],
            i,
            None,
            new,
            {target: decision(target, new.key, winner)},
            memory=memory,
            ghosts=ghosts,
        )
        memory.absorb(plan)
        ghosts |= set(plan.forgotten)
        ghosts -= set(plan.restored)
        yield plan, winner


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_labels_match_the_independent_model(s):
    nodes, edges, ops = s
    v = settled(nodes, edges)
    memory, ghosts = Memory(), dead_from_start(v)
    for plan, winner in run_ops(v, ops, memory, ghosts):
        expected = model_labels(v)
        assert {k: label(v.nodes[k].state) for k in expected} == expected
        assert labels(v) == expected  # the implementation over the whole view agrees too
        # each node relabelled at most once per revision (a weight or confidence may follow:
        # a hypothesis back for want of a supported rival is weakened, a node back decays)
        keys = [c.key for c in plan.changes if c.before["state"] != c.after["state"]]
        assert len(keys) == len(set(keys))
        for k in plan.forgotten:
            assert v.nodes[k].state in (REFUTED, INVALIDATED)
        # a disputed node is never forgotten, and a dispute alone forgets nothing
        assert not any(v.nodes[k].state == DISPUTED for k in plan.forgotten)
        if winner is None:
            assert plan.forgotten == [] and plan.promoted == []
            assert not [c for c in plan.changes if c.after["state"] == SUPERSEDED]


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.booleans())
def test_resolving_a_dispute_equals_winning_outright(s, fact_wins):
    nodes, edges, ops = s
    base = settled(nodes, edges)
    ghosts = dead_from_start(base)
    list(run_ops(base, ops[:-1], Memory(), ghosts))
    pick = ops[-1][0]
    premises = sorted(k for k, n in base.nodes.items() if n.kind == "evidence" and not base.justifications(k))
    target = premises[pick % len(premises)]
    if base.nodes[target].state != ALIVE:
        return
    n = len(ops)
    disputed, outright = copy.deepcopy(base), copy.deepcopy(base)
    plan = plan_revision(
        disputed,
        [(target, "contradicts", 0.9)],
        n,
        None,
        fact(f"F{n}"),
        {target: decision(target, f"F{n}", None)},
        ghosts=ghosts,
    )
    assert plan.forgotten == []
    if disputed.nodes[target].state != DISPUTED:
        return
    winner, loser = (f"F{n}", target) if fact_wins else (target, f"F{n}")
    resolved = plan_resolve(disputed, loser, winner, n + 1, ghosts=ghosts)
    direct = plan_revision(
        outright,
        [(target, "contradicts", 0.9)],
        n,
        None,
        fact(f"F{n}"),
        {target: decision(target, f"F{n}", FACT if fact_wins else EVIDENCE)},
        ghosts=ghosts,
    )
    assert sorted(resolved.forgotten) == sorted(direct.forgotten)
    assert states(disputed) == states(outright)
    assert {
        k: label(v.state) for k, v in disputed.nodes.items() if k in model_labels(disputed)
    } == model_labels(disputed)
    for k in resolved.forgotten:
        assert disputed.nodes[k].state in (REFUTED, INVALIDATED)


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_reinstatement_then_re_refutation_returns_the_earlier_labels(s):
    nodes, edges, ops = s
    v = settled(nodes, edges)
    memory, ghosts = Memory(), dead_from_start(v)
    list(run_ops(v, ops[:-1], memory, ghosts))
    premises = sorted(k for k, n in v.nodes.items() if n.kind == "evidence" and not v.justifications(k))
    target = premises[ops[-1][0] % len(premises)]
    if v.nodes[target].state != ALIVE:
        return
    forgotten_before = set(ghosts)
    first = plan_revision(
        v, [(target, "contradicts", 0.9)], 10, None, fact("R1"), memory=memory, ghosts=ghosts
    )
    memory.absorb(first)
    ghosts |= set(first.forgotten)
    earlier = states(v)
    second = plan_revision(
        v, [("R1", "contradicts", 0.9)], 11, None, fact("R2"), memory=memory, ghosts=ghosts
    )
    memory.absorb(second)
    assert v.nodes[target].alive  # nothing else supersedes it: reinstated
    assert set(second.restored) <= ghosts
    assert set(second.restored) >= set(first.forgotten) & {k for k, n in v.nodes.items() if n.alive}
    ghosts = (ghosts | set(second.forgotten)) - set(second.restored)
    assert model_labels(v) == {k: label(v.nodes[k].state) for k in model_labels(v)}
    # what the first refutation did not forget and the reinstatement did not touch stays as it was
    third = plan_revision(v, [("R2", "contradicts", 0.9)], 12, None, fact("R3"), memory=memory, ghosts=ghosts)
    assert {k: s for k, s in states(v).items() if k in earlier} == earlier
    assert set(third.forgotten) <= set(first.forgotten) | forgotten_before | set(second.restored)


# ---- format and requests ------------------------------------------------------------


def test_investigation_sources_and_policy():
    import json

    from memory_core.core.investigation import parse

    base = {
        "question": {"key": "Q", "text": "Who?"},
        "evidence": [{"key": "E", "claim": "c", "source_id": "lab"}],
    }
    inv = parse(
        json.dumps(
            dict(
                base,
                sources=[{"id": "lab", "trust": 0.9, "name": "QA lab"}, {"id": "blog", "trust": 0}],
                policy="trust_ranked",
            )
        )
    )
    assert inv.policy == "trust_ranked"
    assert inv.sources == [{"id": "lab", "trust": 0.9, "name": "QA lab"}, {"id": "blog", "trust": 0.0}]
    assert parse(json.dumps(base)).policy is None and parse(json.dumps(base)).sources == []
    bad = [
        ({"policy": "newest"}, "policy"),
        ({"sources": [{"id": "x", "trust": 2}]}, "trust"),
        ({"sources": [{"id": "x"}]}, "missing 'trust'"),
        ({"sources": [{"id": "x", "trust": 0.5, "url": 1}]}, "unknown"),
        ({"sources": [{"id": "x", "trust": 0.5}, {"id": "x", "trust": 0.2}]}, "duplicate"),
        ({"sources": {"x": 1}}, "must be a list"),
    ]
    for extra, message in bad:
        with pytest.raises(InputError, match=message):
            parse(json.dumps(dict(base, **extra)))


def test_revision_requests_trust_and_policy():
    from memory_core.core.requests import fact_lines, revision_request

    r = revision_request("f", source="blog", trust=0.2, policy="trust_ranked")
    assert (r.trust, r.policy) == (0.2, "trust_ranked")
    with pytest.raises(InputError, match="--trust needs --source"):
        revision_request("f", trust=0.2)
    with pytest.raises(InputError, match="--trust"):
        revision_request("f", source="s", trust=1.2)
    with pytest.raises(InputError, match="--policy"):
        revision_request("f", policy="coin_toss")
    lines = fact_lines(
        '{"fact": "a", "source": "s", "trust": 0.3, "policy": "preserve_both"}\n', "facts.jsonl"
    )
    assert (lines[0].trust, lines[0].policy) == (0.3, "preserve_both")
    with pytest.raises(InputError, match="facts.jsonl line 2: --policy"):
        fact_lines('{"fact": "a"}\n{"fact": "b", "policy": "x"}\n', "facts.jsonl")


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.data())
def test_relabelling_scrambled_states_restores_the_independent_models_labels(s, data):
    """``check --repair``'s pure step: after revisions, states changed behind FALSIFY's back
    (conclusions and attacked premises, whose labels the graph decides) are put back by
    :func:`plan_relabel` seeded with the nodes the three-valued check names: every label is
    the independent model's again, and each change is recorded once with a cause."""
    nodes, edges, ops = s
    v = settled(nodes, edges)
    memory, ghosts = Memory(), dead_from_start(v)
    for _ in run_ops(v, ops, memory, ghosts):
        pass
    expected = model_labels(v)
    decided = sorted(
        k
        for k in expected
        if k not in ghosts
        and (
            v.justifications(k)
            or any(
                e.dst == k or (e.kind == "disputes" and e.src == k)
                for e in v.edges
                if e.kind in ("supersedes", "disputes")
            )
        )
    )
    if not decided:
        return
    scrambled = data.draw(st.lists(st.sampled_from(decided), min_size=1, max_size=4, unique=True))
    for k in scrambled:
        v.nodes[k].state = data.draw(
            st.sampled_from([ALIVE, DISPUTED, INVALIDATED if v.justifications(k) else REFUTED])
        )
    wrong = [k for k, _, _ in three_valued_violations(v)]
    assert set(wrong) <= set(scrambled)
    plan = plan_relabel(v, wrong, 99, memory)
    assert {k: label(v.nodes[k].state) for k in expected} == expected
    assert three_valued_violations(v) == []
    # one state change per node (a confidence decay through a non-critical edge is its own change)
    keys = [
        c.key
        for c in plan.changes
        if c.rule not in ("demoted", "rebalanced", "promoted", "noncritical_decay")
    ]
    assert sorted(keys) == sorted(set(keys)) and set(wrong) <= set(keys)
    assert all(c.cause or c.rule == "repair" for c in plan.changes if c.key in wrong)
