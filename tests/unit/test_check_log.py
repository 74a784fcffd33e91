"""check's own oracles (memory_core/ops/check_log.py), pure: the well-founded labelling
computed without the cascade, and the forget rules verified against a revision log.

The logs here have the shape FALSIFY writes (every entry embeds its intent); the
first one is the log a partial-view bug wrote (the second revision forgot ``a`` although
``F1``, alive, supersedes it)."""

from __future__ import annotations

from typing import Optional

import pytest

from memory_core.core.beliefs import Edge
from memory_core.core.cascade import unfounded
from memory_core.core.beliefs import BeliefView, Node
from memory_core.ops.check_log import forget_problems, replay, restore_entries, unfounded_alive, well_founded


def dep(src, dst, group=None, groups=None, critical=True):
    return Edge("depends_on", src, dst, critical=critical, group=group, groups=groups)


def test_well_founded_premises_chains_and_cycles():
    states = {"a": "alive", "b": "refuted", "k1": "alive", "k2": "alive", "k3": "alive", "k4": "alive"}
    edges = [
        dep("k1", "a"),
        dep("k2", "k1"),  # chain on an alive premise: founded
        dep("k3", "k4"),
        dep("k4", "k3"),
    ]  # a cycle holding itself up: unfounded
    assert well_founded(states, edges) == {"a", "k1", "k2"}
    assert unfounded_alive(states, edges) == {"k3", "k4"}
    # a cycle with a way out is founded
    assert unfounded_alive(states, edges + [dep("k4", "a", group="out")]) == set()


def test_well_founded_groups_and_shared_antecedents():
    # BPS ex1: g <- (a, e) | (d, e), e shared by both justifications (one edge, two groups)
    edges = [dep("g", "a", "j3"), dep("g", "d", "j4"), dep("g", "e", "j3", groups=("j3", "j4"))]
    alive = {k: "alive" for k in "adeg"}
    assert "g" in well_founded(dict(alive, a="refuted"), edges)  # through (d, e)
    assert "g" not in well_founded(dict(alive, e="refuted"), edges)  # e was in both
    assert "g" not in well_founded(dict(alive, a="refuted", d="refuted"), edges)
    # non-critical edges do not justify and do not block
    assert "g" in well_founded({"g": "alive", "x": "refuted"}, [dep("g", "x", critical=False)])


def test_well_founded_agrees_with_the_cascade_on_a_mixed_graph():
    states = {"e1": "alive", "e2": "refuted", "c1": "alive", "c2": "alive", "c3": "alive", "c4": "alive"}
    edges = [
        dep("c1", "e1", "x"),
        dep("c1", "e2", "y"),
        dep("c2", "c1"),
        dep("c2", "e2", "z"),
        dep("c3", "c4"),
        dep("c4", "c3"),
        dep("c4", "e2", "w"),
    ]
    view = BeliefView()
    for key, state in states.items():
        view.add_node(Node(key, "evidence" if key.startswith("e") else "conclusion", state=state))
    for edge in edges:
        view.add_edge(edge)
    alive = {k for k, n in view.nodes.items() if n.alive and view.justifications(k)}
    assert unfounded_alive(states, edges) == unfounded(view, alive) == {"c3", "c4"}


def node(kind, key, state="alive", epoch=1, edges=()):
    ident = f"id-{key}"
    return {
        "id": ident,
        "kind": kind,
        "key": key,
        "props": {"key": key},
        "state": state,
        "epoch": epoch,
        "weight": 0.5,
        "edges": [list(e) for e in edges],
    }


def edge(src, dst, rel, **props):
    return [f"id-{src}", f"id-{dst}", rel, props]


def update(key, before, after, epoch):
    return {
        "id": f"id-{key}",
        "key": key,
        "before": {"state": before, "epoch": 1, "weight": 0.5, "confidence": None},
        "after": {"state": after, "epoch": epoch, "weight": 0.0, "confidence": None},
    }


LOAD = {
    "epoch": 1,
    "kind": "load",
    "changes": [],
    "intent": {
        "epoch": 1,
        "add_nodes": [
            node("question", "Q"),
            node("evidence", "a", edges=[edge("a", "Q", "part_of")]),
            node("evidence", "b", edges=[edge("b", "Q", "part_of")]),
            node("conclusion", "c", edges=[edge("c", "Q", "part_of")]),
        ],
        "add_edges": [
            edge("c", "a", "depends_on", critical=True, group="j1"),
            edge("c", "b", "depends_on", critical=True, group="j2"),
        ],
    },
}
R1 = {
    "epoch": 2,
    "kind": "revise",
    "new_evidence": "F1",
    "changes": [{"key": "a"}],
    "forgotten": [],
    "intent": {
        "epoch": 2,
        "add_nodes": [node("evidence", "F1", epoch=2, edges=[edge("F1", "a", "supersedes")])],
        "updates": [update("a", "alive", "refuted", 2)],
    },
}


