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

from bench.reference import (
    ALIVE,
    end_validity as model_end_validity,
    from_investigation,
    revise_in_time,
    valid_time_case,
)
from bench.wholegraph import Engine
from belief_graphs import investigations, pick_target, revision_picks
from memory_core.core import revision, validity
from memory_core.core.beliefs import BeliefView, Node
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
    return {
        k: (str(n.state), round(n.weight, 6), None if n.confidence is None else round(n.confidence, 6))
        for k, n in nodes.items()
    }


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
    plan.meta.memory = engine.memory  # as in a revision, whose relabelling hands the log's memory on
    ended = validity.end_validity(view, plan, {key: "2016-01-01"}, "F_new", set(engine.ghosts))
    decay(view, plan, ended)
    rescore(view, plan, plan.died)
    died = model_end_validity(model, key, "2016-01-01")
    assert sorted(ended) == sorted(died)
    # a revision forgets what its changes left orphaned (a hypothesis that lost its last
    # supporter leaves that supporter's dead evidence with no consumer), as revise does: a
    # node forgotten already (a ghost that stays dead) is never forgotten twice
    gone = revision.forget_orphans(view, plan, set(engine.ghosts))
    assert sorted(gone) == sorted(model.forget())
    engine.ghosts = (engine.ghosts | set(gone)) - set(plan.restored)
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
@given(
    interval(),
    st.sampled_from([d for d in DATES if d]),
    st.sampled_from(["alive", "refuted", "superseded", "invalidated"]),
)
def test_as_of_counts_a_fact_only_inside_its_interval_and_never_a_refuted_one(span, when, state):
    from memory_core.core.beliefs import Node

    start, end = span
    ended = state == "superseded" and end is not None
    fact = Node("E", "evidence", state=state, valid_from=start, valid_to=end)
    sliced = validity.as_of(BeliefView(nodes={"E": fact}, edges=[]), when)
    holds = (state == "alive" or ended) and validity.holds_at(span, when)
    assert (sliced.nodes["E"].state == "alive") == holds


# ---- a fact's whole timeline: histories whose values arrive out of order ------------------


def engine_of(model) -> Engine:
    """The pure rules' state for ``model``, valid time included."""
    engine = Engine(model)
    for key, node in model.nodes.items():
        engine.nodes[key].valid_from, engine.nodes[key].valid_to = node.valid_from, node.valid_to
        engine.nodes[key].stated_to = node.stated_to  # the end its fact stated, as the store keeps it
    return engine


def rejudge_structured(view, plan, model_after, triple) -> None:
    """Re-judged reinstatement as the structured judge does it for a fact given as a triple
    (``tasks.rejudge``): evidence the relabelling would bring back stays dead when the new
    triple contradicts it, or when another value of its single-valued slot holds then."""
    from memory_core.core import reinstatement
    from memory_core.core.tms import historical_node, label_of

    seeds, forced = reinstatement.seeds_of(plan)
    judged: set = set()
    while True:
        back, new_labels = reinstatement.returning(view, seeds, forced, skip=judged)
        if not back:
            return
        judged.update(back)
        hit = []
        for key in back:
            mine = model_after.nodes[key].triple
            if mine is None:
                continue
            if model_after.contradicted_by_triple(key, triple) or (
                model_after.single_valued(key)
                and any(
                    other != key
                    and reinstatement.alive_after(view, new_labels, other)
                    and model_after.nodes.get(other) is not None
                    and model_after.nodes[other].triple is not None
                    and model_after.same_value_slot(other, mine)
                    and model_after.nodes[other].triple[2].casefold() != mine[2].casefold()
                    and None in (view.nodes[key].valid_from, view.nodes[other].valid_from)
                    for other in view.nodes
                )
            ):
                hit.append(key)
            elif model_after.single_valued(key):  # in valid time: its place among the values that hold
                others = [
                    (other, (node.valid_from, node.valid_to))
                    for other, node in view.nodes.items()
                    if other != key
                    and other in model_after.nodes
                    and model_after.nodes[other].triple is not None
                    and model_after.same_value_slot(other, mine)
                    and model_after.nodes[other].triple[2].casefold() != mine[2].casefold()
                    and (historical_node(node) or new_labels.get(other, label_of(node.state)) != "dead")
                ]
                mine_at = (view.nodes[key].valid_from, view.nodes[key].valid_to)
                fact = plan.new_node.key
                ends = plan.meta.fact_ends if new_labels.get(fact) == "alive" else None
                placed = validity.returning_place(mine_at, others, ends)
                if placed is not None and placed[0] == "held":
                    hit.append(key)
                elif placed is not None:
                    plan.meta.returning_until[key] = (placed[2], placed[1])
        if not hit:
            return
        for key in hit:
            reinstatement.keep_dead(
                view, plan, reinstatement.Rejudged(key, plan.new_node.key, "contradicts", 0.9, "structured")
            )


