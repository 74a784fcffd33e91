"""The pure rules against an independent reference, over sequences of revisions.

The engine (``memory_core.core.revision.plan_revision`` on a ``BeliefView`` of the
whole graph, driven as the store adapter drives it: forgotten nodes kept as
ghosts, the memory of earlier plans passed on) and the reference model
(:mod:`bench.reference`: justifications and attackers built from the raw edges,
three-valued labels of the whole graph by its own alternating fixpoint, orphans
searched over the whole graph) must agree on every node's presence, state,
weight and confidence, and on the stored edges, after every revision. Graphs hold
hypotheses (unequal weights and priors), supports and refutes with unequal weights, loaded
supersedes edges, non-critical edges (decay), alternative justifications, chains, cycles and shared antecedents; the
revisions may target the new facts of earlier revisions (so provenance anchors
lose their superseder).

Named examples of each rule are in ``tests/unit/test_property_rules.py``.
"""

from __future__ import annotations

from hypothesis import assume, given, settings, strategies as st

from bench.reference import ALIVE, Model, from_investigation
from bench.wholegraph import Engine
from belief_graphs import investigations, pick_target, revision_picks

HYP_WEIGHTS = (0.2, 0.5, 0.8, 1.0)


def picture(nodes) -> dict:
    return {
        k: (str(n.state), round(n.weight, 6), None if n.confidence is None else round(n.confidence, 6))
        for k, n in nodes.items()
    }


def model_edges(model: Model) -> set:
    return {(e.kind, e.src, e.dst, e.group) for e in model.stored_edges()}


def agree(engine: Engine, model: Model, where: str) -> None:
    assert picture(engine.stored()) == picture(model.stored()), where
    assert engine.ghosts == {k for k, n in model.nodes.items() if n.forgotten}, where
    assert engine.stored_edges() == model_edges(model), where


def reach(model: Model, seeds: set[str]) -> set[str]:
    """Nodes a revision of ``seeds`` may change: everything downstream (critical
    dependents, superseded and disputed nodes, transitively), their non-critical
    dependents, and the hypotheses of their questions."""
    closure, frontier = set(seeds), list(seeds)
    while frontier:
        k = frontier.pop()
        for e in model.edges:
            nxt = None
            if e.kind == "depends_on" and e.dst == k and e.critical:
                nxt = e.src
            elif e.kind == "supersedes" and e.src == k:
                nxt = e.dst
            elif e.kind == "disputes" and k in (e.src, e.dst):
                nxt = e.dst if e.src == k else e.src
            if nxt is not None and nxt not in closure:
                closure.add(nxt)
                frontier.append(nxt)
    region = set(closure)
    region |= {e.src for e in model.edges if e.kind == "depends_on" and e.dst in closure}
    questions = {model.nodes[k].question for k in closure if k in model.nodes}
    region |= {k for k, n in model.nodes.items() if n.kind == "hypothesis" and n.question in questions}
    return region


@st.composite
def scenario(draw, shared: bool = True, supersedes: bool = True):
    inv = draw(investigations(shared=shared, supersedes=supersedes))
    model = from_investigation(inv)
    for n in model.nodes.values():
        if n.kind == "hypothesis":
            n.weight = draw(st.sampled_from(HYP_WEIGHTS))
    model.load_settle()
    model.forget()
    return model, draw(revision_picks(1, 6)), draw(st.booleans())


def run_sequence(model: Model, picks: list[int], dead_targets: bool):
    """Yield (step, engine, model after, plan, target, model before) per revision."""
    engine = Engine(model)
    agree(engine, model, "start")
    for step, pick in enumerate(picks, start=1):
        target = pick_target(model, pick, dead_targets)
        if target is None:
            return
        before = model.copy()
        new_key = f"F{step}"
        model.revise(target, new_key)
        plan = engine.revise(target, new_key, step)
        yield step, engine, model, plan, target, before


@settings(max_examples=250, deadline=None)
@given(scenario())
def test_engine_matches_whole_graph_reference_after_every_revision(case):
    model, picks, dead_targets = case
    for step, engine, model, plan, target, before in run_sequence(model, picks, dead_targets):
        agree(engine, model, f"revision {step} (target {target})")
        # every orphan is forgotten: none is left anywhere in the graph
        assert model.orphans() == [], step
        # each node changes at most once per revision; nothing outside the target's downstream changed
        region = reach(before, {target}) | {f"F{step}"}
        moved = {k for k in before.nodes if picture({k: before.nodes[k]}) != picture({k: model.nodes[k]})}
        assert moved <= region, (
            f"revision {step} changed {sorted(moved - region)} outside what {target} reaches"
        )
        states = [c.key for c in plan.changes if c.before["state"] != c.after["state"]]
        assert len(states) == len(set(states)), f"a node changed state twice: {states}"


@settings(max_examples=100, deadline=None)
@given(scenario(shared=False, supersedes=False))
def test_loadable_graphs_without_loaded_supersedes(case):
    """The graphs the real-store property test loads (no supersedes edges in the file)."""
    model, picks, dead_targets = case
    for step, engine, model, plan, target, before in run_sequence(model, picks, dead_targets):
        agree(engine, model, f"revision {step} (target {target})")


@settings(max_examples=150, deadline=None)
@given(scenario(), st.integers(0, 10**6))
def test_resolving_two_alive_facts_matches_the_reference(case, pick):
    """``resolve LOSER --winner WINNER`` between two alive facts of one question (the caller's
    decision that WINNER contradicts LOSER), after a sequence of revisions: the engine and the
    reference agree, as after a revision whose new fact is WINNER."""
    model, picks, dead_targets = case
    engine, step = None, 0
    for step, engine, model, _, _, _ in run_sequence(model, picks, dead_targets):
        agree(engine, model, f"revision {step}")
    engine = engine or Engine(model)
    alive = sorted(k for k, n in model.stored().items() if n.kind == "evidence" and n.state == ALIVE)
    pairs = [
        (a, b) for a in alive for b in alive if a != b and model.nodes[a].question == model.nodes[b].question
    ]
    assume(pairs)
    loser, winner = pairs[pick % len(pairs)]
    model.resolve(loser, winner)
    plan = engine.resolve(loser, winner, step + 1)  # its loser dies, unless it holds its winner up
    agree(engine, model, f"resolve {loser} --winner {winner}")
    assert model.orphans() == []
    assert [c.key for c in plan.changes if c.key == loser], "the loser's change is recorded with its cause"
