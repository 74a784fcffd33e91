"""Task 2: read the part of the graph the batch can touch into one in-memory view.

The seeds are every candidate any fact might act on; the store reads their
dependents, the hypotheses they support and those hypotheses' rivals, with
every node one edge away (``BeliefStore.affected_view``). The view's nodes as
they were before the batch are kept: they are the intent's before-images.
"""

from __future__ import annotations

from memory_core.core.beliefs import BeliefView
from memory_core.core.identity import node_id
from memory_core.core.policy import TRUST_RANKED
from memory_core.store.tms_io import reconciliation_inputs
from memory_core.tasks.batch import RevisionBatch
from memory_core.tasks.timing import timed


@timed("collect_belief_subgraph")
async def _collect(batch: RevisionBatch) -> None:
    if batch.options.dry_run:
        return
    new = batch.new_keys  # a fact already recorded names stored evidence a later fact may act on
    seeds = sorted(
        {
            node_id("evidence", c.key)
            for j in batch.jobs
            if j.detection
            for c in j.detection.candidates
            if c.key not in new
        }
    )
    # the hypotheses the caller named (supports/refutes), read with their rivals
    named = sorted(
        {node_id("hypothesis", j.request.hypothesis[1]) for j in batch.jobs if j.request.hypothesis}
    )
    batch.view = (
        await batch.stores.store.affected_view(seeds, hypotheses=named) if seeds or named else BeliefView()
    )
    # what supersedes/disputes reach (reinstatement), forgotten nodes as ghosts,
    # the policies and trust that decide each contradiction
    wanted = set(seeds)
    contradicted = {c.key for j in batch.jobs if j.detection for c in j.detection.candidates}
    trust_asked = any(r.trust is not None or r.policy == TRUST_RANKED for r in batch.requests)
    found = await reconciliation_inputs(
        batch.stores,
        batch.view,
        [k for k, n in batch.view.nodes.items() if node_id(n.kind, k) in wanted],
        contradicted,
        trust_asked,
    )
    batch.reconciliation = found
    batch.ghosts, batch.memory = found.ghosts.tombstones, found.ghosts.memory
    batch.memory_from_log = found.ghosts.from_log
    batch.registered = dict(found.registered)  # later facts of the batch learn the sources it registers
    batch.snapshot_original()
    for key in batch.ghosts:  # not stored: a ghost that comes back is re-added from its tombstone
        batch.original.pop(key, None)


async def collect_belief_subgraph(batches, ctx=None):
    return await _collect(batches)
