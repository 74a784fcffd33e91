"""explain's why_dead follows the three-valued labelling (pure: memory_core.core.why).

An attacker that is alive (or superseded in time) keeps a node dead; one that is disputed
(undecided) keeps it disputed, and is an attacker now all the same; only a dead one is past.
Each view here is first checked to be labelled as the labelling labels it (or, for damage,
not), so the reasons are read against a graph whose states are right:

* E_old superseded by F, F resting on D, D disputed: F is disputed, so E_old is, and K on it;
* an even loop of supersedes (EA <-> EB) and an odd one (E3 supersedes E2 and rests on E2);
* a node dead through its support while a disputed node also supersedes it;
* a node dead through its support whose dispute rival holds;
* damage: a disputed premise nothing attacks, a disputed node an alive node supersedes.

The history of a premise made disputed by its attacker names the attack, not its support
(read from the revision log's own writes, so the viewer's "Why" says the same).
"""

from __future__ import annotations

from belief_views import view_in_states
from memory_core.core.beliefs import BeliefView, Edge
from memory_core.core.tms import label_of, labels
from memory_core.core.vocabulary import DEPENDS_ON, DISPUTES, SUPERSEDES, Rule
from memory_core.core.why import THROUGH_DISPUTED, history, why_dead, why_index


def labelled_right(view: BeliefView) -> bool:
    """Every stored state is the one the labelling of the whole view gives (check is clean)."""
    return all(label_of(view.nodes[k].state) == lab for k, lab in labels(view).items())


def ledger() -> BeliefView:
    """E_old superseded by F; F rests on D, which is in dispute with X; K rests on E_old."""
    return view_in_states(
        {
            "E_old": ("evidence", "disputed"),
            "F": ("evidence", "disputed"),
            "D": ("evidence", "disputed"),
            "X": ("evidence", "disputed"),
            "K": ("conclusion", "disputed"),
        },
        [
            Edge(SUPERSEDES, "F", "E_old"),
            Edge(DEPENDS_ON, "F", "D"),
            Edge(DISPUTES, "X", "D"),
            Edge(DEPENDS_ON, "K", "E_old"),
        ],
    )


def test_a_node_disputed_because_its_attacker_is_disputed_names_it_an_attacker_now():
    view = ledger()
    assert labelled_right(view)
    why = why_dead(view, "E_old")
    assert why["attackers"] == [{"key": "F", "state": "disputed", "by": "supersedes"}], why
    assert why["past_attackers"] == [], why
    assert why["reasons"] == ["F (disputed) supersedes it; F is in dispute, so E_old is too"], why
    # K is disputed through its support, F through its own: neither has an attacker
    k = why_dead(view, "K")
    assert k["attackers"] == [] and k["past_attackers"] == [], k
    assert k["reasons"] == [
        "no justification holds, its best runs through disputed nodes (E_old is disputed)"
    ]
    f = why_dead(view, "F")
    assert f["reasons"] == ["no justification holds, its best runs through disputed nodes (D is disputed)"]


def test_an_even_loop_of_supersedes_leaves_each_side_attacked_by_the_other():
    view = view_in_states(
        {"EA": ("evidence", "disputed"), "EB": ("evidence", "disputed")},
        [Edge(SUPERSEDES, "EA", "EB"), Edge(SUPERSEDES, "EB", "EA")],
    )
    assert labelled_right(view)
    for me, other in (("EA", "EB"), ("EB", "EA")):
        why = why_dead(view, me)
        assert why["attackers"] == [{"key": other, "state": "disputed", "by": "supersedes"}], why
        assert why["past_attackers"] == [], why
        assert why["reasons"] == [f"{other} (disputed) supersedes it; {other} is in dispute, so {me} is too"]


def test_an_odd_loop_e3_supersedes_e2_and_rests_on_it():
    view = view_in_states(
        {"E2": ("evidence", "disputed"), "E3": ("evidence", "disputed")},
        [Edge(SUPERSEDES, "E3", "E2"), Edge(DEPENDS_ON, "E3", "E2")],
    )
    assert labelled_right(view)
    e2 = why_dead(view, "E2")
    assert e2["attackers"] == [{"key": "E3", "state": "disputed", "by": "supersedes"}], e2
    assert e2["past_attackers"] == [] and not any("check reports" in r for r in e2["reasons"]), e2
    e3 = why_dead(view, "E3")
    assert e3["attackers"] == [] and e3["reasons"] == [
        "no justification holds, its best runs through disputed nodes (E2 is disputed)"
    ], e3


