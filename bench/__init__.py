"""FALSIFY benchmarks (``python -m bench.mquake``): real stores in temporary roots."""
