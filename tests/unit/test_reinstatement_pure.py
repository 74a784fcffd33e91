"""The pure rules of re-judged reinstatement (``core.reinstatement``) and predicate
cardinality (``core.cardinality``), on small belief views: what a revision would
bring back, what keeping it dead does to the labels, and how declarations read."""

from __future__ import annotations

import pytest

from memory_core.core import reinstatement
from memory_core.core.beliefs import BeliefView, Edge, Node
from memory_core.core.cardinality import (
    MANY,
    ONE,
    cardinality,
    check_predicates,
    declarations_text,
    merged,
    multi_valued,
    stored_predicates,
)
from memory_core.core.errors import InputError
from memory_core.core.revision import (
    begin,
    forget_orphans,
    promote_competing_hypothesis,
    propagate_refutation,
)


def chain_view() -> BeliefView:
    """E_acme refuted by F_bolt (F_bolt supersedes it), K rests on E_acme, E_acme supports H."""
    view = BeliefView()
    view.add_node(Node("E_acme", "evidence", state="refuted", weight=0.0, question="Q"))
    view.add_node(Node("F_bolt", "evidence", question="Q"))
    view.add_node(Node("K", "conclusion", state="invalidated", weight=0.0, question="Q"))
    view.add_node(Node("H", "hypothesis", weight=0.25, question="Q"))
    view.add_edge(Edge("supersedes", "F_bolt", "E_acme"))
    view.add_edge(Edge("depends_on", "K", "E_acme"))
    view.add_edge(Edge("supports", "E_acme", "H"))
    return view


def crane(view: BeliefView):
    return begin(
        view,
        [("F_bolt", "contradicts", 0.9)],
        2,
        "Lot 7 was manufactured by Crane.",
        Node("F_crane", "evidence", question="Q", text="Lot 7 was manufactured by Crane."),
    )


def finish(view, plan):
    propagate_refutation(view, plan)
    promote_competing_hypothesis(view, plan)
    forget_orphans(view, plan)
    return plan


def test_what_a_revision_would_bring_back():
    view = chain_view()
    plan = crane(view)
    seeds, forced = reinstatement.seeds_of(plan)
    assert seeds == ["F_bolt", "F_crane"] and forced == []
    back, labels = reinstatement.returning(view, seeds, forced)
    assert back == ["E_acme"]  # evidence only: K comes back through it, not on its own
    assert labels["F_bolt"] == "dead" and labels["E_acme"] == "alive" and labels["K"] == "alive"
    assert reinstatement.returning(view, seeds, forced, skip=["E_acme"])[0] == []
    assert reinstatement.alive_after(view, labels, "F_crane") and not reinstatement.alive_after(
        view, labels, "F_bolt"
    )


def test_a_dispute_would_bring_it_back_disputed():
    """Crane and Bolt in a dispute (no policy could order them): E_acme's attacker is
    disputed, so E_acme would be disputed -- it is re-judged too."""
    from memory_core.core.policy import Decision

    view = chain_view()
    plan = begin(
        view,
        [("F_bolt", "contradicts", 0.9)],
        2,
        "Crane",
        Node("F_crane", "evidence", question="Q"),
        decisions={
            "F_bolt": Decision("F_bolt", "F_crane", None, "preserve_both", "no policy could order them")
        },
    )
    back, labels = reinstatement.returning(view, *reinstatement.seeds_of(plan))
    assert back == ["E_acme"] and labels["E_acme"] == "disputed"


def test_without_a_verdict_the_old_value_comes_back():
    view = chain_view()
    plan = finish(view, crane(view))
    assert set(plan.reinstated) >= {"E_acme", "K"} and view.nodes["E_acme"].state == "alive"


def test_kept_dead_it_and_what_rests_on_it_stay_dead():
    view = chain_view()
    plan = crane(view)
    reinstatement.keep_dead(
        view,
        plan,
        reinstatement.Rejudged(
            "E_acme",
            "F_crane",
            "contradicts",
            0.9,
            "structured",
            "same subject and predicate, another object",
        ),
    )
    assert Edge("supersedes", "F_crane", "E_acme", confidence=0.9) in plan.new_edges
    seeds, forced = reinstatement.seeds_of(plan)
    assert reinstatement.returning(view, seeds, forced)[0] == []
    finish(view, plan)
    assert plan.reinstated == [] and plan.refuted == ["F_bolt"]
    assert view.nodes["E_acme"].state == "refuted" and view.nodes["K"].state == "invalidated"
    assert view.nodes["H"].weight == 0.25  # its support did not come back
    kept = [c for c in plan.changes if c.rule == reinstatement.NOT_REINSTATED]
    assert [(c.key, c.cause) for c in kept] == [("E_acme", ["F_crane"])]
    assert kept[0].before == kept[0].after and "not reinstated: F_crane contradicts it" in kept[0].detail


