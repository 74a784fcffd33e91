"""Valid time's pure rules against the independent reference (:mod:`bench.reference`).

* how a judged contradiction reads in valid time (:func:`memory_core.core.validity.classify`)
  equals the reference's reading, for every pair of intervals over a few dates;
* ending a fact's validity on a random loaded graph (:func:`validity.end_validity`, then
  decay and rescoring as for any death) leaves exactly the reference's whole-graph states:
  the fact and what its support takes away ``superseded``, nothing forgotten, the stored
  labelling consistent; and the revisions after it still match the reference (evidence
  superseded in time keeps defeating what it defeated);
* ``as_of`` counts a fact at exactly the dates inside its interval, never a refuted one.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from bench.reference import ALIVE, end_validity as model_end_validity, from_investigation, valid_time_case
from bench.wholegraph import Engine
from belief_graphs import investigations, pick_target, revision_picks
from memory_core.core import validity
from memory_core.core.beliefs import BeliefView
from memory_core.core.cascade import decay
from memory_core.core.forget import orphans
from memory_core.core.plan import Plan
from memory_core.core.promotion import rescore
from memory_core.core.tms import three_valued_violations

DATES = [None, "2000-01-01", "2005-06-30", "2010-01-01", "2016-01-01", "2020-12-31"]


@st.composite
def interval(draw):
    start, end = draw(st.sampled_from(DATES)), draw(st.sampled_from(DATES))
    if start is not None and end is not None and end < start:
        start, end = end, start
    if start is not None and end == start:
        end = None
    return start, end


@settings(max_examples=400, deadline=None)
@given(interval(), interval())
def test_classify_matches_the_reference(new, stored):
    assert validity.classify(new, stored) == valid_time_case(new, stored)


@settings(max_examples=300, deadline=None)
@given(interval(), st.sampled_from([d for d in DATES if d]))
def test_holds_at_is_the_half_open_interval(span, when):
    start, end = span
    expected = (start is None or start <= when) and (end is None or when < end)
    assert validity.holds_at(span, when) == expected


def picture(nodes) -> dict:
    return {k: (str(n.state), round(n.weight, 6), None if n.confidence is None else round(n.confidence, 6))
            for k, n in nodes.items()}


@st.composite
def ended_case(draw):
    inv = draw(investigations(shared=True, supersedes=True))
    model = from_investigation(inv)
    model.load_settle()
    model.forget()
    alive = sorted(k for k, n in model.stored().items() if n.kind == "evidence" and n.state == ALIVE)
    if not alive:
        return model, None, []
    return model, draw(st.sampled_from(alive)), draw(revision_picks(0, 3))


@settings(max_examples=200, deadline=None)
@given(ended_case())
def test_ending_validity_matches_the_reference_and_later_revisions_too(case):
    model, key, picks = case
    if key is None:
        return
    engine = Engine(model)
    view = BeliefView(nodes=dict(engine.nodes), edges=list(engine.edges))
    plan = Plan(epoch=1)
    ended = validity.end_validity(view, plan, {key: "2016-01-01"}, "F_new")
    decay(view, plan, ended)
    rescore(view, plan, plan.died)
    died = model_end_validity(model, key, "2016-01-01")
    assert sorted(ended) == sorted(died)
    stored = {k: n for k, n in view.nodes.items() if k not in engine.ghosts}
    assert picture(stored) == picture(model.stored())
    assert view.nodes[key].valid_to == "2016-01-01"
    in_time = plan.keys_with(validity.HELD_UNTIL)
    assert key in in_time and all(view.nodes[k].state == "superseded" for k in in_time)
    assert not set(orphans(view)) & set(in_time), "a fact superseded in time is never forgotten"
    assert [v for v in three_valued_violations(view) if v[0] not in engine.ghosts] == []
    engine.nodes, engine.edges = dict(view.nodes), list(view.edges)
    engine.memory.absorb(plan)
    for step, pick in enumerate(picks, start=2):
        target = pick_target(model, pick, False)
        if target is None:
            return
        model.revise(target, f"F{step}")
        engine.revise(target, f"F{step}", step)
        assert picture(engine.stored()) == picture(model.stored()), f"revision {step} (target {target})"


@settings(max_examples=200, deadline=None)
@given(interval(), st.sampled_from([d for d in DATES if d]),
       st.sampled_from(["alive", "refuted", "superseded", "invalidated"]))
def test_as_of_counts_a_fact_only_inside_its_interval_and_never_a_refuted_one(span, when, state):
    from memory_core.core.beliefs import Node

    start, end = span
    ended = state == "superseded" and end is not None
    fact = Node("E", "evidence", state=state, valid_from=start, valid_to=end)
    sliced = validity.as_of(BeliefView(nodes={"E": fact}, edges=[]), when)
    holds = (state == "alive" or ended) and validity.holds_at(span, when)
    assert (sliced.nodes["E"].state == "alive") == holds