def r2(forgotten):
    tomb = {
        "a": node(
            "evidence",
            "a",
            "refuted",
            2,
            [edge("c", "a", "depends_on"), edge("F1", "a", "supersedes"), edge("a", "Q", "part_of")],
        ),
        "c": node(
            "conclusion",
            "c",
            "invalidated",
            3,
            [edge("c", "a", "depends_on"), edge("c", "b", "depends_on"), edge("c", "Q", "part_of")],
        ),
    }
    return {
        "epoch": 3,
        "kind": "revise",
        "new_evidence": "F2",
        "changes": [{"key": "b"}, {"key": "c"}],
        "forgotten": forgotten,
        "intent": {
            "epoch": 3,
            "add_nodes": [node("evidence", "F2", epoch=3, edges=[edge("F2", "b", "supersedes")])],
            "updates": [update("b", "alive", "refuted", 3), update("c", "alive", "invalidated", 3)],
            "del_nodes": [tomb[k] for k in forgotten],
        },
    }


def stored(**nodes):
    return {f"id-{k}": {"key": k, "state": s, "epoch": e} for k, (s, e) in nodes.items()}


def test_the_log_of_issue_12s_bug_is_caught_and_a_is_restored_with_its_edge():
    log = replay([LOAD, R1, r2(["a", "c"])])
    now = stored(Q=("alive", 1), b=("refuted", 3), F1=("alive", 2), F2=("alive", 3))
    edges = [tuple(edge("F2", "b", "supersedes"))]
    problems, restore, forget = forget_problems(log, now, edges)
    assert problems == [
        "a was forgotten at epoch 3, but alive F1 supersede(s) or consume(s) it (forget rules (b)/(c))"
    ]
    assert forget == []
    (entry,) = restore_entries(restore, set(now))
    assert (entry["key"], entry["state"], entry["epoch"]) == ("a", "refuted", 2)
    # the edges back to stored nodes come back; the one to forgotten c does not
    assert sorted(tuple(e[:3]) for e in entry["edges"]) == [
        ("id-F1", "id-a", "supersedes"),
        ("id-a", "id-Q", "part_of"),
    ]


def test_the_right_log_is_clean_and_a_node_deleted_behind_its_back_is_named():
    log = replay([LOAD, R1, r2(["c"])])
    now = stored(Q=("alive", 1), a=("refuted", 2), b=("refuted", 3), F1=("alive", 2), F2=("alive", 3))
    edges = [tuple(edge("F1", "a", "supersedes")), tuple(edge("F2", "b", "supersedes"))]
    assert forget_problems(log, now, edges) == ([], {}, [])
    del now["id-a"]
    problems, restore, _ = forget_problems(log, now, edges[1:])
    assert problems == [
        "a is missing from the graph, but the revision log says it exists (refuted, last written at "
        "epoch 2); alive F1 supersede(s) or consume(s) it"
    ]
    assert restore["id-a"]["state"] == "refuted"


def r3(f3_state: str, forgotten: Optional[list] = None) -> dict:
    """Epoch 4: new evidence F3 (stored ``f3_state``) refutes F1."""
    entry = {
        "epoch": 4,
        "kind": "revise",
        "new_evidence": "F3",
        "changes": [{"key": "F1"}],
        "intent": {
            "epoch": 4,
            "add_nodes": [node("evidence", "F3", f3_state, 4, edges=[edge("F3", "F1", "supersedes")])],
            "updates": [update("F1", "alive", "refuted", 4)],
        },
    }
    if forgotten is not None:
        entry["forgotten"] = forgotten
    return entry


def test_an_orphan_a_revision_should_have_forgotten_is_named_and_a_load_time_one_is_not():
    log = replay([LOAD, R1, r2(["c"])])
    # F1 refuted later by F3: a (refuted, nothing alive needs it) was in that revision's reach
    log.apply(r3("alive", forgotten=["a"]))
    now = stored(
        Q=("alive", 1),
        a=("refuted", 2),
        b=("refuted", 3),
        F1=("refuted", 4),
        F2=("alive", 3),
        F3=("alive", 4),
    )
    edges = [
        tuple(edge("F1", "a", "supersedes")),
        tuple(edge("F2", "b", "supersedes")),
        tuple(edge("F3", "F1", "supersedes")),
    ]
    problems, _, forget = forget_problems(log, now, edges)
    assert problems == [
        "a is refuted and nothing alive (or superseded in time) consumes or supersedes it, but the revision of epoch 4 "
        "(which changed F1) did not forget it"
    ]
    assert forget == ["id-a"]
    # a conclusion a load put in invalidated (its antecedent was dead already): no revision reached it
    load2 = {
        "epoch": 5,
        "kind": "load",
        "changes": [{"key": "k"}],
        "intent": {
            "epoch": 5,
            "add_nodes": [node("conclusion", "k", "invalidated", 5)],
            "add_edges": [edge("k", "b", "depends_on")],
        },
    }
    log = replay([LOAD, R1, r2(["c"]), load2])
    now = stored(
        Q=("alive", 1),
        a=("refuted", 2),
        b=("refuted", 3),
        F1=("alive", 2),
        F2=("alive", 3),
        k=("invalidated", 5),
    )
    edges = [
        tuple(edge("F1", "a", "supersedes")),
        tuple(edge("F2", "b", "supersedes")),
        tuple(edge("k", "b", "depends_on")),
    ]
    assert forget_problems(log, now, edges) == ([], {}, [])