def test_a_node_dead_through_its_support_with_a_disputed_attacker():
    """N rests on R (refuted) and F (disputed) supersedes it: N is dead by its support; F is an
    attacker now (undecided), which alone would leave N disputed, not dead."""
    view = view_in_states(
        {
            "N": ("evidence", "invalidated"),
            "R": ("evidence", "refuted"),
            "F": ("evidence", "disputed"),
            "G": ("evidence", "disputed"),
        },
        [Edge(DEPENDS_ON, "N", "R"), Edge(SUPERSEDES, "F", "N"), Edge(DISPUTES, "G", "F")],
    )
    assert labelled_right(view)
    why = why_dead(view, "N")
    assert why["attackers"] == [{"key": "F", "state": "disputed", "by": "supersedes"}], why
    assert why["past_attackers"] == [], why
    assert why["reasons"] == [
        "F (disputed) supersedes it; F is in dispute, which alone would leave N disputed, not dead",
        "no justification holds (R is refuted)",
    ], why


def test_a_node_dead_through_its_support_whose_rival_holds():
    """N rests on R (refuted) and is in dispute with A: N dead, so A (nothing else attacks it)
    holds, and an attacker that holds keeps N out; no side "neither won" of that dispute."""
    view = view_in_states(
        {"N": ("evidence", "invalidated"), "R": ("evidence", "refuted"), "A": ("evidence", "alive")},
        [Edge(DEPENDS_ON, "N", "R"), Edge(DISPUTES, "A", "N")],
    )
    assert labelled_right(view)
    why = why_dead(view, "N")
    assert why["attackers"] == [{"key": "A", "state": "alive", "by": "disputes"}], why
    assert why["reasons"] == [
        "in dispute with A (alive), which holds: that keeps it out",
        "no justification holds (R is refuted)",
    ], why


def test_an_alive_attacker_keeps_a_node_dead_whatever_its_support():
    """N rests on D (disputed) and A (alive) supersedes it: N is dead by A; its best justification
    runs through a disputed node, which is said as such (not as a dead one)."""
    view = view_in_states(
        {
            "N": ("evidence", "refuted"),
            "D": ("evidence", "disputed"),
            "Y": ("evidence", "disputed"),
            "A": ("evidence", "alive"),
        },
        [Edge(DEPENDS_ON, "N", "D"), Edge(SUPERSEDES, "A", "N"), Edge(DISPUTES, "Y", "D")],
    )
    assert labelled_right(view)
    why = why_dead(view, "N")
    assert why["attackers"] == [{"key": "A", "state": "alive", "by": "supersedes"}], why
    assert why["reasons"] == [
        "A (alive) supersedes it",
        "no justification holds, its best runs through disputed nodes (D is disputed)",
    ], why


def test_a_disputed_premise_nothing_attacks_is_brought_back_by_the_labelling():
    view = view_in_states({"P": ("evidence", "disputed")}, [])
    assert not labelled_right(view)
    why = why_dead(view, "P")
    assert why["reasons"] == [
        "disputed, yet nothing attacks it and it rests on nothing: the labelling would bring it back "
        "(check reports it)"
    ], why
    # a dead one stays dead: no recorded winner, nothing brings it back (check agrees)
    view.nodes["P"].state = "refuted"
    assert labelled_right(view)
    assert why_dead(view, "P")["reasons"] == ["refuted with no recorded winner: nothing alive brings it back"]


def test_a_disputed_node_an_alive_node_supersedes_is_said_to_be_dead_by_the_labelling():
    view = view_in_states(
        {"N": ("evidence", "disputed"), "A": ("evidence", "alive")},
        [Edge(SUPERSEDES, "A", "N")],
    )
    assert not labelled_right(view)
    why = why_dead(view, "N")
    assert why["attackers"] == [{"key": "A", "state": "alive", "by": "supersedes"}], why
    assert why["reasons"] == [
        "A (alive) supersedes it",
        "yet it is disputed: the labelling makes it dead (check reports it)",
    ], why
    # dead, with only a disputed attacker and nothing else against it: the labelling disputes it
    view.nodes["A"].state = "disputed"
    view.nodes["N"].state = "refuted"
    assert why_dead(view, "N")["reasons"] == [
        "A (disputed) supersedes it; A is in dispute, which alone would leave N disputed, not dead",
        "yet it is refuted: the labelling makes it disputed (check reports it)",
    ]


def node_row(key: str, kind: str, state: str) -> dict:
    return {"id": f"id-{key}", "key": key, "kind": kind, "state": state, "edges": []}


