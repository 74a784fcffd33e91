"""store.forgotten.ForgottenIndex: following the log entry by entry (as a long-lived
process does) gives exactly what reading the whole log gives (current tombstones and
the Memory of every change), through revisions, reinstatements and undos."""

from __future__ import annotations

from memory_core.store.forgotten import (
    ForgottenIndex,
    current_tombstones,
    forgotten_index,
    memory_of,
    registered_sources,
)


class ListJournal:
    """The two reads ForgottenIndex uses, over a list (a journal's log, in memory)."""

    def __init__(self):
        self.log: list[dict] = []

    def entries(self):
        return iter(list(self.log))

    def entries_backwards(self):
        return iter(list(reversed(self.log)))


def tomb(key, state="invalidated", edges=()):
    return {
        "id": f"id-{key}",
        "kind": "conclusion",
        "key": key,
        "state": state,
        "epoch": 1,
        "weight": 0.0,
        "props": {"key": key, "type": "Conclusion"},
        "edges": [list(e) for e in edges],
    }


def change(key, before, after, rule="justification_lost", cause=()):
    return {
        "key": key,
        "rule": rule,
        "cause": list(cause),
        "before": {"state": before, "weight": 0.5},
        "after": {"state": after, "weight": 0.0 if after != "alive" else 0.5},
    }


ENTRIES = [
    {"epoch": 1, "kind": "load", "intent": {"epoch": 1, "add_nodes": [], "del_nodes": []}},
    {
        "epoch": 2,
        "kind": "revise",
        "changes": [
            change("E1", "alive", "refuted", "contradicted"),
            change("K", "alive", "invalidated"),
            change("B", "alive", "alive", "promoted", ["A"]),
        ],
        "intent": {
            "epoch": 2,
            "del_nodes": [
                tomb("K", edges=[("id-K", "id-E1", "depends_on", {}), ("id-J", "id-K", "depends_on", {})])
            ],
        },
    },
    {
        "epoch": 3,
        "kind": "revise",
        "changes": [change("E2", "alive", "refuted", "contradicted"), change("L", "alive", "invalidated")],
        "intent": {"epoch": 3, "del_nodes": [tomb("L")]},
    },
    {"epoch": 4, "kind": "undo", "undoes": 3, "changes": []},
    {
        "epoch": 5,
        "kind": "revise",
        "changes": [
            change("F1", "alive", "refuted", "contradicted"),
            change("K", "invalidated", "alive", "reinstated"),
        ],
        "restored": ["K"],
        "intent": {
            "epoch": 5,
            "add_nodes": [tomb("K", "alive", edges=[("id-J", "id-K", "depends_on", {})])],
            "del_nodes": [],
        },
    },
    {"epoch": 6, "kind": "undo", "undoes": 5, "changes": []},
    {
        "epoch": 7,
        "kind": "revise",
        "changes": [change("E3", "alive", "refuted", "contradicted"), change("M", "alive", "invalidated")],
        "intent": {
            "epoch": 7,
            "del_nodes": [tomb("M", edges=[("id-N", "id-M", "depends_on", {"group": "g1"})])],
        },
    },
]


def test_following_the_log_equals_reading_it_whole():
    journal = ListJournal()
    for n, entry in enumerate(ENTRIES, 1):
        journal.log.append(entry)
        index = forgotten_index(journal)  # the same object each time, caught up incrementally
        assert index.gone == current_tombstones(ENTRIES[:n]), n
        # the consumer map, built once (n == 1) and then kept up to date entry by entry, equals a fresh one
        fresh = ForgottenIndex().rebuild(ENTRIES[:n])
        for ids in (["id-J"], ["id-N"], ["id-J", "id-N", "id-X"]):
            assert index.antecedents_of(ids) == fresh.antecedents_of(ids), (n, ids)
        assert index._consumers == fresh._consumers, n
        whole = memory_of(ENTRIES[:n])
        assert (index.memory.before_death, index.memory.promotions, index.memory.weakened) == (
            whole.before_death,
            whole.promotions,
            whole.weakened,
        ), n
    assert sorted(index.gone) == ["k", "m"]  # L's forgetting was undone; K's reinstatement was undone
    assert index.gone["k"]["state"] == "invalidated"
    assert sorted(index.antecedents_of(["id-J", "id-N", "id-X"])) == ["K", "M"]


