"""Rewinding the revision log past a repair (memory_core.ops.history: read_log, as_logged,
rewind, lost_after), on written logs: a repair's restoring changes go back to what the log
said before it, its corrections of FALSIFY's own states are inverted as logged."""

from __future__ import annotations

import copy

from memory_core.ops.history import Graph, as_logged, lost_after, read_log, rewind


def node(ident: str, epoch: int, state: str = "alive", **props) -> dict:
    return {
        "id": ident,
        "kind": "evidence",
        "key": ident.upper(),
        "props": dict(props, type="Evidence", key=ident.upper()),
        "state": state,
        "epoch": epoch,
        "weight": 0.5,
        "edges": [],
    }


def update(ident: str, before: dict, after: dict) -> dict:
    same = {"weight": 0.5, "confidence": None}
    return {"id": ident, "key": ident.upper(), "before": dict(same, **before), "after": dict(same, **after)}


def entry(epoch: int, kind: str, **intent) -> dict:
    return {"epoch": epoch, "kind": kind, "changes": [], "intent": dict(intent, epoch=epoch)}


def play(log: list[dict]) -> list[Graph]:
    """The graph after each epoch (index = epoch), by applying the intents forward."""
    graphs, graph = [Graph()], Graph()
    for e in log:
        graph.apply(e["intent"])
        graphs.append(copy.deepcopy(graph))
    return graphs


def at(present: Graph, log: list[dict], epoch: int) -> Graph:
    _, before_repairs = read_log(log, epoch)
    return rewind(copy.deepcopy(present), reversed(log), epoch, before_repairs)


def fields(graph: Graph) -> dict:
    return {
        i: (p["truth_alignment"][0], p["truth_epoch"], p.get("valid_to"))
        for i, p in sorted(graph.nodes.items())
    }


def test_a_restoring_repair_is_rewound_to_the_log_not_to_the_damage():
    log = [
        entry(1, "load", add_nodes=[node("a", 1, valid_to="2012-01-01"), node("b", 1), node("c", 1)]),
        entry(
            2,
            "revise",
            updates=[update("b", {"state": "alive", "epoch": 1}, {"state": "refuted", "epoch": 2})],
        ),
    ]
    logged = play(log)
    # behind FALSIFY's back: a deleted, b's valid_to changed, c's epoch made absurd; then repairs
    present = copy.deepcopy(logged[2])
    del present.nodes["a"]
    present.nodes["b"]["valid_to"] = "1999-01-01"
    present.nodes["c"]["truth_epoch"] = 10**30
    repairs = [
        entry(3, "repair", add_nodes=[node("a", 1, valid_to="2012-01-01")]),
        entry(
            4,
            "repair",
            updates=[
                update(
                    "b",
                    {"state": "refuted", "epoch": 2, "valid_to": "1999-01-01"},
                    {"state": "refuted", "epoch": 2, "valid_to": None},
                )
            ],
        ),
        entry(
            5, "repair", updates=[update("c", {"state": "alive", "epoch": 0}, {"state": "alive", "epoch": 5})]
        ),
    ]
    for e in repairs:
        present.apply(e["intent"])
    log += repairs
    assert fields(present)["a"] == ("alive", 1, "2012-01-01") and fields(present)["c"] == ("alive", 5, None)
    for epoch in (0, 1, 2):
        assert fields(at(present, log, epoch)) == fields(logged[epoch]), epoch
    assert "a" in at(present, log, 3).nodes and fields(at(present, log, 4))["c"] == ("alive", 1, None)


def test_a_repair_of_falsifys_own_state_is_inverted_as_logged():
    log = [
        entry(1, "load", add_nodes=[node("a", 1), node("b", 1)]),
        # FALSIFY's own writes: a forgotten (wrongly), b set alive (wrongly)
        entry(2, "revise", del_nodes=[node("a", 1)]),
        entry(
            3,
            "revise",
            updates=[update("b", {"state": "alive", "epoch": 1}, {"state": "refuted", "epoch": 3})],
        ),
    ]
    logged = play(log)
    repairs = [
        entry(4, "repair", add_nodes=[node("a", 1)]),  # from its tombstone
        entry(
            5,
            "repair",
            updates=[update("b", {"state": "refuted", "epoch": 3}, {"state": "alive", "epoch": 5})],
        ),
        entry(6, "repair", del_nodes=[node("b", 5)]),  # a missed orphan forgotten
    ]
    present = copy.deepcopy(logged[3])
    for e in repairs:
        present.apply(e["intent"])
    log += repairs
    for epoch in (0, 1, 2, 3):
        assert fields(at(present, log, epoch)) == fields(logged[epoch]), epoch
    assert fields(at(present, log, 5)) == {"a": ("alive", 1, None), "b": ("alive", 5, None)}


def test_read_log_records_what_the_log_held_before_each_repair_after_the_epoch():
    log = [
        entry(1, "load", add_nodes=[node("a", 1, valid_to="2012-01-01")]),
        entry(
            2,
            "revise",
            updates=[update("a", {"state": "alive", "epoch": 1}, {"state": "refuted", "epoch": 2})],
        ),
        entry(3, "repair", add_nodes=[node("a", 2)], updates=[]),
        entry(4, "revise", del_nodes=[node("a", 2)]),
        entry(5, "repair", add_nodes=[node("a", 2)]),
    ]
    lost, before = read_log(log, 2)
    assert lost == []
    assert before[3]["a"] == {
        "state": "refuted",
        "epoch": 2,
        "weight": 0.5,
        "confidence": None,
        "valid_to": "2012-01-01",
    }
    assert before[5] == {"a": None}  # forgotten by the log: the restore is inverted
    assert read_log(log, 4)[1] == {5: {"a": None}}
    assert as_logged(log[4]["intent"], before[5])["add_nodes"] == log[4]["intent"]["add_nodes"]
    assert as_logged(log[2]["intent"], before[3])["add_nodes"] == []


def test_lost_spans_after_the_epoch_are_found_as_before():
    log = [
        {"epoch": 4, "kind": "load", "intent": {"epoch": 4}},
        {"epoch": 5, "kind": "repair", "lost_epochs": [[1, 3]], "intent": {"epoch": 5}},
        {"epoch": 6, "kind": "repair", "lost_epochs": [[5, 5], [2, 2]], "intent": {"epoch": 6}},
    ]
    assert lost_after(log, 0) == [[1, 3], [5, 5], [2, 2]]
    assert lost_after(log, 2) == [[1, 3], [5, 5]]
    assert lost_after(log, 3) == [[5, 5]]
    assert lost_after(log, 5) == [] and read_log(log, 5) == ([], {})
