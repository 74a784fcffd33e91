"""explain gives only true reasons (pure: memory_core.core.why over a BeliefView and log entries).

* why_alive never gives a justification as holding when one of its members is dead (a
  forgotten one included, as the dead ghost the view holds) or missing from the view;
* why_dead says what keeps a node out now: the attackers that hold (not the dead refuter the
  log first named), each justification's members that do not, a forgotten one as forgotten;
* the history names the node whose change caused an event: the loser of a resolved dispute,
  the antecedent that came back (not the members that were alive all along), the
  justification that died when a node became disputed through its support;
* a node found never true in valid time is not said to rest on antecedents "now dead": its
  record names every antecedent, alive ones too.
"""

from __future__ import annotations

from belief_views import view_in_states
from memory_core.core.beliefs import BeliefView, Edge
from memory_core.core.vocabulary import DEPENDS_ON, DISPUTES, SUPERSEDES, Rule
from memory_core.core.why import history, why_alive, why_dead, why_index


def trial(kp: str = "invalidated", with_kp: bool = True) -> BeliefView:
    """X rests on {KP, Qe} (group a) or on {R} (group b); KP is dead."""
    nodes = {"X": ("conclusion", "alive"), "Qe": ("evidence", "alive"), "R": ("evidence", "alive")}
    if with_kp:
        nodes["KP"] = ("conclusion", kp)
    return view_in_states(
        nodes,
        [
            Edge(DEPENDS_ON, "X", "KP", group="a"),
            Edge(DEPENDS_ON, "X", "Qe", group="a"),
            Edge(DEPENDS_ON, "X", "R", group="b"),
        ],
    )


def test_a_justification_with_a_dead_member_is_not_given_as_holding():
    tree = why_alive(trial(), "X")
    assert tree["justification"] == "b" and [a["key"] for a in tree["antecedents"]] == ["R"]


def test_a_member_missing_from_the_view_is_not_taken_as_alive():
    tree = why_alive(trial(with_kp=False), "X")
    assert tree["justification"] == "b", tree


def test_no_holding_justification_is_said_so():
    view = trial()
    view.nodes["R"].state = "refuted"
    tree = why_alive(view, "X")
    assert tree["justification"] is None and tree["antecedents"] == [] and "no justification" in tree["note"]


def test_why_dead_names_the_attacker_that_holds_now_not_the_dead_refuter():
    view = view_in_states(
        {"E1": ("evidence", "refuted"), "G1": ("evidence", "refuted"), "F": ("evidence", "alive")},
        [Edge(SUPERSEDES, "G1", "E1"), Edge(SUPERSEDES, "F", "E1")],
    )
    why = why_dead(view, "E1")
    assert why["attackers"] == [{"key": "F", "state": "alive", "by": "supersedes"}]
    assert why["past_attackers"] == [{"key": "G1", "state": "refuted", "by": "supersedes"}]
    assert why["reasons"] == ["F (alive) supersedes it"]
    assert why_dead(view, "F") is None  # alive: why_alive's question


def test_why_dead_lists_each_lost_justification_a_forgotten_member_as_forgotten():
    view = trial()
    view.nodes["X"].state = "invalidated"
    view.nodes["R"].state = "refuted"
    why = why_dead(view, "X", forgotten={"KP"})
    assert why["justifications"] == [
        {"justification": "a", "members": [{"key": "KP", "state": "forgotten"}]},
        {"justification": "b", "members": [{"key": "R", "state": "refuted"}]},
    ]
    assert why["reasons"] == [
        "no justification holds (justification a: KP is forgotten; justification b: R is refuted)"
    ]


def test_why_dead_of_a_node_disputed_through_its_support_names_the_lost_justification():
    view = view_in_states(
        {
            "KZb": ("conclusion", "disputed"),
            "Z1": ("evidence", "disputed"),
            "Z1b": ("evidence", "disputed"),
            "Z3": ("evidence", "refuted"),
        },
        [
            Edge(DEPENDS_ON, "KZb", "Z1", group="a"),
            Edge(DEPENDS_ON, "KZb", "Z3", group="b"),
            Edge(DISPUTES, "Z1b", "Z1"),
        ],
    )
    why = why_dead(view, "KZb")
    assert (
        why["attackers"] == []
        and "Z3 is refuted" in why["reasons"][0]
        and "Z1 is disputed" in why["reasons"][0]
    )
    z1 = why_dead(view, "Z1")
    assert z1["attackers"] == [{"key": "Z1b", "state": "disputed", "by": "disputes"}]


