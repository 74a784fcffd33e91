"""FALSIFY benchmarks (``python -m bench.mquake``): real stores in temporary roots.

The FALSIFY processes a benchmark starts run cold, as each benchmark documents, unless it
measures the warm launcher itself (``bench.startup`` turns it on for its own runs, in a
runtime directory of its own): a benchmark neither measures nor leaves behind a launcher.
"""

import os

os.environ.setdefault("FALSIFY_LAUNCHER", "0")
