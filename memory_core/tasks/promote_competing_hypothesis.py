"""Task 4: supersede a hypothesis that lost its support, promote the best-supported
rival (``core.promotion``), for the fact in hand."""

from __future__ import annotations

from memory_core.core import revision
from memory_core.core.beliefs import SUPERSEDED
from memory_core.core.tms import Memory, reinstate_hypotheses
from memory_core.core.vocabulary import SUPPORTS
from memory_core.store.forgotten import forgotten_index
from memory_core.tasks.batch import FactJob
from memory_core.tasks.timing import timed


def memory_for(job: FactJob) -> Memory | None:
    """The batch's memory, or, when a support died under a question holding a superseded
    hypothesis (the rescoring may bring it back with its old weight and undo the promotion
    over it), the log's whole memory followed by the batch's: a revision that reaches no
    attacker reads no memory from the log (``store.tms_io.extend_view``)."""
    batch, plan = job.batch, job.plan
    view = batch.view
    if plan is None or view is None:
        return batch.memory
    questions = {
        view.nodes[e.dst].question
        for k in plan.died + new_supporter(job)
        for e in view.out_edges(k, SUPPORTS)
        if e.dst in view.nodes
    }
    if not any(view.nodes[h].state == SUPERSEDED for q in questions for h in view.hypotheses_of(q)):
        return batch.memory
    log = forgotten_index(batch.stores.journal).memory
    return log.then(batch.memory) if batch.memory is not None else log.copy()


def new_supporter(job: FactJob) -> list[str]:
    """The new fact, when it is alive and supports a hypothesis (``--supports H``)."""
    node, view = job.plan.new_node if job.plan is not None else None, job.batch.view
    if node is None or view is None or not view.nodes[node.key].alive:
        return []
    return [node.key] if view.out_edges(node.key, SUPPORTS) else []


@timed("promote_competing_hypothesis")
async def _promote(job: FactJob) -> None:
    if job.plan is not None:
        memory = memory_for(job)
        job.plan.meta.memory = memory
        revision.promote_competing_hypothesis(job.batch.belief_view, job.plan, memory)
        # a superseded hypothesis the new fact supports holds again, as when its support returns
        supporter = new_supporter(job)
        if supporter:
            reinstate_hypotheses(job.batch.belief_view, job.plan, supporter, memory)


async def promote_competing_hypothesis(jobs, ctx=None):
    return await _promote(jobs)