def read_reopening(view, plan, model_after) -> None:
    """What ``tasks.settle_in_time.read_reopening`` names for the change, read from its outcome:
    each timed value of a single-valued slot the change found never true (it held before it),
    and the values of its slot its start had ended, with the other values of their slot."""
    from memory_core.core.tms import historical_node

    first: dict = {}
    for change in plan.changes:
        first.setdefault(change.key, change.before["state"])

    def slot(key):
        node = model_after.nodes.get(key)
        return None if node is None or node.triple is None else (node.triple[0], node.triple[1].casefold())

    for gone in sorted(first):
        node = view.nodes.get(gone)
        if node is None or node.kind != "evidence" or node.valid_from is None or slot(gone) is None:
            continue
        held_before = first[gone] in ("alive", "disputed") or (first[gone] == "superseded" and node.valid_to)
        if not held_before or not validity.never_held(node):
            continue
        mine = model_after.nodes[gone].triple[2].casefold()
        for key, other in view.nodes.items():
            if slot(key) != slot(gone) or model_after.nodes[key].triple[2].casefold() == mine:
                continue
            if not (historical_node(other) or other.state == "disputed") or other.valid_to != node.valid_from:
                continue
            own = model_after.nodes[key].triple[2].casefold()
            rivals = [
                k
                for k in view.nodes
                if slot(k) == slot(gone) and k != key and model_after.nodes[k].triple[2].casefold() != own
            ]
            plan.meta.reopening.setdefault(key, (gone, rivals))


def engine_in_time(
    engine: Engine, model_before, new_key: str, triple: tuple, new: tuple, question: str, epoch: int
) -> dict:
    """One timed fact through the pure rules exactly as a revision applies them
    (``tasks.propagate_refutation``): the structured judge's verdicts on the fact's whole
    timeline, read in valid time, the policy's default (the fact wins), then its place in time."""
    from memory_core.core import revision
    from memory_core.core.beliefs import Node

    keys = model_before.triple_targets(triple, timeline=True)
    view = BeliefView(nodes=dict(engine.nodes), edges=list(engine.edges))
    stored = {k: (view.nodes[k].valid_from, view.nodes[k].valid_to) for k in keys}
    timed = validity.sort_verdicts([(k, "contradicts", 0.9) for k in keys], new, stored)
    fact = Node(
        new_key,
        "evidence",
        question=question,
        weight=0.5,
        valid_from=new[0],
        valid_to=new[1],
        stated_to=new[1],
    )
    plan = revision.begin(view, timed["kept"], epoch, f"fact {new_key}", fact, {})
    plan.meta.fact_ends = dict(timed["ends"])
    validity.reopen(view, plan, timed["kept"], {}, new_key)
    model_after = model_before.copy()  # the triples the structured judge reads (the new fact's too)
    from bench.reference import MNode

    model_after.nodes[new_key] = MNode(new_key, "evidence", question, triple=triple)
    rejudge_structured(view, plan, model_after, triple)
    revision.propagate_refutation(view, plan, engine.memory, set(engine.ghosts))
    validity.place(view, plan, timed, new_key)
    read_reopening(view, plan, model_after)
    validity.reopen_ended(view, plan, set(engine.ghosts))
    revision.promote_competing_hypothesis(view, plan, engine.memory)
    revision.forget_orphans(view, plan, set(engine.ghosts))
    engine.nodes, engine.edges = dict(view.nodes), list(view.edges)
    engine.ghosts = (engine.ghosts | set(plan.forgotten)) - set(plan.restored)
    engine.memory.absorb(plan)
    return timed["cases"]


