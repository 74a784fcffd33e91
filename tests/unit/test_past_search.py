"""A past epoch's vector search, pure (memory_core/ops/history.py): ``_nearest`` finds with numpy
the rows that can be among the nearest, then ranks them by ``cosine_distance`` as the search
always did (every row's distance, sorted by distance, then id): the same rows, distances and
order, ties and zero vectors included; ``_stored_rows`` / ``_past_vectors`` take a stored
row's vector for a past row only when the row's text is the past row's text."""

from __future__ import annotations

import random

import numpy as np

from memory_core.judging.retrieval import cosine_distance
from memory_core.ops.history import _nearest, _past_vectors, _stored_rows


def every_distance(vector, rows, matrix, limit):
    """The search as it was: every row's distance, sorted by (distance, id) (a row that is the
    query's vector rounded to float32 was the query's own vector when every text was embedded)."""
    rounded = np.asarray(vector, dtype=np.float32).astype(np.float64).tolist()
    hits = sorted(
        (
            (
                cosine_distance(vector, vector if matrix[k].tolist() == rounded else matrix[k].tolist()),
                rows[k][0],
            )
            for k in range(len(rows))
        ),
        key=lambda h: (h[0], h[1]),
    )
    return hits[:limit]


def test_the_nearest_rows_are_those_every_distance_ranks_first():
    rng = random.Random(7)
    width = 24
    base = [[rng.uniform(-1, 1) for _ in range(width)] for _ in range(300)]
    # ties: the same vector under several ids, and scaled copies (same cosine); a zero vector
    base += [base[3]] * 4 + [[2 * x for x in base[5]]] + [[0.0] * width]
    rows = [(f"n{k:03d}", f"text {k}") for k in rng.sample(range(len(base)), len(base))]
    matrix = np.asarray(base, dtype=np.float32).astype(np.float64)
    for query in [base[3], base[5], [rng.uniform(-1, 1) for _ in range(width)], [0.0] * width]:
        for limit in (1, 5, 32, len(rows), len(rows) + 3):
            got = [(h.score, h.id) for h in _nearest(query, rows, matrix, limit)]
            assert got == every_distance(query, rows, matrix, limit), (limit, query[:2])


def test_a_stored_row_of_the_searched_text_is_ranked_by_the_texts_own_vector():
    """The store keeps a vector as float32: the row of the text searched for is ranked by the
    query's own vector (its distance as when every past text was embedded again, -0.0 here
    where the float32 row would give about 1e-8), ties by id."""
    rng = random.Random(3)
    query = [rng.uniform(-1, 1) for _ in range(16)]
    others = [[rng.uniform(-1, 1) for _ in range(16)] for _ in range(40)]
    rows = [(f"n{k:02d}", f"text {k}") for k in range(42)]
    matrix = np.asarray([query] + others + [query], dtype=np.float32).astype(np.float64)
    for limit in (3, 50):
        hits = _nearest(query, rows, matrix, limit)
        assert [h.id for h in hits[:2]] == ["n00", "n41"]
        assert hits[0].score == hits[1].score == cosine_distance(query, query)
        assert hits[2].score == cosine_distance(query, matrix[int(hits[2].id[1:])].tolist())


def test_a_stored_vector_serves_only_a_row_of_the_same_text():
    stored_texts = ["alpha now", "beta", "beta"]
    stored = np.asarray([[1, 0], [0, 1], [0, 1]], dtype=np.float32)
    # "a" had another text then than its stored row has now; "c" has no row, but its text is stored
    rows = [("a", "alpha then"), ("b", "beta"), ("c", "beta"), ("d", "delta")]
    found, missing = _stored_rows(rows, stored_texts, stored)
    assert found == [-1, 1, 1, -1] and missing == ["alpha then", "delta"]
    fresh = {"alpha then": [0.1, 0.2], "delta": [0.3, 0.4]}
    past = _past_vectors(rows, stored_texts, stored, found, fresh)
    assert past.matrix.dtype == np.float64 and past.vector("a") == [0.1, 0.2]  # the model's own
    assert past.vector("b") == past.vector("c") == [0.0, 1.0] and past.vector("x") is None
    # nothing stored (another backend): everything embedded
    found, missing = _stored_rows(rows, [], None)
    assert found == [-1] * 4 and missing == ["alpha then", "beta", "delta"]
