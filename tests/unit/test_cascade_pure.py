"""The pure belief logic (no I/O): every case of contract §4.1/§4.3 and property
tests over random graphs against an independent well-founded model (bench.reference,
which builds justifications from the raw edges itself; tests/unit/test_property_pure.py
compares whole revision sequences with it)."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from memory_core.core.beliefs import INVALIDATED, REFUTED, SUPERSEDED, BeliefView, Edge
from memory_core.core.cascade import DECAY
from memory_core.core.forget import orphans
from memory_core.core.revision import plan_revision, plan_settle
from belief_views import dep, fact, view_of


def seed_view():
    nodes = {
        "Q": "question",
        "A": "hypothesis",
        "B": "hypothesis",
        "C": "hypothesis",
        "E_qa": "evidence",
        "E_email": "evidence",
        "K": "conclusion",
    }
    return view_of(
        nodes,
        [
            dep("K", "E_qa"),
            Edge("supports", "E_qa", "A", weight=0.8),
            Edge("supports", "E_email", "B", weight=0.7),
        ],
    )


def test_direct_refutation_cascade_promotion_forget():
    v = seed_view()
    plan = plan_revision(v, [("E_qa", "contradicts", 0.9)], 1, "audit", fact())
    assert v.nodes["E_qa"].state == REFUTED and v.nodes["E_qa"].weight == 0.0
    assert v.nodes["K"].state == INVALIDATED
    assert v.nodes["A"].state == SUPERSEDED
    assert v.nodes["B"].alive and v.nodes["B"].weight > max(v.nodes[h].weight for h in "AC")
    assert plan.forgotten == ["K"]  # E_qa stays: the new fact supersedes it (provenance)
    assert plan.refuted == ["E_qa"] and plan.invalidated == ["K"] and plan.promoted == ["B"]
    assert [e.dst for e in plan.new_edges] == ["E_qa"]
    k = next(c for c in plan.changes if c.key == "K")
    assert k.rule == "justification_lost" and k.cause == ["E_qa"]


def test_supersedes_verdict_marks_superseded_and_keeps_it():
    v = seed_view()
    plan = plan_revision(v, [("E_qa", "supersedes", 0.8)], 1, "newer report", fact())
    assert v.nodes["E_qa"].state == SUPERSEDED
    assert v.nodes["K"].state == INVALIDATED
    assert "E_qa" not in plan.forgotten and "E_qa" in plan.superseded


def test_cycle_goes_down_together_and_terminates():
    # K1 and K2 support each other in a cycle; their only external support is E0.
    v = view_of(
        {"E0": "evidence", "K1": "conclusion", "K2": "conclusion"},
        [dep("K1", "E0", group="a"), dep("K1", "K2", group="b"), dep("K2", "K1")],
    )
    plan = plan_revision(v, [("E0", "contradicts", 0.9)], 1, None, fact())
    assert v.nodes["K1"].state == INVALIDATED and v.nodes["K2"].state == INVALIDATED
    assert sorted(plan.invalidated) == ["K1", "K2"]
    assert len([c for c in plan.changes if c.key == "K2"]) == 1
    k2 = next(c for c in plan.changes if c.key == "K2")
    assert k2.detail == "only circular support remained (K2 -> K1 -> K2)"
    k1 = next(c for c in plan.changes if c.key == "K1")  # its external support died: not a cycle's doing
    assert k1.detail.startswith("no justification holds: each of its 2 justifications lost a member")


def test_a_plain_chain_is_no_cycle():
    """E0 <- K1 <- K2 <- K3: every conclusion down the chain lost its antecedent; none is
    told "only circular support remained" (there is no cycle)."""
    v = view_of(
        {"E0": "evidence", "K1": "conclusion", "K2": "conclusion", "K3": "conclusion"},
        [dep("K1", "E0"), dep("K2", "K1"), dep("K3", "K2")],
    )
    plan = plan_revision(v, [("E0", "contradicts", 0.9)], 1, None, fact())
    details = {c.key: c.detail for c in plan.changes if c.rule == "justification_lost"}
    assert details == {
        "K1": "no justification holds: its antecedent E0 is dead",
        "K2": "no justification holds: its antecedent K1 is dead",
        "K3": "no justification holds: its antecedent K2 is dead",
    }


def test_cycle_with_independent_support_survives():
    v = view_of(
        {"E0": "evidence", "E1": "evidence", "K1": "conclusion", "K2": "conclusion"},
        [
            dep("K1", "E0", group="a"),
            dep("K1", "K2", group="b"),
            dep("K2", "K1", group="x"),
            dep("K2", "E1", group="y"),
        ],
    )
    plan = plan_revision(v, [("E0", "contradicts", 0.9)], 1, None, fact())
    # K2 holds through E1; K1 holds through K2
    assert v.nodes["K1"].alive and v.nodes["K2"].alive and plan.invalidated == []


def test_multiple_contradictions_at_once_single_forget_pass():
    v = view_of(
        {"E1": "evidence", "E2": "evidence", "K1": "conclusion", "K2": "conclusion", "K3": "conclusion"},
        [dep("K1", "E1"), dep("K2", "E2"), dep("K3", "E1"), dep("K3", "E2")],
    )
    plan = plan_revision(v, [("E1", "contradicts", 0.9), ("E2", "contradicts", 0.7)], 1, None, fact())
    assert sorted(plan.refuted) == ["E1", "E2"]
    assert sorted(plan.invalidated) == ["K1", "K2", "K3"]
    assert sorted(plan.forgotten) == ["K1", "K2", "K3"]
    assert len(plan.changes) == 5


def test_partial_refutation_alternative_justification():
    v = view_of(
        {"E_qa": "evidence", "E_alt": "evidence", "K": "conclusion"},
        [dep("K", "E_qa", group="g1"), dep("K", "E_alt", group="g2")],
    )
    plan = plan_revision(v, [("E_qa", "contradicts", 0.9)], 1, None, None)
    assert v.nodes["K"].alive and plan.invalidated == []
    # E_qa still feeds a live node: refuted but retained
    assert v.nodes["E_qa"].state == REFUTED and plan.forgotten == []


def test_ungrouped_critical_edges_form_one_justification():
    v = view_of({"E1": "evidence", "E2": "evidence", "K": "conclusion"}, [dep("K", "E1"), dep("K", "E2")])
    plan_revision(v, [("E1", "contradicts", 0.9)], 1, None, None)
    assert v.nodes["K"].state == INVALIDATED


def test_diamond_changes_each_node_once():
    v = view_of(
        {"E0": "evidence", "E1": "evidence", "E2": "evidence", "K": "conclusion"},
        [dep("E1", "E0"), dep("E2", "E0"), dep("K", "E1"), dep("K", "E2")],
    )
    plan = plan_revision(v, [("E0", "contradicts", 0.9)], 1, None, None)
    keys = [c.key for c in plan.changes]
    assert sorted(keys) == ["E0", "E1", "E2", "K"] and len(set(keys)) == len(keys)
    assert sorted(plan.forgotten) == ["E0", "E1", "E2", "K"]


def test_noncritical_dependency_decays_confidence_only():
    v = view_of(
        {"E_qa": "evidence", "E_ok": "evidence", "K": "conclusion"},
        [dep("K", "E_ok"), dep("K", "E_qa", critical=False)],
    )
    plan = plan_revision(v, [("E_qa", "contradicts", 0.9)], 1, None, None)
    assert v.nodes["K"].alive
    assert v.nodes["K"].confidence == 0.8 * DECAY
    assert plan.weakened == ["K"]
    # the refuted node still feeds an alive node (non-critically): retained
    assert plan.forgotten == []


def test_no_supported_rival_keeps_hypothesis_alive_weakened():
    v = view_of(
        {"E1": "evidence", "A": "hypothesis", "C": "hypothesis"}, [Edge("supports", "E1", "A", weight=0.9)]
    )
    plan = plan_revision(v, [("E1", "contradicts", 0.9)], 1, None, fact())
    assert v.nodes["A"].alive and v.nodes["A"].weight == 0.25
    assert plan.promoted == [] and plan.weakened == ["A"]


def test_refutes_edges_lower_support_and_rival_choice():
    v = view_of(
        {
            "E1": "evidence",
            "E2": "evidence",
            "E3": "evidence",
            "E4": "evidence",
            "A": "hypothesis",
            "B": "hypothesis",
            "C": "hypothesis",
        },
        [
            Edge("supports", "E1", "A", weight=0.9),
            Edge("supports", "E2", "B", weight=0.9),
            Edge("refutes", "E4", "B", weight=0.5),
            Edge("supports", "E3", "C", weight=0.6),
        ],
    )
    assert v.support("B") == 0.9 - 0.5
    plan = plan_revision(v, [("E1", "contradicts", 0.9)], 1, None, fact())
    assert plan.promoted == ["C"]  # 0.6 beats 0.4
    assert v.nodes["C"].weight > max(v.nodes[h].weight for h in "AB")


def test_promotion_stays_strictly_on_top_at_cap():
    v = view_of(
        {"E1": "evidence", "E2": "evidence", "A": "hypothesis", "B": "hypothesis", "C": "hypothesis"},
        [Edge("supports", "E1", "A"), Edge("supports", "E2", "B")],
    )
    v.nodes["C"].weight = 1.0
    plan_revision(v, [("E1", "contradicts", 0.9)], 1, None, fact())
    assert v.nodes["B"].weight == 1.0 and v.nodes["C"].weight < 1.0


def test_already_dead_evidence_is_not_changed_again():
    v = seed_view()
    plan_revision(v, [("E_qa", "contradicts", 0.9)], 1, None, fact("F1"))
    second = plan_revision(v, [("E_qa", "contradicts", 0.9)], 2, None, None)
    assert second.changes == []


def test_settle_on_load_invalidates_new_node_resting_on_dead():
    v = view_of({"E0": "evidence", "K": "conclusion"}, [dep("K", "E0")], E0=REFUTED)
    plan = plan_settle(v, ["K"], 3)
    assert v.nodes["K"].state == INVALIDATED and plan.invalidated == ["K"]


# ---- properties over random graphs -------------------------------------------------


def reference_of(v: BeliefView):
    """The independent reference (bench.reference): justifications from the raw edges."""
    from bench.reference import MEdge, MNode, Model

    m = Model()
    for k, n in v.nodes.items():
        m.nodes[k] = MNode(k, n.kind, n.question or "", state=n.state)
    m.edges = [MEdge(e.kind, e.src, e.dst, critical=e.critical, group=e.group) for e in v.edges]
    return m


def well_founded_model(v: BeliefView, premises_alive: dict[str, bool]) -> set[str]:
    """Independent reference: the nodes the reference model (its own justifications
    from the raw edges, its own fixpoint) labels alive when exactly the premises
    marked True are alive."""
    m = reference_of(v)
    for k, ok in premises_alive.items():
        m.nodes[k].state = "alive" if ok else "refuted"
    return {k for k, lab in m.labels().items() if lab == "true"}


@st.composite
def graphs(draw):
    n_e = draw(st.integers(2, 6))
    n_c = draw(st.integers(1, 8))
    ev = [f"E{i}" for i in range(n_e)]
    co = [f"K{i}" for i in range(n_c)]
    nodes = {**{e: "evidence" for e in ev}, **{c: "conclusion" for c in co}}
    edges = []
    for c in co + draw(st.lists(st.sampled_from(ev), max_size=2, unique=True)):
        targets = draw(st.lists(st.sampled_from(ev + co), min_size=0, max_size=4, unique=True))
        for t in targets:
            if t == c:
                continue
            edges.append(
                dep(c, t, critical=draw(st.integers(0, 4)) > 0, group=draw(st.sampled_from([None, "a", "b"])))
            )
    premises = [e for e in ev if not any(x.src == e and x.critical for x in edges)]
    hit = draw(st.lists(st.sampled_from(premises or ev), min_size=1, max_size=3, unique=True))
    return nodes, edges, hit


def settle_all(nodes, edges):
    """A consistent starting labelling: alive iff well-founded with all premises alive."""
    v = view_of(nodes, edges)
    premises = {k: True for k in v.nodes if not reference_of(v).rules_of(k)}
    alive = well_founded_model(v, premises)
    for k, node in v.nodes.items():
        if k not in alive:
            node.state = INVALIDATED
    return v


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_well_founded_invariant_after_revision(g):
    nodes, edges, hit = g
    v = settle_all(nodes, edges)
    hit = [h for h in hit if v.nodes[h].alive and not reference_of(v).rules_of(h)]
    if not hit:
        return
    before_alive = {k for k, n in v.nodes.items() if n.alive}
    plan = plan_revision(v, [(h, "contradicts", 0.9) for h in hit], 1, None, None)
    # reference: recompute from scratch with the hit premises dead
    ref = reference_of(v)
    premises = {k: (k in before_alive and k not in hit) for k in v.nodes if not ref.rules_of(k)}
    expected_alive = well_founded_model(v, premises) & before_alive
    actual_alive = {k for k, n in v.nodes.items() if n.alive}
    assert actual_alive == expected_alive
    # each node changed at most once; nothing outside the dependents changed
    keys = [c.key for c in plan.changes]
    assert len(keys) == len(set(keys))
    # no alive node rests on a dead one without an alternative
    for k, n in v.nodes.items():
        if n.alive and ref.rules_of(k):
            assert any(all(v.nodes[a].alive for a in ants) for ants in ref.rules_of(k))
    # forget rule: every forgotten node is dead and unconsumed by alive nodes
    for k in plan.forgotten:
        assert v.nodes[k].state in (REFUTED, INVALIDATED)
        assert not any(v.nodes[c].alive for c in v.consumers(k))


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_revision_is_deterministic(g):
    nodes, edges, hit = g
    base = settle_all(nodes, edges)
    hit = [h for h in hit if base.nodes[h].alive and not reference_of(base).rules_of(h)]
    if not hit:
        return
    results = []
    for order in (hit, list(reversed(hit))):
        v = copy.deepcopy(base)
        plan = plan_revision(v, [(h, "contradicts", 0.9) for h in order], 1, None, None)
        results.append(
            (
                [(c.key, c.rule, c.after["state"]) for c in plan.changes],
                plan.forgotten,
                {k: n.state for k, n in v.nodes.items()},
            )
        )
    assert results[0] == results[1]


def test_orphans_respect_supersedes_anchor():
    v = view_of({"E1": "evidence", "F": "evidence"}, [Edge("supersedes", "F", "E1")], E1=REFUTED)
    assert orphans(v) == []
    v.nodes["F"].state = REFUTED
    assert orphans(v) == ["E1", "F"]


def test_a_node_loaded_onto_a_disputed_antecedent_enters_disputed():
    """The load takes the state the three-valued labelling gives: resting on a disputed
    node is disputed (undefined), not invalidated; resting on a dead one is invalidated."""
    v = view_of(
        {"E": "evidence", "G": "evidence", "D": "evidence", "K": "conclusion", "K2": "conclusion"},
        [Edge("disputes", "G", "E"), dep("K", "E"), dep("K2", "D")],
        E="disputed",
        G="disputed",
        D=REFUTED,
    )
    plan = plan_settle(v, ["K", "K2"], 3)
    assert v.nodes["K"].state == "disputed" and v.nodes["K2"].state == INVALIDATED
    assert plan.invalidated == ["K2"] and plan.disputed == ["K"]
