"""MQuAKE-hard revision benchmark: multi-hop consequences of counterfactual edits.

    python -m bench.mquake [--scenario per_case|batch_1|batch_10|batch_100|all_edits]
                           [--limit N] [--judge structured|text] [--replicas 1|10]
                           [--root DIR] [--json] [--out FILE] [--quick] [--full]

Data: ``../shared/bench/out_mquake_hard_beliefs.json`` (relative to the repo
root; ``--data FILE`` or ``$FALSIFY_BENCH_DATA`` point elsewhere): 429 real
MQuAKE-CF cases (4-hop chains), 1,716 counterfactual edits, and the expected
invalidated conclusions of every scenario.

What is loaded (through the product's loader, ``Falsify.load``), per replica
one investigation file:

* one question node;
* every Evidence with ``initially_asserted`` (the 615 hops of the pre-edit
  chains and the 344 facts edits overwrite that lie on no chain), with
  subject/predicate/object = its Wikidata triple, so the structured judge can
  decide;
* the 429 pre-edit Conclusions, each with ``depends_on`` edges (critical, one
  ``group`` per chain: all four hops are needed together) to its hops.

What is NOT loaded, and why: the 770 ``edit_new`` Evidence nodes (the edits'
new facts) are not believed before an edit; the edits add them, through
``app.revise``. The 429 post-edit Conclusions rest on those new facts; the
product has no "not yet asserted" state, so loading them would either assert
the new facts up front (then the edits change nothing) or load conclusions
with dangling support. They are left out; the benchmark scores the pre-edit
conclusions, which is what the scenarios' expected sets describe.

Each edit goes through the real revision pipeline, the same code as
``python main.py revise FACT --triple S|P|O --key K`` (two-gate detection with
the structured judge, the cascade as cognee Tasks, the journalled write). A
pre-edit conclusion counts as invalidated when it is not alive afterwards
(invalidated, or forgotten from both stores). Per-case scenarios start every
case from the loaded graph: after a case, ``app.undo()`` reverts its
revisions one by one (checked: every conclusion and refuted evidence is
alive again and the new facts are gone; at the end the whole graph is
compared with the graph as loaded).

``--judge text`` measures detection with text only: for every edit, is the
evidence it contradicts among gate 1's candidates (``memory_core.judging.detect.gate1``,
limit 5) for the new fact's claim, at the threshold in use and over a sweep.

``--replicas 10`` loads the graph ten times (disjoint keys and subjects,
suffix ``-rN``, each replica its own investigation) and applies the same
revisions to replica 0; every other replica must stay untouched. ``--full``
runs everything ``make bench`` should run, including the x1/x10 scaling pair
(two subprocesses: one process serves one data root).

Every figure printed is measured in the run that prints it.
"""

# the package's parts: dataset.py (the data set as investigation files), runner.py (the
# real product: load, revise, undo, detection study, operation timings), scoring.py
# (precision/recall, pure-core lower bound, whole-graph comparison), report.py (the
# summary), cli.py (arguments, one run per process, x1/x10 scaling children)
from bench.common import (
    REPO,
    disk_usage,
    fmt,
    log,
    machine,
    pct,
    peak_rss_mb,
    save,
    scores,  # noqa: E402,F401
    stdout_to_stderr,
    summary,
)
from bench.mquake.dataset import DEFAULT_DATA, QUESTION, Dataset, Group, data_path  # noqa: E402,F401

__all__ = [
    "DEFAULT_DATA",
    "QUESTION",
    "Dataset",
    "Group",
    "data_path",
    # measuring helpers, re-exported for the benchmarks that import them from here
    "REPO",
    "disk_usage",
    "fmt",
    "log",
    "machine",
    "pct",
    "peak_rss_mb",
    "save",
    "scores",
    "stdout_to_stderr",
    "summary",
]
