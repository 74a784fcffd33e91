"""Named examples of the revision rules, each checked against the independent
reference (:mod:`bench.reference`) after every revision AND by an explicit
expectation. Each kills at least one mutant of the mutation gate
(``python -m bench.mutants``): rivals with unequal support, weights and priors; a
put-back that needs more than one pass of the fixpoint; a dead node whose last
alive superseder is refuted; alternative and shared justifications; decay per
dead non-critical dependency; reinstatement."""

from __future__ import annotations

from bench.reference import ALIVE, DISPUTED, INVALIDATED, REFUTED, SUPERSEDED, MEdge, MNode, Model
from test_property_pure import Engine, agree


def small(
    nodes: dict[str, str], edges: list[tuple], weights: dict | None = None, priors: dict | None = None
) -> Model:
    """nodes: key -> kind; edges: (kind, src, dst[, group or weight]); kind
    ``depends_on_nc`` is a non-critical depends_on."""
    m = Model()
    for k, kind in nodes.items():
        m.nodes[k] = MNode(k, kind, "Q", weight=(weights or {}).get(k, 0.5), prior=(priors or {}).get(k))
    for e in edges:
        kind, src, dst, *rest = e
        if kind == "depends_on":
            m.edges.append(MEdge(kind, src, dst, group=rest[0] if rest else None))
        elif kind == "depends_on_nc":
            m.edges.append(MEdge("depends_on", src, dst, critical=False))
        else:
            m.edges.append(MEdge(kind, src, dst, weight=rest[0] if rest else 1.0))
    return m


def both(model: Model, *targets: str):
    """Revise ``targets`` in turn (new facts F1, F2, ...) in the engine and the
    model; they must agree after each. Returns (engine, model, plans)."""
    engine = Engine(model)
    plans = []
    for i, t in enumerate(targets, start=1):
        model.revise(t, f"F{i}")
        plans.append(engine.revise(t, f"F{i}", i))
        agree(engine, model, f"after revising {t}")
    return engine, model, plans


def test_put_back_needs_more_than_one_pass():
    """K1 holds through K2 (or E0); K2 through E0 or E1. Refuting E0: K2 is put back
    through E1 and only then K1 through K2 (a single pass of the fixpoint misses K1)."""
    m = small(
        {"E0": "evidence", "E1": "evidence", "K1": "conclusion", "K2": "conclusion"},
        [
            ("depends_on", "K1", "K2", "a"),
            ("depends_on", "K1", "E0", "b"),
            ("depends_on", "K2", "E0", "x"),
            ("depends_on", "K2", "E1", "y"),
        ],
    )
    engine, _, _ = both(m, "E0")
    assert engine.nodes["K1"].state == ALIVE and engine.nodes["K2"].state == ALIVE


def test_long_chain_of_alternatives_all_put_back():
    m = small(
        {"E0": "evidence", "E1": "evidence", **{f"K{i}": "conclusion" for i in range(5)}},
        [("depends_on", "K0", "E0", "a"), ("depends_on", "K0", "E1", "b")]
        + [
            e
            for i in range(1, 5)
            for e in (("depends_on", f"K{i}", "E0", "a"), ("depends_on", f"K{i}", f"K{i - 1}", "b"))
        ],
    )
    engine, _, _ = both(m, "E0")
    assert all(engine.nodes[f"K{i}"].state == ALIVE for i in range(5))


def test_cycle_without_outside_support_goes_down():
    m = small(
        {"E0": "evidence", "K1": "conclusion", "K2": "conclusion"},
        [("depends_on", "K1", "E0", "a"), ("depends_on", "K1", "K2", "b"), ("depends_on", "K2", "K1")],
    )
    engine, _, plans = both(m, "E0")
    assert sorted(plans[0].invalidated) == ["K1", "K2"] and sorted(plans[0].forgotten) == ["K1", "K2"]