def timelines(nodes, keys) -> dict:
    return {k: (nodes[k].valid_from, nodes[k].valid_to) for k in keys}


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["forward", "backward", "shuffled"]), st.booleans())
def test_out_of_order_histories_match_the_reference(seed, order, revisits):
    """Histories of a single-valued predicate whose values arrive forward in time, backward
    (each one late) or shuffled, some with values contested and brought back (``revisits``:
    reinstated values take their place in the timeline again): after every value the pure
    rules leave exactly the reference's states, weights, stored nodes and intervals, read
    each verdict in the same case, and no two values that held overlap in time
    (``validity.overlaps``)."""
    from bench.graphs import loaded_model, timed_case

    inv, steps = timed_case(seed, "", order, revisits)
    model = loaded_model(inv)
    engine = engine_of(model)
    question = inv["question"]["key"]
    for n, step in enumerate((s for s in steps if s != "undo"), start=1):
        subject, leader, start, end = step
        key, triple = f"F{n}", (subject, "led by", leader)
        before = model.copy()
        want = revise_in_time(model, key, triple, (start, end), question)
        got = engine_in_time(engine, before, key, triple, (start, end), question, n)
        assert got == want["cases"], (step, steps)
        stored = engine.stored()
        assert picture(stored) == picture(model.stored()), (n, steps, inv)
        evidence = [k for k, node in model.stored().items() if node.kind == "evidence"]
        assert timelines(stored, evidence) == timelines(model.stored(), evidence), (n, steps)
        held = [
            (
                k,
                f"{model.nodes[k].triple[0]}|led by",
                model.nodes[k].triple[2],
                (stored[k].valid_from, stored[k].valid_to),
            )
            for k in evidence
            if model.nodes[k].triple
            and (
                stored[k].state in ("alive", "disputed")
                or (stored[k].state == "superseded" and stored[k].valid_to)
            )
        ]
        assert validity.overlaps(held) == [], (n, steps, held)


def test_a_conclusion_forgotten_then_brought_back_only_to_fall_again_stays_forgotten():
    """The smallest history the property test above found. K0 rests on E0 (team 0 led by
    Alice from 2000) and E1 (team 1 led by Erin from 2020), one justification. Erin claims
    team 0 for [2000, 2015): E0 is refuted, K0 invalidated and forgotten. Dave leads team 0
    from 2020. Alice is claimed from 2000 again: Erin's claim is refuted, so E0 comes back,
    but only until 2020 where Dave's value starts (superseded, held [2000, 2020)), and K0's
    support never held at once (E0 ends where E1 starts): K0 is brought back by the
    relabelling and invalidated again in the same revision. Nothing needs it, so it stays
    forgotten, as in the reference: the plan does not restore it (``plan.restored``) and
    forgets it again."""
    inv = {
        "question": {"key": "Q", "text": "Who led the teams?"},
        "evidence": [
            {
                "key": f"E{i}",
                "claim": f"Team {i} was led by {leader}.",
                "subject": f"team {i}",
                "predicate": "led by",
                "object": leader,
                "valid_from": start,
            }
            for i, (leader, start) in enumerate([("Alice", "2000-01-01"), ("Erin", "2020-01-01")])
        ],
        "conclusions": [{"key": "K0", "statement": "Conclusion 0.", "confidence": 0.8}],
        "edges": [
            {"type": "depends_on", "from": "K0", "to": "E0"},
            {"type": "depends_on", "from": "K0", "to": "E1"},
        ],
    }
    steps = [
        ("team 0", "Erin", "2000-01-01", "2015-01-01"),
        ("team 0", "Dave", "2020-01-01", None),
        ("team 0", "Alice", "2000-01-01", None),
    ]
    model = from_investigation(inv)
    model.load_settle()
    engine = engine_of(model)
    for n, (subject, leader, start, end) in enumerate(steps, start=1):
        key, triple = f"F{n}", (subject, "led by", leader)
        before = model.copy()
        want = revise_in_time(model, key, triple, (start, end), "Q")
        got = engine_in_time(engine, before, key, triple, (start, end), "Q", n)
        assert got == want["cases"]
        assert picture(engine.stored()) == picture(model.stored()), n
        assert timelines(engine.stored(), [k for k in engine.stored() if k[0] in "EF"]) == timelines(
            model.stored(), [k for k in model.stored() if k[0] in "EF"]
        )
        if n == 1:
            assert "K0" in engine.ghosts and model.nodes["K0"].forgotten
    assert got == {"F1": "same_period", "F2": "new_precedes"}
    assert picture(engine.stored()) == {
        "Q": ("alive", 0.5, None),
        "E0": ("superseded", 0.0, None),
        "E1": ("alive", 0.5, None),
        "F1": ("refuted", 0.0, None),
        "F2": ("alive", 0.5, None),
        "F3": ("superseded", 0.0, None),
    }
    assert timelines(engine.stored(), ["E0", "F3"]) == {
        "E0": ("2000-01-01", "2020-01-01"),
        "F3": ("2000-01-01", "2020-01-01"),
    }
    assert "K0" in engine.ghosts and model.nodes["K0"].forgotten
    assert engine.nodes["K0"].state == "invalidated" and model.nodes["K0"].state == "invalidated"