def change(key, rule, cause, after, detail=""):
    return {
        "key": key,
        "rule": rule,
        "cause": cause,
        "detail": detail,
        "before": {"state": "disputed", "weight": 0.5},
        "after": {"state": after, "weight": 0.5},
    }


def test_the_winner_of_a_resolved_dispute_names_the_loser():
    entries = [
        {"epoch": 1, "kind": "load", "added": ["E1", "F1"]},
        {
            "epoch": 2,
            "kind": "resolve",
            "changes": [
                change("F1", Rule.CONTRADICTED, ["E1"], "refuted", "dispute resolved in favour of E1"),
                change("E1", Rule.RESOLVED, [], "alive", "dispute with F1 resolved in its favour"),
            ],
        },
    ]
    event = history(entries, "E1")["events"][-1]
    assert event["cause"] == ["F1"] and "(F1 lost)" in event["text"], event


def test_a_node_brought_back_names_what_came_back_not_what_never_changed():
    entries = [
        {"epoch": 1, "kind": "load", "added": ["K2"]},
        {
            "epoch": 2,
            "kind": "resolve",
            "changes": [
                change("E1", Rule.RESOLVED, [], "alive"),
                change("K1", Rule.REINSTATED, ["E1"], "alive"),
                change("K2", Rule.REINSTATED, ["E2", "K1"], "alive"),
            ],
        },
    ]
    event = history(entries, "K2")["events"][-1]
    assert event["cause"] == ["K1"] and event["text"].startswith("reinstated: alive again (cause: K1)"), event
    # a justification a load added holds through nodes that did not change: the record stands
    entries[1]["changes"] = [change("K2", Rule.REINSTATED, ["E2"], "alive")]
    assert history(entries, "K2")["events"][-1]["cause"] == ["E2"]


def test_a_node_disputed_through_its_support_names_the_justification_that_died():
    entries = [
        {"epoch": 1, "kind": "load", "added": ["KZb"]},
        {
            "epoch": 2,
            "kind": "revise",
            "changes": [
                change("Z3", Rule.CONTRADICTED, ["NZ3"], "refuted"),
                change("KZb", Rule.DISPUTED, ["Z1"], "disputed", "its support runs through disputed nodes"),
            ],
        },
    ]
    event = history(entries, "KZb", related={"Z1", "Z3"})["events"][-1]
    assert event["cause"] == ["Z1", "Z3"], event
    assert event["text"] == "disputed: its support runs through disputed nodes (cause: Z1, Z3)"
    assert "neither side won" not in event["text"]
    # the viewer's "Why", given the node's antecedents as explain reads them, says the same
    assert why_index(entries, {"kzb": {"Z1", "Z3"}})["KZb"] == "epoch 2: " + event["text"]


def test_a_party_to_a_dispute_names_only_its_sides():
    """F1 and F2 in dispute, both refuted by F3, come back disputed when F3 dies: F3 is an
    attacker of F1 that changed in the same entry, but not a side of the dispute."""
    entries = [
        {"epoch": 1, "kind": "load", "added": ["F1", "F2"]},
        {
            "epoch": 2,
            "kind": "revise",
            "changes": [
                change("F3", Rule.CONTRADICTED, ["F4"], "refuted"),
                change("F1", Rule.DISPUTED, ["F2"], "disputed", "in dispute with F2"),
            ],
        },
    ]
    event = history(entries, "F1", related={"F2", "F3"})["events"][-1]
    assert event["cause"] == ["F2"], event
    assert event["text"] == "disputed: neither side won (F2) (in dispute with F2)", event
    assert why_index(entries, {"f1": {"F2", "F3"}})["F1"] == "epoch 2: " + event["text"]