def test_dead_node_forgotten_when_its_last_superseder_is_refuted():
    """E2 rests on E0. F1 supersedes E2 (E2 refuted, kept: F1 is alive and
    supersedes it); F2 refutes E0; F3 refutes F1. E2 does not come back (its
    justification is dead) and nothing alive needs it any more: it must be
    forgotten, although only its superseder changed."""
    m = small({"E0": "evidence", "E2": "evidence"}, [("depends_on", "E2", "E0")])
    engine, model, plans = both(m, "E2", "E0", "F1")
    assert plans[0].refuted == ["E2"] and plans[0].invalidated == [] and plans[0].forgotten == []
    assert plans[1].forgotten == []  # E2 still anchored by F1
    assert "E2" in plans[2].forgotten and "E2" in engine.ghosts


def test_contradicted_evidence_resting_on_evidence_is_refuted_not_invalidated():
    """Rule 1 holds for evidence that rests on other evidence too: Ed (depends_on Eb) is
    contradicted by F1 while Eb holds, so Ed is refuted by F1, not invalidated (F1 is its
    attacker, not an antecedent); what rests on Ed is invalidated. When F1 is refuted, Ed
    comes back because its refuter died (Eb never stopped holding), and K with it."""
    m = small(
        {"Eb": "evidence", "Ed": "evidence", "K": "conclusion"},
        [("depends_on", "Ed", "Eb"), ("depends_on", "K", "Ed")],
    )
    engine, model, plans = both(m, "Ed")
    assert plans[0].refuted == ["Ed"] and plans[0].invalidated == ["K"]
    ed = next(c for c in plans[0].changes if c.key == "Ed")
    assert ed.after["state"] == REFUTED and ed.cause == ["F1"]
    assert model.nodes["Ed"].state == REFUTED and model.nodes["K"].forgotten
    model.revise("F1", "F2")
    plans.append(engine.revise("F1", "F2", 2))
    agree(engine, model, "after revising F1")
    back = next(c for c in plans[1].changes if c.key == "Ed")
    assert back.cause == ["F1"] and back.detail.startswith("its refuter F1 was refuted by F2")
    assert engine.nodes["Ed"].state == ALIVE and engine.nodes["K"].state == ALIVE


def test_resolve_against_evidence_resting_on_evidence_refutes_it():
    """``resolve`` of a dispute whose loser Ed rests on Eb: the loser is refuted (as by a
    revision pinned on it), its dependent invalidated; the winner's cause is the loser.
    Resolved the other way, the winner Ed's cause is the loser F1, not its antecedent Eb."""
    for loser, winner in (("Ed", "F1"), ("F1", "Ed")):
        m = small(
            {"Eb": "evidence", "Ed": "evidence", "F1": "evidence", "K": "conclusion"},
            [("depends_on", "Ed", "Eb"), ("depends_on", "K", "Ed"), ("disputes", "F1", "Ed")],
        )
        for k in ("Ed", "F1", "K"):
            m.nodes[k].state = DISPUTED
        engine = Engine(m)
        model_plan = m.resolve(loser, winner)
        plan = engine.resolve(loser, winner, 1)
        agree(engine, m, f"after resolve {loser} --winner {winner}")
        assert plan.refuted == [loser] and m.nodes[loser].state == REFUTED, model_plan
        assert plan.invalidated == (["K"] if loser == "Ed" else [])
        assert next(c for c in plan.changes if c.key == winner).cause == [loser]


