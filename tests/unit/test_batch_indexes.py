"""The indexes a batch keeps so each fact does not rescan everything before it: they must
give exactly what the full scans they replace gave."""

import numpy as np

from memory_core.core.beliefs import BeliefView, Edge, Node
from memory_core.core.tms import remove_edge
from memory_core.core.vocabulary import DISPUTES, SUPERSEDES, SUPPORTS
from memory_core.judging.retrieval import _k_smallest


def test_k_smallest_is_a_stable_sorts_first_k():
    # values drawn from a few levels (many ties), a NaN now and then (sorted last)
    rng = np.random.default_rng(11)
    for _ in range(5000):
        n, k = int(rng.integers(1, 50)), int(rng.integers(0, 12))
        row = rng.integers(0, 5, n).astype(float) / 4
        if rng.random() < 0.2:
            row[rng.integers(0, n)] = np.nan
        assert _k_smallest(row, k) == np.argsort(row, kind="stable")[:k].tolist(), (row.tolist(), k)


def test_the_views_disputes_edges_follow_every_add_and_removal():
    rng = np.random.default_rng(5)
    keys = [f"E{i}" for i in range(6)]
    view = BeliefView({k: Node(k, "evidence") for k in keys}, [Edge(DISPUTES, "E0", "E1")])
    for _ in range(400):
        if view.edges and rng.random() < 0.4:
            remove_edge(view, view.edges[int(rng.integers(0, len(view.edges)))])
        else:
            kind = (DISPUTES, SUPERSEDES, SUPPORTS)[int(rng.integers(0, 3))]
            a, b = rng.choice(keys, 2, replace=False).tolist()
            view.add_edge(Edge(kind, a, b))
        assert view.dispute_edges() == [e for e in view.edges if e.kind == DISPUTES]


def test_a_batchs_nearest_earlier_facts_equal_a_product_per_fact():
    """:class:`EarlierFacts` computes a block of facts' products at once: the nearest earlier
    facts (and their distances) equal those of one product per fact, duplicates included."""
    from memory_core.judging.retrieval import EarlierFacts

    rng = np.random.default_rng(2)
    base = rng.normal(size=(40, 16))
    n = 3 * EarlierFacts.BLOCK + 7
    vectors = {
        i: (
            base[rng.integers(0, 40)] + (0 if rng.random() < 0.5 else rng.normal(scale=0.3, size=16))
        ).tolist()
        for i in range(n)
    }
    earlier = EarlierFacts([(f"K{i}", f"fact {i}", None, False) for i in range(n)], vectors)
    assert earlier.units is not None
    for i in list(range(n)) + [5, n - 1, 200]:  # in order, then back (another block again)
        row = 1.0 - earlier.units[:i] @ earlier.units[i]
        want = [
            (j, float(row[j])) for j in sorted(np.argsort(row, kind="stable")[:8].tolist()) if row[j] < 0.55
        ]
        got = earlier.near(i, 8, 0.55)
        assert [j for j, _ in got] == [j for j, _ in want], i
        assert all(abs(a - b) < 1e-12 for (_, a), (_, b) in zip(got, want)), i