def test_a_dead_node_a_value_superseded_in_time_defeated_is_its_history_not_an_orphan():
    """As forget keeps it: a refuted node whose only superseder is superseded in time (it was
    true) is not an orphan a revision should have forgotten; superseded without an interval
    (a hypothesis that lost, a value replaced outright) needs nothing."""
    log = replay([LOAD, R1, r2(["c"])])
    log.apply(r3("superseded"))
    edges = [
        tuple(edge("F1", "a", "supersedes")),
        tuple(edge("F2", "b", "supersedes")),
        tuple(edge("F3", "F1", "supersedes")),
    ]
    # a (superseded by F1 only, dead) is an orphan either way
    for historical, named in ((True, ["a"]), (False, ["F1", "a"])):
        now = stored(Q=("alive", 1), a=("refuted", 2), b=("refuted", 3), F1=("refuted", 4), F2=("alive", 3))
        now["id-F3"] = {"key": "F3", "state": "superseded", "epoch": 4, "historical": historical}
        problems, _, forget = forget_problems(log, now, edges)
        assert [p.split()[0] for p in problems] == named, problems
        assert forget == [f"id-{k}" for k in named]


def test_an_undone_revision_is_replayed_back():
    undo = {
        "epoch": 4,
        "kind": "undo",
        "undoes": 3,
        "changes": [],
        "intent": {
            "epoch": 4,
            "add_nodes": r2(["c"])["intent"]["del_nodes"],
            "del_nodes": r2(["c"])["intent"]["add_nodes"],
            "updates": [
                dict(u, before=u["after"], after=u["before"]) for u in r2(["c"])["intent"]["updates"]
            ],
        },
    }
    log = replay([LOAD, R1, r2(["c"]), undo])
    assert set(log.nodes) == {"id-Q", "id-a", "id-b", "id-c", "id-F1"}
    assert log.nodes["id-b"]["state"] == "alive" and log.nodes["id-c"]["state"] == "alive"
    assert 3 in log.undone


def test_a_node_an_undo_removed_is_not_a_wrong_forget():
    # a losing fact recorded refuted, superseded by the evidence it attacked (the policies'
    # policies); undoing that revision removes the fact: the edge from alive E goes with it
    load = {
        "epoch": 1,
        "kind": "load",
        "changes": [],
        "intent": {"epoch": 1, "add_nodes": [node("evidence", "E")]},
    }
    lost = {
        "epoch": 2,
        "kind": "revise",
        "new_evidence": "F",
        "changes": [{"key": "F"}],
        "intent": {
            "epoch": 2,
            "add_nodes": [node("evidence", "F", "refuted", 2, [edge("E", "F", "supersedes")])],
        },
    }
    undo = {
        "epoch": 3,
        "kind": "undo",
        "undoes": 2,
        "changes": [],
        "intent": {"epoch": 3, "add_nodes": [], "del_nodes": lost["intent"]["add_nodes"], "updates": []},
    }
    assert forget_problems(replay([load, lost, undo]), stored(E=("alive", 1)), []) == ([], {}, [])
    # the same deletion by a revision would be a broken forget rule (c)
    forgot = dict(undo, kind="revise", forgotten=["F"])
    problems, _, _ = forget_problems(replay([load, lost, forgot]), stored(E=("alive", 1)), [])
    assert problems == [
        "F was forgotten at epoch 3, but alive E supersede(s) or consume(s) it (forget rules (b)/(c))"
    ]


def test_a_consumer_that_came_back_later_does_not_make_a_dead_forgotten_node_a_violation():
    """c consumed a; both were dead when a was forgotten at epoch 3. If c holds again at
    epoch 5 through another justification, a stays dead and forgotten: not a problem.
    The same c alive since before the forget is the violation above."""
    log = replay([LOAD, R1, r2(["a", "c"])])
    later = stored(Q=("alive", 1), b=("refuted", 3), F1=("dead", 2), F2=("alive", 3), c=("alive", 5))
    later["id-F1"]["state"] = "refuted"
    edges = [tuple(edge("F2", "b", "supersedes"))]
    assert [p for p in forget_problems(log, later, edges)[0] if p.startswith("a ")] == []
    before = dict(later, **{"id-c": {"key": "c", "state": "alive", "epoch": 1}})
    assert [p for p in forget_problems(log, before, edges)[0] if p.startswith("a ")] == [
        "a was forgotten at epoch 3, but alive c supersede(s) or consume(s) it (forget rules (b)/(c))"
    ]