def test_dispute_ended_by_a_later_revision_loses_its_edge():
    """D1 and DF in dispute (K rests on D1); F1 refutes DF: D1 is alive again and the
    ``disputes`` edge goes, as a resolve would take it (DF's cause is F1 alone, not its former
    rival). Then F2 refutes F1: DF comes back alive next to D1, not disputed again. A side
    that died for want of support keeps the edge: when its support returns, so does the dispute."""
    m = small(
        {"D1": "evidence", "DF": "evidence", "K": "conclusion"},
        [("depends_on", "K", "D1"), ("disputes", "DF", "D1")],
    )
    for k in ("D1", "DF", "K"):
        m.nodes[k].state = DISPUTED
    engine, model, plans = both(m, "DF", "F1")
    settled = plans[0]
    assert [(e.kind, e.src, e.dst) for e in settled.removed_edges] == [("disputes", "DF", "D1")]
    assert next(c for c in settled.changes if c.key == "DF").cause == ["F1"]
    d1 = next(c for c in settled.changes if c.key == "D1")
    assert d1.detail == "dispute ended: DF was refuted by F1" and d1.cause == ["DF"]
    assert not any(e[0] == "disputes" for e in engine.stored_edges())
    assert plans[1].removed_edges == []
    assert {k: engine.nodes[k].state for k in ("D1", "DF", "K")} == {"D1": ALIVE, "DF": ALIVE, "K": ALIVE}

    # DS dies because its antecedent A is refuted: the dispute with D2 is not settled
    m = small(
        {"A": "evidence", "DS": "evidence", "D2": "evidence"},
        [("depends_on", "DS", "A"), ("disputes", "DS", "D2")],
    )
    for k in ("DS", "D2"):
        m.nodes[k].state = DISPUTED
    engine, model, plans = both(m, "A", "F1")
    assert plans[0].removed_edges == [] and ("disputes", "DS", "D2", None) in engine.stored_edges()
    assert engine.nodes["DS"].state == DISPUTED and engine.nodes["D2"].state == DISPUTED

    # a resolve's loser in a second dispute: that one ends with it
    m = small(
        {"L": "evidence", "W": "evidence", "M": "evidence"}, [("disputes", "W", "L"), ("disputes", "M", "L")]
    )
    for k in ("L", "W", "M"):
        m.nodes[k].state = DISPUTED
    engine = Engine(m)
    m.resolve("L", "W")
    plan = engine.resolve("L", "W", 1)
    agree(engine, m, "after resolve L --winner W")
    assert sorted((e.src, e.dst) for e in plan.removed_edges) == [("M", "L"), ("W", "L")]
    assert engine.nodes["M"].state == ALIVE and next(c for c in plan.changes if c.key == "L").cause == ["W"]


def test_refuter_refuted_reinstates():
    m = small({"E1": "evidence", "K": "conclusion"}, [("depends_on", "K", "E1")])
    engine, _, plans = both(m, "E1", "F1")
    assert "K" in plans[0].forgotten
    assert engine.nodes["E1"].state == ALIVE and engine.nodes["K"].state == ALIVE and "K" not in engine.ghosts


def test_first_alternative_stays_refuted_when_the_second_falls():
    """The property test's first sequence: c holds by a (j1) or b (j2); refute a (F1), then b (F2):
    a stays, refuted, anchored by F1; c is invalidated and forgotten."""
    m = small(
        {"a": "evidence", "b": "evidence", "c": "conclusion"},
        [("depends_on", "c", "a", "j1"), ("depends_on", "c", "b", "j2")],
    )
    engine, _, plans = both(m, "a", "b")
    assert plans[0].invalidated == [] and plans[0].forgotten == []
    assert engine.nodes["a"].state == REFUTED and "a" not in engine.ghosts
    assert "c" in plans[1].invalidated and "c" in plans[1].forgotten


def test_alternative_justifications_are_separate_groups():
    m = small(
        {"A": "evidence", "B": "evidence", "C": "conclusion"},
        [("depends_on", "C", "A", "j1"), ("depends_on", "C", "B", "j2")],
    )
    engine, _, plans = both(m, "A")
    assert engine.nodes["C"].state == ALIVE and plans[0].invalidated == []


def test_shared_antecedent_in_two_justifications():
    """g holds by (a, e) or by (d, e) (Building Problem Solvers, ex1)."""
    m = small(
        {"a": "evidence", "d": "evidence", "e": "evidence", "g": "conclusion"},
        [
            ("depends_on", "g", "a", "j1"),
            ("depends_on", "g", "e", "j1"),
            ("depends_on", "g", "d", "j2"),
            ("depends_on", "g", "e", "j2"),
        ],
    )
    engine, _, _ = both(m.copy(), "a")
    assert engine.nodes["g"].state == ALIVE
    engine, _, plans = both(m, "a", "e")
    assert "g" in plans[1].invalidated and "g" in plans[1].forgotten


def rivals(weights: dict, priors: dict, support: dict) -> Model:
    """A loses its only supporter E_A; B and C are its rivals with the given
    supporting-edge weights, feedback weights and priors."""
    return small(
        {
            "E_A": "evidence",
            "E_B": "evidence",
            "E_C": "evidence",
            "A": "hypothesis",
            "B": "hypothesis",
            "C": "hypothesis",
        },
        [
            ("supports", "E_A", "A", 1.0),
            ("supports", "E_B", "B", support["B"]),
            ("supports", "E_C", "C", support["C"]),
        ],
        weights=weights,
        priors=priors,
    )