def test_keeping_one_dead_can_bring_back_what_it_had_refuted():
    """A -> B -> C, now D kills C: B would come back; kept dead, A (whose attackers B
    and C are both dead then) would come back in turn."""
    view = BeliefView()
    for key, state in (("A", "refuted"), ("B", "refuted"), ("C", "alive")):
        view.add_node(
            Node(key, "evidence", state=state, weight=0.0 if state != "alive" else 0.5, question="Q")
        )
    view.add_edge(Edge("supersedes", "B", "A"))
    view.add_edge(Edge("supersedes", "C", "B"))
    view.add_edge(Edge("supersedes", "C", "A"))  # C was judged against A when B died
    plan = begin(view, [("C", "contradicts", 0.9)], 3, "D", Node("D", "evidence", question="Q"))
    seeds, forced = reinstatement.seeds_of(plan)
    assert reinstatement.returning(view, seeds, forced)[0] == ["B"]
    reinstatement.keep_dead(view, plan, reinstatement.Rejudged("B", "D", "contradicts", 0.9, "structured"))
    assert reinstatement.returning(view, seeds, forced, skip=["B"])[0] == ["A"]
    reinstatement.keep_dead(view, plan, reinstatement.Rejudged("A", "D", "contradicts", 0.9, "structured"))
    finish(view, plan)
    assert {k: view.nodes[k].state for k in "ABCD"} == {
        "A": "refuted",
        "B": "refuted",
        "C": "refuted",
        "D": "alive",
    }


def test_unjudged_reinstatement_says_so():
    view = chain_view()
    plan = crane(view)
    reinstatement.remember_undecided(plan, ["E_acme"])
    finish(view, plan)
    change = next(c for c in plan.changes if c.key == "E_acme" and c.rule == "reinstated")
    assert "F_bolt was refuted by F_crane" in change.detail and "without being re-judged" in change.detail


def test_predicate_declarations():
    assert check_predicates({"Speaks": "many", " capital. ": "one"}) == {"capital": ONE, "speaks": MANY}
    assert multi_valued({"speaks": MANY}, "SPEAKS") and not multi_valued({"speaks": MANY}, "capital")
    assert cardinality(None, "speaks") == ONE and cardinality({"speaks": MANY}, None) == ONE
    assert stored_predicates({"Speaks": "many", "x": "two", 3: "one"}) == {"speaks": "many"}
    assert stored_predicates("speaks") == {} and stored_predicates(None) == {}
    assert merged([{"speaks": MANY, "child": MANY}, {"speaks": ONE}]) == {"child": MANY, "speaks": ONE}
    text = declarations_text({"speaks": MANY, "capital": ONE})
    assert '["speaks"]' in text and "NOT a contradiction" in text and '["capital"]' in text
    assert declarations_text({}) == ""
    for bad in (
        {"speaks": "several"},
        {"speaks": 1},
        {"": "many"},
        {"a|b": "many"},
        ["speaks"],
        "many",
        {"Speaks": "many", "speaks": "one"},
        {"x" * 201: "one"},
        {"a\tb": "one"},
    ):
        with pytest.raises(InputError):
            check_predicates(bad)


def test_a_refuter_only_kept_dead_here_is_not_said_killed_here():
    """E's refuters T1 (dead since an earlier revision) and T2: the new fact V2 kills T2, so E comes
    back; T1, which would come back too, is kept dead by V2 (a record that changes no state). E's
    reinstatement names what died here, and says of T1 only that it is dead, not that V2 refuted it."""
    view = BeliefView()
    for key, state in (("E", "refuted"), ("T1", "refuted"), ("V1", "refuted"), ("T2", "alive")):
        view.add_node(
            Node(key, "evidence", state=state, weight=0.0 if state != "alive" else 0.5, question="Q")
        )
    for src, dst in (("T1", "E"), ("V1", "T1"), ("T2", "E"), ("T2", "V1"), ("T2", "T1")):
        view.add_edge(Edge("supersedes", src, dst))
    plan = begin(view, [("T2", "contradicts", 0.9)], 5, "V2", Node("V2", "evidence", question="Q"))
    reinstatement.keep_dead(view, plan, reinstatement.Rejudged("T1", "V2", "contradicts", 0.9, "structured"))
    finish(view, plan)
    change = next(c for c in plan.changes if c.key == "E" and c.rule == "reinstated")
    assert "T1 is dead" in change.detail and "T2 was refuted by V2" in change.detail, change.detail
    assert "T1 was refuted" not in change.detail, change.detail