# ---- lost history: the log against falsify.json and the stored epochs --------------------
def test_history_whole_gapped_short_and_acknowledged():
    from memory_core.ops.check import history_problems as check_history

    log = lambda *epochs: [{"epoch": e, "kind": "revise"} for e in epochs]

    def history_problems(entries, meta, stored):  # (problems, lost) of (problems, lost, gaps)
        return check_history(entries, meta, stored)[:2]

    assert history_problems(log(1, 2, 3), 3, 3) == ([], [])
    assert history_problems(log(1, 2, 3), 2, 1) == (
        [],
        [],
    )  # falsify.json one behind: a crash before its update
    assert history_problems([], 0, 0) == ([], [])
    assert history_problems(log(1, 2, 2, 3), 3, 3) == ([], [])  # a duplicated line loses nothing
    problems, lost = history_problems(log(1, 3), 3, 3)
    assert lost == [[2, 2]] and "no entry for epoch 2" in problems[0]
    problems, lost = history_problems([], 2, 2)  # emptied or deleted
    assert (
        lost == [[1, 2]]
        and "falsify.json says epoch 2" in problems[0]
        and "is empty or missing" in problems[0]
    )
    problems, lost = history_problems(log(1), 2, 2)  # the last line cut
    assert lost == [[2, 2]] and "ends at epoch 1" in problems[0]
    problems, lost = history_problems(log(1), 0, 4)  # falsify.json gone too: the stores still tell
    assert lost == [[2, 4]] and "stored nodes carry epoch 4" in problems[0]
    repaired = log(1) + [{"epoch": 3, "kind": "repair", "lost_epochs": [[2, 2]]}]
    assert history_problems(repaired, 3, 2) == ([], [])
    fake = log(1) + [{"epoch": 3, "kind": "revise", "lost_epochs": [[2, 2]]}]  # only a repair records a gap
    assert history_problems(fake, 3, 2)[1] == [[2, 2]]
    odd = [{"epoch": "x"}, {"kind": "revise"}, "not a dict", {"epoch": True}] + log(1)
    assert history_problems(odd, 1, 1) == ([], [])
    # the gaps, acknowledged or not (a node the log says exists may have been forgotten in one)
    assert check_history(repaired, 3, 2)[2] == [[2, 2]]


def test_absurd_epochs_cost_constant_memory():
    """An epoch of 10**30 in falsify.json, or a gap that large in the log, is worked on as a
    range: never one item per epoch (the check would need ~20 GB)."""
    import tracemalloc

    from memory_core.ops.check import history_problems

    tracemalloc.start()
    try:
        problems, lost, gaps = history_problems([{"epoch": 1}, {"epoch": 2**52}], 2**53 - 1, 3)
        repaired = [{"epoch": 1}, {"epoch": 2**53 - 1, "kind": "repair", "lost_epochs": [[2, 2**53 - 2]]}]
        assert history_problems(repaired, 0, 0)[:2] == ([], [])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lost == [[2, 2**52 - 1], [2**52 + 1, 2**53 - 1]] and gaps == lost
    assert peak < 1 << 20, peak
    # beyond what any log could hold: not lost history (damage, named by check from the meta file)
    assert history_problems([{"epoch": 1}], 10**30, 1)[:2] == ([], [])


def test_an_unwritable_root_is_one_error(tmp_path):
    from memory_core.core.errors import FalsifyError
    from memory_core.store.lock import RootNotWritable, WriterLock

    (tmp_path / "file").write_text("")
    with pytest.raises(RootNotWritable) as raised:
        WriterLock(tmp_path / "file" / "writer.lock").acquire(timeout=0)
    assert isinstance(raised.value, FalsifyError) and "is not writable" in str(raised.value)


def test_redaction_masks_every_secret_form():
    from memory_core.store.environment import redact, redact_argv

    secret = "Zq9-sekret-Zq9"
    text = (
        f"postgresql://alice:{secret}@h:5432/db mysql+pymysql://u:{secret}@x/y --token {secret} "
        f"--token={secret} Authorization: Bearer {secret}"
    )
    assert secret not in redact(text) and "postgresql://alice:***@h:5432/db" in redact(text)
    assert redact_argv(["serve", "--token", secret, f"--database=postgresql://a:{secret}@h/d"]) == [
        "serve",
        "--token",
        "***",
        "--database=postgresql://a:***@h/d",
    ]