def test_rival_with_more_support_wins_over_heavier_rival():
    m = rivals({"A": 0.5, "B": 0.3, "C": 0.9}, {}, {"B": 0.9, "C": 0.6})
    _, _, plans = both(m, "E_A")
    assert plans[0].promoted == ["B"]


def test_equal_support_heavier_rival_wins():
    m = rivals({"A": 0.5, "B": 0.3, "C": 0.8}, {"B": 0.9, "C": 0.1}, {"B": 0.6, "C": 0.6})
    engine, _, plans = both(m, "E_A")
    assert plans[0].promoted == ["C"]
    assert engine.nodes["A"].state == SUPERSEDED and engine.nodes["C"].weight == 0.8  # already on top


def test_equal_support_and_weight_higher_prior_wins():
    m = rivals({"A": 0.5, "B": 0.5, "C": 0.5}, {"B": 0.2, "C": 0.7}, {"B": 0.6, "C": 0.6})
    _, _, plans = both(m, "E_A")
    assert plans[0].promoted == ["C"]


def test_promoted_rival_is_lifted_above_every_other():
    m = rivals({"A": 0.5, "B": 1.0, "C": 0.4}, {}, {"B": 0.2, "C": 0.9})
    engine, _, plans = both(m, "E_A")
    assert plans[0].promoted == ["C"]
    assert engine.nodes["B"].weight == 0.95 and engine.nodes["C"].weight == 1.0


def test_reinstated_hypothesis_undoes_the_promotion():
    m = rivals({"A": 0.6, "B": 0.3, "C": 0.4}, {}, {"B": 0.9, "C": 0.6})
    engine, _, plans = both(m, "E_A", "F1")
    assert plans[0].promoted == ["B"] and engine.nodes["A"].state == ALIVE
    assert engine.nodes["A"].weight == 0.6 and engine.nodes["B"].weight == 0.3


def test_decay_counts_each_dead_noncritical_dependency():
    m = small(
        {"E0": "evidence", "E1": "evidence", "E2": "evidence", "K": "conclusion"},
        [("depends_on", "K", "E2"), ("depends_on_nc", "K", "E0"), ("depends_on", "E1", "E0")],
    )
    m.nodes["K"].confidence = 0.8
    engine, _, _ = both(m, "E0")
    # E0 refuted and E1 invalidated; only E0 is a non-critical dependency of K
    assert engine.nodes["E1"].state == INVALIDATED
    assert engine.nodes["K"].state == ALIVE and engine.nodes["K"].confidence == 0.4


def test_load_settles_new_nodes_with_more_than_one_pass():
    """Loading (plan_settle): K1 holds through K2 (K1's other justification rests on
    the refuted E0), K2 through the alive E1. K2 is put back first and only then
    K1 (a single pass of the fixpoint leaves K1 invalidated); the reference agrees."""
    from memory_core.core.beliefs import BeliefView, Edge, Node
    from memory_core.core.revision import plan_settle

    m = small(
        {"E0": "evidence", "E1": "evidence", "K1": "conclusion", "K2": "conclusion"},
        [("depends_on", "K1", "K2", "a"), ("depends_on", "K1", "E0", "b"), ("depends_on", "K2", "E1")],
    )
    m.nodes["E0"].state, m.nodes["E0"].weight = REFUTED, 0.0
    labels = m.labels()
    view = BeliefView()
    for n in m.nodes.values():
        view.add_node(Node(n.key, n.kind, state=n.state, weight=n.weight, question="Q"))
    for e in m.edges:
        view.add_edge(Edge(e.kind, e.src, e.dst, group=e.group))
    plan = plan_settle(view, ["K1", "K2"], 1)
    assert plan.invalidated == []
    assert {k: str(view.nodes[k].state) for k in ("K1", "K2")} == {"K1": ALIVE, "K2": ALIVE}
    assert labels["K1"] == labels["K2"] == "true" and labels["E0"] == "false"