def test_the_issue_history_ends_the_late_value_where_the_next_known_one_starts():
    """40 t from 2010, then 30 t from 2018 (40 t held until 2018), then 45 t from 2005: 45 t
    held until 2010, where the earliest later known value (40 t, superseded in time) starts."""
    inv = {
        "question": {"key": "Q", "text": "limit?"},
        "evidence": [
            {
                "key": "E40",
                "claim": "40 t",
                "subject": "bridge",
                "predicate": "limit",
                "object": "40 t",
                "valid_from": "2010-01-01",
            }
        ],
    }
    from bench.graphs import loaded_model

    model = loaded_model(inv)
    engine = engine_of(model)
    for n, (key, obj, start) in enumerate([("E30", "30 t", "2018-03-01"), ("E45", "45 t", "2005-01-01")], 1):
        before = model.copy()
        revise_in_time(model, key, ("bridge", "limit", obj), (start, None), "Q")
        engine_in_time(engine, before, key, ("bridge", "limit", obj), (start, None), "Q", n)
    got = timelines(engine.nodes, ["E45", "E40", "E30"])
    assert got == {
        "E45": ("2005-01-01", "2010-01-01"),
        "E40": ("2010-01-01", "2018-03-01"),
        "E30": ("2018-03-01", None),
    }
    assert got == timelines(model.nodes, ["E45", "E40", "E30"])


def test_a_returning_value_is_placed_among_the_values_that_hold():
    """``validity.returning_place``: a value that held when the returning one starts keeps it
    dead; the earliest later start before its end ends it; a value the new fact ends at its
    start counts as ending there; nothing to order without a start."""
    place = validity.returning_place
    erin = ("Erin", ("2015-01-01", "2020-01-01"))
    assert place(("2010-01-01", None), [erin]) == ("until", "Erin", "2015-01-01")
    assert place(("2010-01-01", "2012-01-01"), [erin]) is None  # it ends before Erin starts
    assert place(("2016-01-01", None), [erin]) == ("held", "Erin", "2015-01-01")
    assert place(("2020-01-01", None), [erin]) is None  # half-open: Erin no longer holds then
    dave = ("Dave", ("2012-01-01", None))
    assert place(("2010-01-01", None), [erin, dave]) == ("until", "Dave", "2012-01-01")
    assert place(("2015-01-01", None), [dave, erin]) == ("held", "Dave", "2012-01-01")
    assert place(("2015-01-01", None), [dave], {"Dave": "2014-01-01"}) is None
    assert place(("2015-01-01", None), [dave], {"Dave": "2016-01-01"})[0] == "held"
    assert place((None, None), [erin]) is None
    assert place(("2010-01-01", None), [("Bob", (None, None))]) is None  # untimed: rule 1c's part