def test_a_confidence_restored_on_an_alive_node_is_no_coming_back():
    entries = [
        {"epoch": 1, "kind": "load", "added": ["C6"]},
        {
            "epoch": 2,
            "kind": "revise",
            "changes": [
                dict(
                    change("C6", Rule.REINSTATED, ["EC"], "alive", "confidence restored to 0.8"),
                    before={"state": "alive"},
                )
            ],
        },
    ]
    text = history(entries, "C6")["events"][-1]["text"]
    assert text == "restored (cause: EC) (confidence restored to 0.8)", text


def test_why_alive_gives_the_well_founded_justification_never_a_circle():
    """A <- {B} (a1), A <- {E} (a2), B <- {A}: A holds by E, the premise; B by A. A JTMS's
    support is well founded: A is never shown resting on B, which holds only through A."""
    view = view_in_states(
        {"A": ("conclusion", "alive"), "B": ("conclusion", "alive"), "E": ("evidence", "alive")},
        [
            Edge(DEPENDS_ON, "A", "B", group="a1"),
            Edge(DEPENDS_ON, "A", "E", group="a2"),
            Edge(DEPENDS_ON, "B", "A"),
        ],
    )
    a = why_alive(view, "A")
    assert a is not None and a["justification"] == "a2" and [x["key"] for x in a["antecedents"]] == ["E"]
    b = why_alive(view, "B")
    assert (
        b is not None and b["antecedents"][0]["key"] == "A" and b["antecedents"][0]["justification"] == "a2"
    )
    # a pure cycle holds by nothing well founded: said, never given as a justification
    loop = view_in_states(
        {"P": ("conclusion", "alive"), "R": ("conclusion", "alive")},
        [Edge(DEPENDS_ON, "P", "R"), Edge(DEPENDS_ON, "R", "P")],
    )
    assert why_alive(loop, "P")["note"].startswith("alive, but no justification holds")


def test_why_alive_on_a_deep_chain_a_diamond_and_an_unread_node():
    """A chain thousands deep is walked without recursion and cut, saying so, below
    MAX_WHY_DEPTH levels; a node reached twice is expanded once; a node whose justifications
    the bounded read did not reach is truncated, not a premise."""
    from memory_core.core.why import MAX_WHY_DEPTH

    depth = 3000
    chain = view_in_states(
        {f"C{i}": ("conclusion", "alive") for i in range(depth)} | {"E": ("evidence", "alive")},
        [Edge(DEPENDS_ON, f"C{i}", f"C{i - 1}") for i in range(1, depth)] + [Edge(DEPENDS_ON, "C0", "E")],
    )
    row, levels = why_alive(chain, f"C{depth - 1}"), 0
    while row["antecedents"]:
        row, levels = row["antecedents"][0], levels + 1
    assert levels == MAX_WHY_DEPTH and row["truncated"] and not row["premise"]
    diamond = view_in_states(
        {"T": ("conclusion", "alive"), "L": ("conclusion", "alive"), "R": ("conclusion", "alive")}
        | {"E": ("evidence", "alive")},
        [
            Edge(DEPENDS_ON, "T", "L"),
            Edge(DEPENDS_ON, "T", "R"),
            Edge(DEPENDS_ON, "L", "E"),
            Edge(DEPENDS_ON, "R", "L"),
        ],
    )
    top = why_alive(diamond, "T")
    assert [x["key"] for x in top["antecedents"]] == ["L", "R"]
    assert top["antecedents"][1]["antecedents"][0] == {
        "key": "L",
        "state": "alive",
        "premise": False,
        "justification": None,
        "antecedents": [],
        "repeated": True,
        "note": "shown above",
    }
    cut = why_alive(chain, "C5", unread={"C3"})
    assert cut["antecedents"][0]["antecedents"][0]["truncated"] is True