def test_decay_per_dead_noncritical_dependency_compounds():
    """K has non-critical dependencies on E0 and on E1 (which rests on E0): refuting
    E0 kills both, so K's confidence is halved twice."""
    m = small(
        {"E0": "evidence", "E1": "evidence", "E2": "evidence", "K": "conclusion"},
        [
            ("depends_on", "K", "E2"),
            ("depends_on_nc", "K", "E0"),
            ("depends_on_nc", "K", "E1"),
            ("depends_on", "E1", "E0"),
        ],
    )
    m.nodes["K"].confidence = 0.8
    engine, _, _ = both(m, "E0")
    assert engine.nodes["K"].state == ALIVE and engine.nodes["K"].confidence == 0.2


def test_load_keeps_a_node_with_only_a_noncritical_dependency():
    """Loading K whose only dependency is non-critical (on the new E0): K is a
    premise and stays alive (only critical dependents are relabelled)."""
    from memory_core.core.beliefs import BeliefView, Edge, Node
    from memory_core.core.revision import plan_settle

    view = BeliefView()
    for key, kind in (("E0", "evidence"), ("E1", "evidence"), ("K", "conclusion")):
        view.add_node(Node(key, kind, question="Q"))
    view.add_edge(Edge("depends_on", "K", "E0", critical=False))
    view.add_edge(Edge("depends_on", "E1", "E0"))
    plan = plan_settle(view, ["E0", "E1", "K"], 1)
    assert plan.invalidated == [] and view.nodes["K"].state == ALIVE


def test_decay_of_an_unset_confidence_starts_from_one():
    m = small(
        {"E0": "evidence", "E2": "evidence", "K": "conclusion"},
        [("depends_on", "K", "E2"), ("depends_on_nc", "K", "E0")],
    )
    engine, _, _ = both(m, "E0")
    assert engine.nodes["K"].state == ALIVE and engine.nodes["K"].confidence == 0.5


def test_load_invalidates_with_weight_zero():
    """A node loaded onto a dead justification enters invalidated, weight 0."""
    from memory_core.core.beliefs import BeliefView, Edge, Node
    from memory_core.core.revision import plan_settle

    view = BeliefView()
    view.add_node(Node("E0", "evidence", state=REFUTED, weight=0.0, question="Q"))
    view.add_node(Node("K", "conclusion", question="Q"))
    view.add_edge(Edge("depends_on", "K", "E0"))
    plan = plan_settle(view, ["K"], 1)
    assert (
        plan.invalidated == ["K"] and view.nodes["K"].state == INVALIDATED and view.nodes["K"].weight == 0.0
    )


def supported_chain() -> Model:
    """E1 rests on E0 and supports H (with E2); the rival R is supported by E3."""
    return small(
        {
            "E0": "evidence",
            "E1": "evidence",
            "E2": "evidence",
            "E3": "evidence",
            "H": "hypothesis",
            "R": "hypothesis",
        },
        [
            ("depends_on", "E1", "E0"),
            ("supports", "E1", "H", 0.9),
            ("supports", "E2", "H", 0.5),
            ("supports", "E3", "R", 0.6),
        ],
    )


def test_dead_evidence_supporting_an_alive_hypothesis_is_kept():
    engine, _, plans = both(supported_chain(), "E0")
    assert plans[0].invalidated == ["E1"] and engine.nodes["H"].state == ALIVE
    assert plans[0].forgotten == [] and "E1" not in engine.ghosts


def test_dead_supporter_forgotten_when_its_hypothesis_is_superseded():
    """Then E2 (H's last alive supporter) is refuted: H is superseded by R, and E1,
    unchanged in this revision, has no alive consumer left: forgotten."""
    engine, _, plans = both(supported_chain(), "E0", "E2")
    assert engine.nodes["H"].state == SUPERSEDED and plans[1].promoted == ["R"]
    assert "E1" in plans[1].forgotten and "E1" in engine.ghosts


def test_noncritical_dependency_back_restores_confidence():
    """C6 (0.8) rests on EE and, non-critically, on EC. Refuting EC halves C6 (0.4);
    refuting that refuter brings EC back and C6's 0.8 with it (a restoration recorded with
    its cause); refuting EC again halves it once more (0.4, not 0.2): rule 4 is a function
    of the current state."""
    m = small(
        {"EC": "evidence", "EE": "evidence", "C6": "conclusion"},
        [("depends_on", "C6", "EE"), ("depends_on_nc", "C6", "EC")],
    )
    m.nodes["C6"].confidence = 0.8
    engine, _, plans = both(m, "EC", "F1", "EC")
    assert plans[0].weakened == ["C6"]
    back = [c for c in plans[1].changes if c.key == "C6"]
    assert [(c.rule, c.cause, c.after["confidence"]) for c in back] == [("reinstated", ["EC"], 0.8)]
    assert engine.nodes["C6"].confidence == 0.4 and plans[2].weakened == ["C6"]