def test_the_returning_history_of_the_property_test_keeps_every_value_in_its_period():
    """The history hypothesis found (seed 802213, shuffled): Alice from 2010 is refuted by Bob
    for the same period, Erin from 2015 ends Bob and is ended in 2020 by Alice's loaded value,
    then Alice from 2010 refutes Bob: the first Alice from 2010 comes back held until 2015 (it
    was left open-ended over Erin's period), as the reference has it."""
    from bench.graphs import loaded_model, timed_case

    inv, steps = timed_case(802213, "", "shuffled")
    model = loaded_model(inv)
    engine = engine_of(model)
    question = inv["question"]["key"]
    back = {}
    for n, step in enumerate((s for s in steps if s != "undo"), start=1):
        subject, leader, start, end = step
        before = model.copy()
        want = revise_in_time(model, f"F{n}", (subject, "led by", leader), (start, end), question)
        engine_in_time(engine, before, f"F{n}", (subject, "led by", leader), (start, end), question, n)
        back.update(want["back_until"])
        assert timelines(engine.stored(), list(model.stored())) == timelines(
            model.stored(), list(model.stored())
        )
    assert back == {"F2": "2015-01-01"}
    assert (engine.nodes["F2"].state, engine.nodes["F2"].valid_to) == ("superseded", "2015-01-01")


# ---- a year or a month: the beliefs valid at some time of it ------------------------------


@settings(max_examples=200, deadline=None)
@given(
    interval(),
    st.sampled_from(["2005", "2005-06", "2005-07", "2010", "2015", "2016-01", "2020-12", "2021"]),
    st.sampled_from(["alive", "refuted", "superseded"]),
)
def test_a_period_holds_a_fact_valid_on_any_of_its_days(span, when, state):
    """A year's or a month's slice holds a fact exactly when some day of it does (every day
    checked, the brute-force reading); a refuted fact never."""
    from datetime import date, timedelta

    from memory_core.core.beliefs import Node

    start, end = span
    fact = Node("E", "evidence", state=state, valid_from=start, valid_to=end)
    first, after = validity.period(when)
    days, day = [], date.fromisoformat(first)
    while day < date.fromisoformat(after):
        days.append(day.isoformat())
        day += timedelta(days=1)
    single = BeliefView(nodes={"E": fact}, edges=[])
    expected = any(validity.as_of(single, d).nodes["E"].state == "alive" for d in days)
    assert (validity.as_of(single, when).nodes["E"].state == "alive") == expected
    assert validity.outside(span, when) == (not any(validity.holds_at(span, d) for d in days))


def test_a_conclusion_holds_in_a_year_when_its_support_held_at_some_time_of_it():
    """Maria lived in Lisbon until June 2018, in Porto from then: in 2018 both values held, and
    the conclusion resting on Lisbon too; in 2019 only Porto."""
    from memory_core.core.beliefs import DEPENDS_ON, Edge, Node

    nodes = {
        "E_lis": Node(
            "E_lis", "evidence", state="superseded", valid_from="2015-01-01", valid_to="2018-06-01"
        ),
        "E_por": Node("E_por", "evidence", state="alive", valid_from="2018-06-01"),
        "K": Node("K", "conclusion", state="superseded"),
    }
    view = BeliefView(nodes=nodes, edges=[Edge(DEPENDS_ON, "K", "E_lis")])
    alive = lambda when: {k for k, n in validity.as_of(view, when).nodes.items() if n.state == "alive"}  # noqa: E731
    assert alive("2018") == {"E_lis", "E_por", "K"}
    assert alive("2018-05") == {"E_lis", "K"} and alive("2018-06") == {"E_por"}
    assert alive("2019") == {"E_por"} and alive("2014") == set()


def test_the_time_a_question_names():
    read = validity.when_in_question
    assert read("Where did Maria live in 2018?") == ("in 2018", "2018")
    assert read("Where was she during March 2018?") == ("during March 2018", "2018-03")
    assert read("Who led it as of 2018-03-01?") == ("as of 2018-03-01", "2018-03-01")
    assert read("Who won the 2018 World Cup?") is None  # a number in a name is not a time
    assert read("What happened on 2018-02-30?") is None  # no such day
    for asked, words, when in (
        ("Who led it on 1 June 2016?", "on 1 June 2016", "2016-06-01"),
        ("Who led it on June 1, 2016?", "on June 1, 2016", "2016-06-01"),
        ("Who led it in 2016-06?", "in 2016-06", "2016-06"),
        ("Who led it in 12/2013?", "in 12/2013", "2013-12"),
        ("Who led it in the summer of 2013?", "in the summer of 2013", "2013-06/2013-08"),
        ("Who led it in winter 2013?", "in winter 2013", "2013-12/2014-02"),
        ("Who led it in the 2010s?", "in the 2010s", "2010/2019"),
    ):
        assert read(asked) == (words, when), asked
    assert read("Who led it last year?", "2026-12-04") == ("last year", "2025")
    assert read("Who led it last year?") is None  # no today given
    assert validity.period("2018-13") is None and validity.period("2018-12") == ("2018-12-01", "2019-01-01")


