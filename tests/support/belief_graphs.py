"""Hypothesis strategies over :mod:`bench.graphs` (random belief graphs in the
investigation format) for the property tests; hypothesis drives the generator's
random choices, so a failing case is reproduced and shrunk like any other."""

from __future__ import annotations

from hypothesis import strategies as st

from bench.graphs import loaded_model, pick_target, random_investigation  # noqa: F401  (re-exported)


def investigations(prefix: str = "", shared: bool = False, **limits):
    return st.builds(
        lambda rng: random_investigation(rng, prefix=prefix, shared=shared, **limits),
        st.randoms(use_true_random=False),
    )


def revision_picks(min_size: int = 1, max_size: int = 5):
    """Indices that pick each revision's target among the evidence stored then."""
    return st.lists(st.integers(0, 10_000), min_size=min_size, max_size=max_size)
