"""Valid time: when a fact was true in the world (pure).

Evidence may carry ``valid_from`` / ``valid_to`` (ISO dates; the interval is
half-open, ``[valid_from, valid_to)``; no ``valid_to``: still true). When a judge
says a new fact F contradicts stored evidence E and both have a ``valid_from``,
time may explain the contradiction instead of a revision (the semantics of
temporal edge invalidation: a value that was true stops being true):

* ``disjoint``: the intervals do not overlap: no contradiction, both stay alive;
* ``ends_stored``: F starts after E started and E is open-ended: E held until
  F's ``valid_from`` (its ``valid_to`` is written), E becomes ``superseded`` (it
  was true) and so does what rests on it: historical, never forgotten;
* ``new_precedes``: F starts before E: F is recorded with ``valid_to`` = E's
  ``valid_from``, as ``superseded``; E is untouched;
* ``same_period``: both claim the same period: a real contradiction, decided by
  the reconciliation policy as any other.

Without a ``valid_from`` on either side the verdict stands (``untimed``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timezone
from typing import Iterable, Optional

from memory_core.core.beliefs import ALIVE, INVALIDATED, REFUTED, SUPERSEDED, SUPPORTS, BeliefView
from memory_core.core.vocabulary import DISPUTED
from memory_core.core.errors import InputError
from memory_core.core.plan import Plan, record

UNTIMED, DISJOINT, ENDS_STORED, NEW_PRECEDES, SAME_PERIOD = (
    "untimed", "disjoint", "ends_stored", "new_precedes", "same_period")
HELD_UNTIL = "validity_ended"  # the rule of a change that ends a fact's validity (and its dependents')

Interval = tuple[Optional[str], Optional[str]]


def moment(text: str) -> datetime:
    """A comparable instant of an ISO date or date-time (naive times are UTC)."""
    value = datetime.combine(date.fromisoformat(text), datetime.min.time()) if len(text) == 10 \
        else datetime.fromisoformat(text)
    if value.tzinfo is not None:
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def check_date(value, name: str) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name} must be an ISO date such as 2016-01-01, got {value!r}")
    text = value.strip()
    try:
        moment(text)
    except ValueError:
        raise InputError(f"{name} must be an ISO date such as 2016-01-01, got {text!r}") from None
    return text


def check_interval(valid_from, valid_to, where: str = "") -> Interval:
    """Validate an interval: each bound an ISO date, ``valid_to`` not before ``valid_from``."""
    prefix = f"{where}: " if where else ""
    try:
        start, end = check_date(valid_from, "valid_from"), check_date(valid_to, "valid_to")
    except InputError as error:
        raise InputError(prefix + str(error)) from None
    if start is not None and end is not None and moment(end) < moment(start):
        raise InputError(f"{prefix}valid_to {end} is before valid_from {start}")
    return start, end


def holds_at(interval: Interval, when: str) -> bool:
    """Whether a fact valid over ``interval`` is true at ``when`` (open bounds hold)."""
    start, end = interval
    at = moment(when)
    return (start is None or moment(start) <= at) and (end is None or at < moment(end))


def classify(new: Interval, stored: Interval) -> str:
    """How a judged contradiction between a new fact and stored evidence reads in valid time."""
    nf, nt = new
    sf, st = stored
    if nf is None or sf is None:
        return UNTIMED
    nf_, sf_ = moment(nf), moment(sf)
    if (nt is not None and moment(nt) <= sf_) or (st is not None and moment(st) <= nf_):
        return DISJOINT
    if nf_ > sf_ and st is None:
        return ENDS_STORED
    if nf_ < sf_:
        return NEW_PRECEDES
    return SAME_PERIOD


def sort_verdicts(verdicts: Iterable[tuple[str, str, float]], new: Interval,
                  stored: dict[str, Interval]) -> dict:
    """Split a fact's verdicts by :func:`classify`. Returns ``{"kept": [verdicts that stay
    contradictions], "ends": {key: date its validity ends}, "new_valid_to": date or None,
    "cases": {key: case}}``."""
    kept, ends, cases = [], {}, {}
    new_to = None
    for verdict in verdicts:
        key = verdict[0]
        case = classify(new, stored.get(key, (None, None)))
        cases[key] = case
        if case in (UNTIMED, SAME_PERIOD):
            kept.append(verdict)
        elif case == ENDS_STORED:
            ends[key] = new[0]
        elif case == NEW_PRECEDES:
            start = stored[key][0]
            if new_to is None or moment(start) < moment(new_to):
                new_to = start
    if new_to is not None and new[1] is not None and moment(new[1]) <= moment(new_to):
        new_to = None  # already ends before the stored value starts (then it is disjoint)
    return {"kept": kept, "ends": ends, "new_valid_to": new_to, "cases": cases}


def end_validity(view: BeliefView, plan: Plan, ends: dict[str, str], cause: str) -> list[str]:
    """Each evidence in ``ends`` (key -> date) held until that date: ``valid_to`` set, state
    ``superseded``; alive nodes whose support that takes away become ``superseded`` too.
    Recorded in ``plan`` (rule ``validity_ended``). Returns what stopped holding."""
    ended: list[str] = []
    for key in sorted(ends):
        node = view.nodes[key]
        if node.state != ALIVE:
            continue
        node.valid_to = ends[key]
        record(view, plan, key, HELD_UNTIL, [cause], f"held until {ends[key]} ({cause} holds from then)",
               state=SUPERSEDED, weight=0.0)
        plan.changes[-1].before["valid_to"] = None
        plan.changes[-1].after["valid_to"] = ends[key]
        ended.append(key)
    if not ended:
        return []
    # what rested on them and holds no more held while its support held: superseded (not
    # invalidated), and it keeps defeating what it defeated; found by the three-valued labelling,
    # again until nothing more falls (each one ended keeps its attacks); the rest is relabelled
    # (a dependent with only a disputed justification left becomes disputed)
    from memory_core.core.tms import downstream, labels, relabel

    last = min(ends[k] for k in ended)  # the earliest end: from then on nothing of the closure held
    victims: list[str] = []
    while True:
        scope = downstream(view, ended + victims)
        new = labels(view, scope)
        falling = sorted(k for k in scope if new[k] == "dead" and view.nodes[k].state in (ALIVE, DISPUTED)
                         and view.justifications(k))
        if not falling:
            break
        for key in falling:
            node = view.nodes[key]
            lost = sorted({a for _, ants in view.justifications(key) for a in ants if new.get(a) == "dead"})
            until = ", ".join(f"{a} held until {ends[a]}" for a in lost if a in ends) or \
                "its support held only until then"
            before_to = node.valid_to
            if node.kind == "evidence":  # derived evidence held while its support did: its validity ends too
                node.valid_to = last
            record(view, plan, key, HELD_UNTIL, lost, f"held while its support held ({until})",
                   state=SUPERSEDED, weight=0.0)
            if node.kind == "evidence":
                plan.changes[-1].before["valid_to"], plan.changes[-1].after["valid_to"] = before_to, last
            victims.append(key)
    outcome = relabel(view, plan, ended + victims)
    victims += [k for k in outcome.died if k not in victims]
    plan.died = plan.died + [k for k in ended + victims if k not in plan.died]
    return ended + victims


def precede(view: BeliefView, plan: Plan, key: str, until: str, cause: list[str]) -> None:
    """The new fact held only until a stored value started: recorded as ``superseded``."""
    node = view.nodes[key]
    node.valid_to = until
    record(view, plan, key, HELD_UNTIL, cause, f"held until {until} ({', '.join(cause)} holds from then)",
           state=SUPERSEDED, weight=0.0)
    plan.changes[-1].after["valid_to"] = until


def historical(view: BeliefView, key: str) -> bool:
    """A node superseded in time: it was true; never forgotten, and what it consumes or
    supersedes is kept with it (see :func:`memory_core.core.tms.historical_node`)."""
    from memory_core.core.tms import historical_node

    node = view.nodes.get(key)
    return node is not None and historical_node(node)


def counts_at(node, when: str) -> bool:
    """Whether a stored evidence or conclusion may count at ``when`` on its own: alive or
    disputed and valid then, or superseded in time (it has a ``valid_to``) with ``when``
    inside its interval. Refuted never (it was never true); superseded by a newer value
    without an interval, or invalidated, never on its own (its support is recomputed)."""
    interval = (node.valid_from, node.valid_to)
    if node.state in (ALIVE, DISPUTED):
        return holds_at(interval, when)
    if node.state == SUPERSEDED and node.valid_to is not None:
        return holds_at(interval, when)
    return False


def untimed(node) -> bool:
    """Evidence stored without any valid time (neither ``valid_from`` nor ``valid_to``). At
    an as-of date it is taken as holding (nothing says when it was not true): recall shows it
    as such."""
    return node.kind == "evidence" and node.valid_from is None and node.valid_to is None


def as_of(view: BeliefView, when: str) -> BeliefView:
    """The beliefs valid at ``when``: a copy of ``view`` labelled on that slice by the
    three-valued labelling (:func:`memory_core.core.tms.labels`). Premises that cannot count
    then (:func:`counts_at`: outside their interval, a refuted node, a premise superseded by
    a judged newer value) are taken as dead. Derived evidence and conclusions (those with
    justifications) are relabelled from their justifications whatever their present state
    (a node superseded because its support ended in time holds again at a date its support
    held), unless refuted or outside their own interval. A hypothesis holds when one of its
    supporters holds (or, with no supporter, when it is alive now). Evidence without any
    interval holds at every date (:func:`untimed`)."""
    from memory_core.core.tms import L_ALIVE, L_DISPUTED, labels

    when = check_date(when, "as_of")
    sliced = BeliefView({k: replace(n) for k, n in view.nodes.items()}, list(view.edges))
    forced = set()
    for key, node in sliced.nodes.items():
        if node.kind not in ("evidence", "conclusion"):
            continue
        if view.justifications(key):  # relabelled from its justifications, unless refuted or out of its interval
            if node.state == REFUTED or not holds_at((node.valid_from, node.valid_to), when):
                forced.add(key)
            else:  # its present state (ended with its support, invalidated, disputed) is recomputed on the slice
                node.state = ALIVE
        elif counts_at(node, when):
            node.state = DISPUTED if node.state == DISPUTED else ALIVE
        else:
            forced.add(key)
    labelled = labels(sliced, forced_dead=forced)
    for key, lab in labelled.items():
        node = sliced.nodes[key]
        if lab == L_ALIVE:
            node.state = ALIVE
        elif lab == L_DISPUTED:
            node.state = DISPUTED
        elif node.state in (ALIVE, DISPUTED):  # not valid at that date, or its support is not
            node.state = SUPERSEDED if key in forced else INVALIDATED
    for key, node in sliced.nodes.items():
        if node.kind != "hypothesis":
            continue
        supporters = [e.src for e in sliced.in_edges(key, SUPPORTS)]
        holds = any(sliced.state(s) == ALIVE for s in supporters) if supporters else view.nodes[key].alive
        node.state = ALIVE if holds else SUPERSEDED
    return sliced