def test_a_range_of_time_as_of_and_in_a_question():
    """``START/END`` covers its two ends whole (a year, a month, a date); a question's "between
    X and Y", "from X to Y", "since X" (to today) read as one; an empty or inverted range is none."""
    assert validity.period("2015/2018") == ("2015-01-01", "2019-01-01")
    assert validity.period("2018-01-01/2018-06-30") == ("2018-01-01", "2018-07-01")
    assert validity.period("2018-03/2018-02") is None and validity.period("2018/x") is None
    assert validity.said("2015/2018") == "from 2015 to 2018" and validity.check_when("2015/2018", "--as-of")
    read = validity.when_in_question
    assert read("Where did Maria live between 2015 and 2018?") == ("between 2015 and 2018", "2015/2018")
    assert read("Who led it from March 2015 until 2018?") == ("from March 2015 until 2018", "2015-03/2018")
    assert read("Where has Maria lived since 2018?", "2026-12-04") == ("since 2018", "2018/2026-12-04")
    assert read("Where has Maria lived since 2018?") is None  # no today given: no end
    assert validity.order_in_question("Who led it from 2015 until 2018?") is None  # a range, no order
    nodes = {
        "E_lis": Node(
            "E_lis", "evidence", state="superseded", valid_from="2015-01-01", valid_to="2018-06-01"
        ),
        "E_por": Node("E_por", "evidence", state="alive", valid_from="2018-06-01", valid_to="2020-01-01"),
        "E_ber": Node("E_ber", "evidence", state="alive", valid_from="2020-01-01"),
    }
    view = BeliefView(nodes=nodes, edges=[])
    alive = lambda when: {k for k, n in validity.as_of(view, when).nodes.items() if n.state == "alive"}  # noqa: E731
    assert alive("2016/2018") == {"E_lis", "E_por"} and alive("2019-01-01/2020-01-01") == {"E_por", "E_ber"}


def test_the_order_a_question_asks_about():
    """Before or after a time: read the day before it, or the first moment after it; before or
    after a value: its words, to find it among the slot's values; "previous", "used to", a
    trailing "before", "moved ... from?": before the value that holds now."""
    order = validity.order_in_question
    Ordered = validity.Ordered
    assert order("Who was CEO before 2016?") == Ordered("before 2016", True, when="2015-12-31")
    assert order("Who was CEO after May 2016?") == Ordered("after May 2016", False, when="2016-06-01")
    assert order("Who led it until 2016-05-01?") == Ordered("until 2016-05-01", True, when="2016-04-30")
    assert order("Who led it after 2016-12-31?") == Ordered("after 2016-12-31", False, when="2017-01-01")
    assert order("Who was CEO before Beth Cole?") == Ordered("before Beth Cole", True, anchor="Beth Cole")
    assert order("Who was CEO after Alan Reed, then?") == Ordered(
        "after Alan Reed", False, anchor="Alan Reed"
    )
    for asked, words in (
        ("Who was the previous CEO?", "previous"),
        ("Where did Maria use to live?", "use to"),
        ("Where did Maria live before?", "before"),
        ("Where did Orbital move its headquarters from?", "from"),
    ):
        assert order(asked) == Ordered(words, True), asked
    assert order("Where does Maria come from?") is None  # a "from" that asks of no change
    assert order("Who is the CEO?") is None
    assert order("Who led it before 0001-01-01?") is None  # no day before the calendar's first
    assert validity.just_before("2016-05-01T10:00:00") == "2016-05-01T09:59:59"