def disputed(key: str, cause: list[str], before: str, detail: str = THROUGH_DISPUTED) -> dict:
    return {
        "key": key,
        "rule": Rule.DISPUTED,
        "cause": cause,
        "detail": detail,
        "before": {"state": before, "weight": 0.0},
        "after": {"state": "disputed", "weight": 0.5},
    }


def ledger_log() -> list[dict]:
    """The log of the ledger: loaded (F supersedes E_old), then D disputed by X (preserve_both)."""
    x = node_row("X", "evidence", "disputed")
    x["edges"] = [["id-X", "id-D", DISPUTES, {"confidence": 1.0}]]
    return [
        {
            "epoch": 1,
            "kind": "load",
            "added": ["E_old", "D", "F", "K"],
            "changes": [],
            "intent": {
                "add_nodes": [
                    node_row("E_old", "evidence", "refuted"),
                    node_row("D", "evidence", "alive"),
                    node_row("F", "evidence", "alive"),
                    node_row("K", "conclusion", "invalidated"),
                ],
                "add_edges": [
                    ["id-F", "id-D", DEPENDS_ON, {"critical": True}],
                    ["id-F", "id-E_old", SUPERSEDES, {"confidence": 0.9}],
                    ["id-K", "id-E_old", DEPENDS_ON, {"critical": True}],
                ],
            },
        },
        {
            "epoch": 2,
            "kind": "revise",
            "new_evidence": "X",
            "changes": [
                disputed("D", ["X"], "alive", "D and X disputed: both kept (preserve_both)"),
                disputed("E_old", ["F"], "refuted"),
                disputed("F", ["D"], "alive"),
                disputed("K", ["E_old"], "invalidated"),
            ],
            "intent": {"add_nodes": [x]},
        },
    ]


def test_a_premise_disputed_by_its_attacker_is_not_said_to_rest_on_disputed_support():
    entries = ledger_log()
    event = history(entries, "E_old", related={"F"})["events"][-1]
    assert event["cause"] == ["F"], event
    assert event["text"] == "disputed: its attacker F is in dispute (cause: F)", event
    # the nodes disputed through their support keep saying so
    assert history(entries, "F", related={"D"})["events"][-1]["text"] == (
        f"disputed: {THROUGH_DISPUTED} (cause: D)"
    )
    assert history(entries, "K", related={"E_old"})["events"][-1]["text"] == (
        f"disputed: {THROUGH_DISPUTED} (cause: E_old)"
    )
    # the viewer's "Why" is worded the same
    why = why_index(entries)
    assert why["E_old"] == "epoch 2: disputed: its attacker F is in dispute (cause: F)", why
    assert why["K"] == f"epoch 2: disputed: {THROUGH_DISPUTED} (cause: E_old)", why


def test_an_attacked_node_disputed_through_its_support_too_says_both():
    """W rests on D and S supersedes it: D and S both become disputed. An attack an undo took
    back is none: S superseded V at epoch 2, epoch 3 undid it (the edge went with it), and at
    epoch 5 V became disputed through S, which it rests on since epoch 4: its support."""
    entries = [
        {
            "epoch": 1,
            "kind": "load",
            "changes": [],
            "intent": {
                "add_nodes": [node_row(k, "evidence", "alive") for k in ("W", "D", "S", "V")],
                "add_edges": [["id-W", "id-D", DEPENDS_ON, {}], ["id-S", "id-W", SUPERSEDES, {}]],
            },
        },
        {
            "epoch": 2,
            "kind": "load",
            "changes": [],
            "intent": {"add_edges": [["id-S", "id-V", SUPERSEDES, {}]]},
        },
        {
            "epoch": 3,
            "kind": "undo",
            "undoes": 2,
            "changes": [],
            "intent": {"del_edges": [["id-S", "id-V", SUPERSEDES, {}]]},
        },
        {
            "epoch": 4,
            "kind": "load",
            "changes": [],
            "intent": {"add_edges": [["id-V", "id-S", DEPENDS_ON, {}]]},
        },
        {
            "epoch": 5,
            "kind": "revise",
            "changes": [disputed("W", ["S", "D"], "refuted"), disputed("V", ["S"], "alive")],
        },
    ]
    text = history(entries, "W")["events"][-1]["text"]
    assert text == f"disputed: its attacker S is in dispute, and {THROUGH_DISPUTED} (cause: S, D)", text
    assert history(entries, "V")["events"][-1]["text"] == f"disputed: {THROUGH_DISPUTED} (cause: S)"