def test_node_back_while_its_noncritical_dependency_is_dead_is_weakened():
    """K (unset confidence) rests on E0 and, non-critically, on E1. E0 dies (K invalidated),
    then E1 dies (K dead: untouched), then E0 comes back: K holds again with its confidence
    halved for E1; E1 coming back unsets it again."""
    m = small(
        {"E0": "evidence", "E1": "evidence", "K": "conclusion", "E2": "evidence"},
        [("depends_on", "K", "E0"), ("depends_on_nc", "K", "E1"), ("depends_on", "E2", "E0")],
    )
    engine, _, _ = both(m.copy(), "E0", "E1", "F1")
    assert engine.nodes["K"].state == ALIVE and engine.nodes["K"].confidence == 0.5
    engine, _, _ = both(m, "E1", "E0", "F2", "F1")
    assert engine.nodes["K"].state == ALIVE and engine.nodes["K"].confidence is None


def two_suspects() -> Model:
    """E1 supports H1 (0.6) and H2 (0.3); E3 supports H2 (0.5); H3 has no supporter."""
    return small(
        {"E1": "evidence", "E3": "evidence", "H1": "hypothesis", "H2": "hypothesis", "H3": "hypothesis"},
        [("supports", "E1", "H1", 0.6), ("supports", "E1", "H2", 0.3), ("supports", "E3", "H2", 0.5)],
    )


def test_superseded_needs_a_rival_with_alive_support_in_either_order():
    """Refuting E1 supersedes H1 and promotes H2 (E3 still supports it); refuting E3 then
    leaves no hypothesis with alive support: H1 may not stay superseded. It is alive again,
    H2's promotion is undone, and both are weakened, exactly as when E3 falls first."""
    a, _, plans = both(two_suspects(), "E1", "E3")
    assert plans[0].promoted == ["H2"] and sorted(plans[1].weakened) == ["H1", "H2"]
    b, _, _ = both(two_suspects(), "E3", "E1")
    final = {h: (str(a.nodes[h].state), a.nodes[h].weight) for h in ("H1", "H2", "H3")}
    assert final == {h: (str(b.nodes[h].state), b.nodes[h].weight) for h in ("H1", "H2", "H3")}
    assert final == {"H1": (ALIVE, 0.25), "H2": (ALIVE, 0.25), "H3": (ALIVE, 0.5)}


def test_epoch_is_that_of_the_last_change_of_any_kind():
    """A node's epoch is the epoch of its last change, a weight or a confidence included:
    the promoted rival and the weakened conclusion carry the revision's epoch, and a
    node the revision did not change keeps its own."""
    m = rivals({"A": 0.5, "B": 0.3, "C": 0.4}, {}, {"B": 0.9, "C": 0.6})
    m.nodes["K"] = MNode("K", "conclusion", "Q", confidence=0.8)
    m.nodes["E_K"] = MNode("E_K", "evidence", "Q")
    m.edges += [MEdge("depends_on", "K", "E_K"), MEdge("depends_on", "K", "E_A", critical=False)]
    engine, _, plans = both(m, "E_A")
    assert plans[0].promoted == ["B"] and plans[0].weakened == ["K"]
    assert {k: engine.nodes[k].epoch for k in ("A", "B", "K", "C", "E_K")} == {
        "A": 1,
        "B": 1,
        "K": 1,
        "C": 0,
        "E_K": 0,
    }


def test_a_promotion_that_leaves_the_weight_carries_the_epoch_too():
    """B already stands 0.25 above A when A loses its only supporter: B is promoted with
    its weight unchanged, and that promotion is its last change (explain reports it at
    this epoch, so status must not show B's older one)."""
    m = small(
        {"E_A": "evidence", "E_B": "evidence", "A": "hypothesis", "B": "hypothesis"},
        [("supports", "E_A", "A", 1.0), ("supports", "E_B", "B", 0.3)],
        weights={"A": 0.3, "B": 0.8},
        priors={},
    )
    engine, _, plans = both(m, "E_A")
    assert plans[0].promoted == ["B"] and engine.nodes["B"].weight == 0.8
    assert engine.nodes["B"].epoch == 1 and engine.nodes["E_B"].epoch == 0