def test_a_time_outside_the_calendar_is_an_input_error_naming_it():
    """Year 0, year 9999 as a period (its end is no date), an offset that leaves the calendar in
    UTC: InputError naming the argument, never a ValueError or OverflowError from datetime."""
    import pytest

    from memory_core.core.errors import InputError
    from memory_core.core.requests import revision_request

    for when in ("0000", "9999", "9999-12", "0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"):
        with pytest.raises(InputError, match="--as-of must be") as refused:
            validity.check_when(when, "--as-of")
        assert refused.value.field == "as_of"
    assert validity.when_in_question("What was the limit in 0000?") is None
    assert validity.when_in_question("What will it be in 9999?") is None
    for valid_from in ("0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"):
        with pytest.raises(InputError, match="--valid-from must be"):
            validity.check_interval(valid_from, None, names=("--valid-from", "--valid-to"))
        with pytest.raises(InputError, match="^--asserted-at must be an ISO date"):
            revision_request("x", asserted_at=valid_from)


def derived_graph(evidence: list[dict], edges: list[dict]):
    """A loaded investigation of timed premises and a derived fact, as the reference and as the
    pure rules' state."""
    from bench.graphs import loaded_model

    model = loaded_model({"question": {"key": "Q", "text": "vote?"}, "evidence": evidence, "edges": edges})
    return model, engine_of(model)


def end_in_both(model, engine, key: str, until: str, epoch: int) -> Plan:
    """``key`` held until ``until``, by the pure rules (then decay, rescoring and forgetting as a
    revision does) and by the reference."""
    view = BeliefView(nodes=dict(engine.nodes), edges=list(engine.edges))
    plan = Plan(epoch=epoch)
    plan.meta.memory = engine.memory
    ended = validity.end_validity(view, plan, {key: until}, f"F{epoch}", set(engine.ghosts))
    decay(view, plan, ended)
    rescore(view, plan, plan.died)
    gone = revision.forget_orphans(view, plan, set(engine.ghosts))
    assert sorted(ended) == sorted(model_end_validity(model, key, until))
    assert sorted(gone) == sorted(model.forget())
    engine.nodes, engine.edges = dict(view.nodes), list(view.edges)
    engine.ghosts |= set(gone)
    engine.memory.absorb(plan)
    stored = {k: n for k, n in view.nodes.items() if k not in engine.ghosts}
    assert picture(stored) == picture(model.stored())
    assert timelines(stored, list(stored)) == timelines(model.stored(), list(stored))
    return plan


def timed(key: str, start: str, **more) -> dict:
    return {"key": key, "claim": key, "valid_from": start, **more}


def test_a_derived_fact_ends_when_its_longest_justification_ends():
    """D rests on A (one justification) or on B (another): A ends in 2015 (D holds through B),
    then B ends in 2014 (learned later): D held until 2015, through A, not 2014."""
    model, engine = derived_graph(
        [timed("A", "2010-01-01"), timed("B", "2010-01-01"), {"key": "D", "claim": "D"}],
        [
            {"type": "depends_on", "from": "D", "to": "A", "group": "j1"},
            {"type": "depends_on", "from": "D", "to": "B", "group": "j2"},
        ],
    )
    end_in_both(model, engine, "A", "2015-01-01", 1)
    assert engine.nodes["D"].state == "alive"
    end_in_both(model, engine, "B", "2014-01-01", 2)
    assert (engine.nodes["D"].state, engine.nodes["D"].valid_to) == ("superseded", "2015-01-01")


def test_a_derived_fact_whose_support_ends_before_it_starts_never_held():
    """D valid from 2016 rests on A; A ends in 2014: D never held (invalidated, then forgotten:
    nothing needs it), never the inverted interval [2016, 2014)."""
    model, engine = derived_graph(
        [timed("A", "2010-01-01"), timed("D", "2016-01-01")], [{"type": "depends_on", "from": "D", "to": "A"}]
    )
    plan = end_in_both(model, engine, "A", "2014-01-01", 1)
    assert engine.nodes["D"].state == "invalidated" and engine.nodes["D"].valid_to is None
    assert "D" in plan.invalidated and "D" in engine.ghosts