def test_a_rewritten_log_is_read_again():
    journal = ListJournal()
    journal.log = list(ENTRIES)
    index = forgotten_index(journal)
    journal.log = ENTRIES[:2]  # e.g. another root's log behind the same object: epochs went back
    assert forgotten_index(journal) is index and sorted(index.gone) == ["k"]
    assert ForgottenIndex().rebuild(ENTRIES[:2]).gone == index.gone


def test_registered_sources_follow_the_log():
    """The sources registered with --trust, followed entry by entry, equal reading the whole
    log: the first registration wins, an undone one does not count (also when undone later)."""
    entries = [
        {"epoch": 1, "kind": "load"},
        {"epoch": 2, "kind": "revise", "registered_sources": {"reuters": 0.9}},
        {"epoch": 3, "kind": "revise", "registered_sources": {"blog": 0.2, "reuters": 0.5}},
        {"epoch": 4, "kind": "undo", "undoes": 3},
        {"epoch": 5, "kind": "revise", "registered_sources": {"blog": 0.4}},
        {"epoch": 6, "kind": "undo", "undoes": 5},
        {"epoch": 7, "kind": "undo", "undoes": 2},
        {"epoch": 8, "kind": "revise", "registered_sources": {"reuters": 0.7}},
    ]
    journal = ListJournal()
    seen = []
    for n, entry in enumerate(entries, 1):
        journal.log.append(entry)
        got = forgotten_index(journal).registered_sources()
        assert got == registered_sources(entries[:n]), n
        seen.append(got)
    assert seen[2] == {"reuters": 0.9, "blog": 0.2} and seen[3] == {"reuters": 0.9}
    assert seen[4] == {"reuters": 0.9, "blog": 0.4} and seen[6] == {} and seen[7] == {"reuters": 0.7}


def test_a_log_file_unchanged_since_the_last_catch_up_is_not_read_again(tmp_path, monkeypatch):
    """The index is caught up on every revision and recall: an unchanged log file (same size
    and time) is not parsed again (its last entry may be a batch of thousands of facts); one
    that grew is."""
    from memory_core.store.journal import FileJournal

    journal = FileJournal(tmp_path)
    journal.commit({"epoch": 1, "kind": "load", "added": ["K"]})
    index = forgotten_index(journal)
    reads = []
    real = FileJournal.entries_backwards

    def counted(self, *args, **kw):
        reads.append(1)
        return real(self, *args, **kw)

    monkeypatch.setattr(FileJournal, "entries_backwards", counted)
    assert forgotten_index(journal) is index and reads == []
    journal.commit({"epoch": 2, "kind": "revise", "forgotten": ["K"], "intent": {"del_nodes": [tomb("K")]}})
    assert forgotten_index(journal).epoch == 2 and reads


def test_an_edge_between_two_forgotten_nodes_is_in_both_tombstones():
    """R is forgotten with C's edge to it; C, forgotten after, is written from the stores
    without it (R's edges went with R). The index gives C's tombstone the edge, so when R
    comes back (and its tombstone is spent) C still rests on R; an undo of that return puts
    the edge back in R's tombstone, so C is again a consumer of the forgotten R."""
    c_to_r = ("id-C", "id-R", "depends_on", {})
    entries = [
        {"epoch": 1, "kind": "load", "intent": {"epoch": 1, "add_nodes": [], "del_nodes": []}},
        {
            "epoch": 2,
            "kind": "revise",
            "intent": {"del_nodes": [tomb("R", edges=[("id-R", "id-ER", "depends_on", {}), c_to_r])]},
        },
        {
            "epoch": 3,
            "kind": "revise",
            "intent": {"del_nodes": [tomb("C", edges=[("id-C", "id-S", "depends_on", {})])]},
        },
        {
            "epoch": 4,
            "kind": "revise",
            "changes": [change("R", "invalidated", "alive", "reinstated")],
            "restored": ["R"],
            "intent": {"add_nodes": [tomb("R", "alive", edges=[("id-R", "id-ER", "depends_on", {})])]},
        },
        {"epoch": 5, "kind": "undo", "undoes": 4, "changes": []},
    ]
    journal = ListJournal()
    for n, entry in enumerate(entries, 1):
        journal.log.append(entry)
        index = forgotten_index(journal)
        assert index.gone == current_tombstones(entries[:n]), n
        if n >= 3:
            assert list(c_to_r) in index.gone["c"]["edges"], n
    assert list(c_to_r) in index.gone["r"]["edges"]
    assert sorted(index.antecedents_of(["id-C"])) == ["R"]
    assert sorted(ForgottenIndex().rebuild(entries[:4]).gone) == ["c"]