def test_superseded_hypothesis_gaining_alive_support_holds_again():
    """Rule 9 for hypotheses (the load's settle step, memory_core/ops/load.py): A (0.6)
    loses E_A and is superseded, B promoted; a fragment then adds EN supporting A. A holds
    again with its weight from before and B's promotion is undone, as when E_A comes back."""
    from memory_core.core.beliefs import BeliefView, Edge, Node
    from memory_core.core.revision import plan_settle
    from memory_core.core.tms import reinstate_hypotheses

    m = rivals({"A": 0.6, "B": 0.3, "C": 0.4}, {}, {"B": 0.9, "C": 0.6})
    engine, model, plans = both(m, "E_A")
    assert engine.nodes["A"].state == SUPERSEDED and plans[0].promoted == ["B"]
    model.load_supporter("EN", "A", 0.9)
    view = BeliefView(nodes=dict(engine.nodes), edges=list(engine.edges))
    view.add_node(Node("EN", "evidence", question="Q"))
    view.add_edge(Edge("supports", "EN", "A", weight=0.9))
    plan = plan_settle(view, ["EN"], 2)
    assert reinstate_hypotheses(view, plan, ["EN"], engine.memory) == ["A"]
    engine.nodes, engine.edges = dict(view.nodes), list(view.edges)
    agree(engine, model, "after loading EN")
    assert (engine.nodes["A"].state, engine.nodes["A"].weight, engine.nodes["B"].weight) == (ALIVE, 0.6, 0.3)


def test_loaded_onto_a_dead_noncritical_dependency_enters_halved():
    """Rule 4 at load (rule 9: the load's settle step, memory_core/ops/load.py): E0 is refuted
    (F1); a fragment then adds K (0.8), resting on EE and using E0 non-critically, and gives
    the stored J (0.6) a non-critical edge to E0. Both enter halved (0.4, 0.3), as if E0 had
    died since; F1 refuted (F2) brings E0 back and gives them 0.8 and 0.6; E0 refuted again
    (F3) halves them again."""
    from memory_core.core.beliefs import BeliefView, Edge, Node
    from memory_core.core.revision import plan_settle

    m = small({"E0": "evidence", "EE": "evidence", "J": "conclusion"}, [("depends_on", "J", "EE")])
    m.nodes["J"].confidence = 0.6
    engine, model, _ = both(m, "E0")
    model.load_fragment(
        [MNode("K", "conclusion", "Q", confidence=0.8)],
        [
            MEdge("depends_on", "K", "EE"),
            MEdge("depends_on", "K", "E0", critical=False),
            MEdge("depends_on", "J", "E0", critical=False),
        ],
    )
    view = BeliefView(nodes=dict(engine.nodes), edges=list(engine.edges))
    view.add_node(Node("K", "conclusion", question="Q", confidence=0.8))
    view.add_edge(Edge("depends_on", "K", "EE"))
    view.add_edge(Edge("depends_on", "K", "E0", critical=False))
    view.add_edge(Edge("depends_on", "J", "E0", critical=False))
    plan = plan_settle(view, ["K", "J"], 2, gained={"K": ["E0"], "J": ["E0"]})
    assert sorted(plan.weakened) == ["J", "K"]
    engine.nodes, engine.edges = dict(view.nodes), list(view.edges)
    engine.memory.absorb(plan)
    agree(engine, model, "after the load")
    assert (engine.nodes["K"].confidence, engine.nodes["J"].confidence) == (0.4, 0.3)
    for epoch, (target, new) in enumerate((("F1", "F2"), ("E0", "F3")), start=3):
        model.revise(target, new)
        engine.revise(target, new, epoch)
        agree(engine, model, f"after revising {target}")
        want = (0.8, 0.6) if target == "F1" else (0.4, 0.3)
        assert (engine.nodes["K"].confidence, engine.nodes["J"].confidence) == want