def test_a_derived_fact_ended_already_ends_earlier_when_another_support_ends_earlier():
    """D rests on A and B (both required): A ends in 2016 (D held until 2016), then B ends in 2014
    (learned later): D's end moves back to 2014 (rule validity_shortened)."""
    model, engine = derived_graph(
        [timed("A", "2010-01-01"), timed("B", "2010-01-01"), {"key": "D", "claim": "D"}],
        [{"type": "depends_on", "from": "D", "to": "A"}, {"type": "depends_on", "from": "D", "to": "B"}],
    )
    end_in_both(model, engine, "A", "2016-01-01", 1)
    assert engine.nodes["D"].valid_to == "2016-01-01"
    plan = end_in_both(model, engine, "B", "2014-01-01", 2)
    assert (engine.nodes["D"].state, engine.nodes["D"].valid_to) == ("superseded", "2014-01-01")
    moved = [c for c in plan.changes if c.key == "D" and c.rule == validity.SHORTENED]
    assert [(c.before["valid_to"], c.after["valid_to"]) for c in moved] == [("2016-01-01", "2014-01-01")]


def test_what_rested_on_a_value_ended_in_time_then_refuted_for_its_period_is_invalidated():
    """40 t from 2010, K resting on it; 30 t from 2018 ends 40 t (K superseded: it was true); then
    45 t from 2010 claims the same period: 40 t is refuted (never true), so K never held either:
    invalidated and forgotten (nothing needs it), in the pure rules as in the reference."""
    from bench.graphs import loaded_model

    inv = {
        "question": {"key": "Q", "text": "limit?"},
        "evidence": [
            {
                "key": "E40",
                "claim": "40 t",
                "subject": "bridge",
                "predicate": "limit",
                "object": "40 t",
                "valid_from": "2010-01-01",
            }
        ],
        "conclusions": [{"key": "K", "statement": "Heavy trucks may cross.", "confidence": 0.8}],
        "edges": [{"type": "depends_on", "from": "K", "to": "E40"}],
    }
    model = loaded_model(inv)
    engine = engine_of(model)
    for n, (key, obj, start) in enumerate([("E30", "30 t", "2018-03-01"), ("E45", "45 t", "2010-01-01")], 1):
        before = model.copy()
        want = revise_in_time(model, key, ("bridge", "limit", obj), (start, None), "Q")
        got = engine_in_time(engine, before, key, ("bridge", "limit", obj), (start, None), "Q", n)
        assert got == want["cases"]
        assert picture(engine.stored()) == picture(model.stored())
    assert engine.nodes["E40"].state == "refuted"
    assert "K" in engine.ghosts and model.nodes["K"].forgotten
    assert engine.nodes["K"].state == "invalidated"


def test_check_names_an_empty_or_inverted_interval():
    """``check`` reports a stored interval that holds at no date (valid_to not after valid_from)."""
    from memory_core.ops.check import empty_intervals

    every = {
        "1": {"type": "Evidence", "key": "D", "valid_from": "2016-01-01", "valid_to": "2014-01-01"},
        "2": {"type": "Evidence", "key": "E", "valid_from": "2016-01-01", "valid_to": "2016-01-01"},
        "3": {"type": "Evidence", "key": "F", "valid_from": "2010-01-01", "valid_to": "2014-01-01"},
        "4": {"type": "Evidence", "key": "G", "valid_to": "2014-01-01"},
    }
    assert empty_intervals(every) == [("D", "2016-01-01", "2014-01-01"), ("E", "2016-01-01", "2016-01-01")]


def test_a_conclusion_two_steps_from_an_ended_fact_is_explained_with_its_supports_end():
    """K1 rests on A, K2 on K1: A ends in 2015. K1's record names A's end; K2's names no value of
    its own support (K1, a conclusion, has no valid time) but the date its support held until,
    never a bare "until then"."""
    from bench.graphs import loaded_model

    model = loaded_model(
        {
            "question": {"key": "Q", "text": "vote?"},
            "evidence": [timed("A", "2010-01-01")],
            "conclusions": [{"key": "K1", "statement": "K1"}, {"key": "K2", "statement": "K2"}],
            "edges": [
                {"type": "depends_on", "from": "K1", "to": "A"},
                {"type": "depends_on", "from": "K2", "to": "K1"},
            ],
        }
    )
    engine = engine_of(model)
    plan = end_in_both(model, engine, "A", "2015-01-01", 1)
    said = {c.key: c.detail for c in plan.changes if c.rule == validity.HELD_UNTIL}
    assert "A held until 2015-01-01" in said["K1"], said
    assert "until 2015-01-01" in said["K2"] and "until then" not in said["K2"], said