def test_the_viewers_why_is_worded_as_explain_and_skips_what_an_undo_took_back():
    """why_index (the viewer's "Why"): a node disputed through its support is not a party to the
    dispute; a confidence restored is no reinstatement; after an undo a node is as it was
    before the undone epoch, for the reason it was so then."""
    from memory_core.core.why import THROUGH_DISPUTED, why_index

    def change(key, rule, cause, before="alive", after="alive", detail=""):
        return {
            "key": key,
            "rule": rule,
            "cause": cause,
            "detail": detail,
            "before": {"state": before},
            "after": {"state": after},
        }

    entries = [
        {"epoch": 1, "kind": "load", "changes": []},
        {
            "epoch": 2,
            "kind": "revise",
            "changes": [change("K", Rule.DISPUTED, ["E"], after="disputed", detail=THROUGH_DISPUTED)],
        },
        {
            "epoch": 3,
            "kind": "revise",
            "changes": [change("KN", Rule.REINSTATED, ["N"], detail="confidence restored")],
        },
        {"epoch": 4, "kind": "revise", "changes": [change("X", Rule.CONTRADICTED, ["FX"], after="refuted")]},
        {"epoch": 5, "kind": "revise", "changes": [change("X", Rule.REINSTATED, ["GX"], before="refuted")]},
        {
            "epoch": 6,
            "kind": "undo",
            "undoes": 5,
            "changes": [change("X", Rule.CONTRADICTED, ["FX"], after="refuted")],
        },
    ]
    why = why_index(entries)
    assert why["K"] == f"epoch 2: disputed: {THROUGH_DISPUTED} (cause: E)"
    assert why["KN"].startswith("epoch 3: restored (cause: N)")
    assert why["X"] == "epoch 4: refuted: contradicted by FX"


def test_a_key_explained_is_spelled_as_its_latest_life_spelled_it():
    """Keys match whatever their case: a node loaded as "Kx", removed by an undo, then loaded
    again as "KX" is explained as "KX", the spelling of the node that lived last."""
    from memory_core.core.why import history

    entries = [
        {"epoch": 1, "kind": "load", "added": ["Kx"], "changes": []},
        {"epoch": 2, "kind": "undo", "undoes": 1, "changes": []},
        {"epoch": 3, "kind": "load", "added": ["KX"], "changes": []},
    ]
    assert history(entries, "kx")["key"] == "KX"


def test_a_hypothesis_superseded_names_the_rival_promoted_apart_from_the_evidence_it_lost():
    """The demo: the audit refutes E_qa, A loses its support and B is promoted over it. The
    change's cause holds both (B and E_qa); the sentence said "rival promoted (B, E_qa)", as if
    E_qa were a rival."""
    entries = [
        {"epoch": 1, "kind": "load", "added": ["A", "B", "E_qa"]},
        {
            "epoch": 2,
            "kind": "revise",
            "changes": [
                change("E_qa", Rule.CONTRADICTED, ["F_audit"], "refuted"),
                change("A", Rule.SUPPORT_LOST, ["B", "E_qa"], "superseded", "rival B still supported"),
                change("B", Rule.PROMOTED, ["A"], "alive", "best-supported rival"),
            ],
        },
    ]
    said = "superseded: lost its supporting evidence (E_qa); rival B promoted (rival B still supported)"
    assert history(entries, "A")["events"][-1]["text"] == said
    assert why_index(entries)["A"] == f"epoch 2: {said}"


def test_a_node_found_never_true_in_valid_time_does_not_call_its_alive_antecedents_dead():
    # as core.validity.settle_ends records it: every antecedent (X stays alive), K invalidated
    detail = "its support never held while it did: it was never true"
    entries = [
        {"epoch": 1, "kind": "load", "added": ["K"]},
        {
            "epoch": 2,
            "kind": "revise",
            "changes": [
                {
                    "key": "K",
                    "rule": Rule.JUSTIFICATION_LOST,
                    "cause": ["E40", "X"],
                    "detail": detail,
                    "before": {"state": "superseded", "weight": 0.5},
                    "after": {"state": "invalidated", "weight": 0.0},
                }
            ],
        },
    ]
    text = history(entries, "K")["events"][-1]["text"]
    assert "now dead" not in text and text == f"invalidated: it rested on E40, X, but {detail}", text
    assert why_index(entries)["K"] == f"epoch 2: {text}"
