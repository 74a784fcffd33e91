"""Reinstatement that re-judges (pure).

When the evidence R that had refuted E dies, E would hold again (three-valued
reinstatement, :mod:`memory_core.core.tms`). But the revision that kills R brings
new facts, and those may contradict E as much as they contradicted R: a value
replaced twice (Acme -> Bolt -> Crane) must not bring the oldest back because the
middle one died. So before a revision relabels, the evidence it would bring back
is judged against the revision's new facts (and, for a single-valued predicate,
against the alive evidence with the same subject and predicate):

* contradicted -> it stays dead: the contradicting fact (or the value holding its
  single-valued slot, when that is the reason) gets a ``supersedes``
  edge to it (provenance; in the three-valued labelling a supersedes edge
  attacks), what rests on it stays dead, and the log records why it was not
  reinstated (rule ``not_reinstated``, shown by ``explain``);
* not contradicted -> it comes back, as before;
* no judge can decide -> it comes back (the earlier behaviour), and the log says
  it was not re-judged and why.

This builds on :func:`memory_core.core.revision.begin`'s rule that a fact winning
on a *supersedes* verdict inherits what the old value had superseded: such
evidence never comes back, so it is never asked about here. The judging itself
(structured, LLM) is the caller's; this module finds what would come back
(:func:`returning`), applies the verdicts (:func:`keep_dead`) and words the notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, NamedTuple, Optional

from memory_core.core.beliefs import BeliefView, Edge
from memory_core.core.plan import Plan, record
from memory_core.core.tms import L_DEAD, attackers, downstream, label_of, labels
from memory_core.core.vocabulary import SUPERSEDES, Rule

NOT_REINSTATED = Rule.NOT_REINSTATED


@dataclass(frozen=True)
class Rejudged:
    """One returning evidence's re-judgement: ``by`` contradicts it (``relation``,
    ``confidence``, ``judge``, ``rationale``). Evidence no judge could decide about has none
    (:func:`remember_undecided` notes it)."""

    key: str
    by: str
    relation: Optional[str] = None
    confidence: Optional[float] = None
    judge: Optional[str] = None
    rationale: str = ""


def seeds_of(plan: Plan) -> tuple[list[str], list[str]]:
    """The seeds and forced-dead nodes a revision's relabelling starts from
    (what :func:`memory_core.core.revision.propagate_refutation` passes to ``relabel``)."""
    meta = plan.meta
    if meta.seeds:  # a resolution: the two sides of the dispute
        return list(meta.seeds), []
    seeds = sorted(meta.verdicts) + ([plan.new_node.key] if plan.new_node is not None else [])
    return seeds, list(meta.forced)


def outcome_labels(view: BeliefView, seeds: Iterable[str], forced: Iterable[str] = ()) -> dict[str, str]:
    """The three-valued labels downstream of ``seeds`` once the view's edges are applied."""
    forced = list(forced)
    return labels(view, downstream(view, list(seeds) + sorted(forced)), forced)


def returning(
    view: BeliefView, seeds: Iterable[str], forced: Iterable[str] = (), skip: Iterable[str] = ()
) -> tuple[list[str], dict[str, str]]:
    """Evidence stored dead that would hold again (alive or disputed) once the view's
    edges are applied because an attacker of it died, and the labels computed.
    ``skip``: keys already re-judged."""
    forced = set(forced)
    new = outcome_labels(view, seeds, forced)
    skip = set(skip)
    back = sorted(
        k
        for k, lab in new.items()
        if lab != L_DEAD
        and k not in forced
        and k not in skip
        and view.nodes[k].kind == "evidence"
        and label_of(view.nodes[k].state) == L_DEAD
        and attackers(view, k)
    )
    return back, new


def alive_after(
    view: BeliefView, new_labels: dict[str, str], key: str, stored_state: Optional[str] = None
) -> bool:
    """Whether ``key`` holds once the revision is applied (labels computed, else its state)."""
    if key in new_labels:
        return new_labels[key] == "alive"
    if key in view.nodes:
        return label_of(view.nodes[key].state) == "alive"
    return stored_state is not None and label_of(stored_state) == "alive"


def keep_dead(view: BeliefView, plan: Plan, verdict: Rejudged) -> None:
    """Evidence the revision would have brought back, contradicted by ``verdict.by``:
    ``by`` supersedes it (an edge that attacks), and the log says why it stays dead. When what
    keeps it dead is another value holding its single-valued slot (the structured judge's
    slot verdict), that value supersedes it and the detail names it, not ``by`` (which need
    not contradict it): it stays dead while that value holds, whatever becomes of ``by`` (a
    fact put in dispute would have left it disputed although the value holding its slot is
    alive). The holder must be in the view (the re-judging reads it in)."""
    holder = slot_holder_of(verdict)
    source = holder if holder is not None else verdict.by
    edge = Edge(SUPERSEDES, source, verdict.key, confidence=verdict.confidence)
    if edge not in view.out_edges(source, SUPERSEDES):
        view.add_edge(edge)
        plan.new_edges.append(edge)
    conf = f", confidence {verdict.confidence:.2f}" if verdict.confidence is not None else ""
    judged = f"{verdict.judge or 'judge'}{conf}"
    if verdict.judge == "structured" and _slot_holder(verdict.rationale) is not None:
        detail = f"not reinstated: {verdict.rationale} ({judged})"
    else:
        detail = (
            f"not reinstated: {verdict.by} {verdict.relation or 'contradicts'} it ({judged}"
            + (f": {verdict.rationale}" if verdict.rationale else "")
            + ")"
        )
    record(view, plan, verdict.key, NOT_REINSTATED, [source], detail)


def slot_holder_of(verdict: Rejudged) -> Optional[str]:
    """The value holding the slot a structured slot verdict names, or None."""
    return _slot_holder(verdict.rationale) if verdict.judge == "structured" else None


# the structured judge's words when another value of a single-valued slot keeps a value dead
SLOT_HELD = " holds another value of the single-valued "


def _slot_holder(rationale: str) -> Optional[str]:
    """The key a slot verdict's rationale starts with ("F12 holds another value of ..."), or None."""
    head, held, _ = rationale.partition(SLOT_HELD)
    return head if held and head and not any(c.isspace() or c in ":()" for c in head) else None


class SlotHeld(NamedTuple):
    """Why a value stays dead when another value holds its slot, read from its record."""

    holder: str  # the value holding the slot
    reason: str  # "F12 holds another value of the single-valued 'lives in' of 'Ann': ..."
    judged: str  # "structured, confidence 0.90"


_HELD_NOW = re.compile(
    r"not reinstated: (?P<reason>.+) \((?P<judged>structured(?:, confidence [0-9.]+)?)\)", re.S
)
# the detail as written before it named the holder: "not reinstated: F13 contradicts it
# (structured, confidence 0.90: F12 holds another value ...)", F13 being the revision's fact
_HELD_BEFORE = re.compile(
    r"not reinstated: \S+ \w+ it \((?P<judged>structured(?:, confidence [0-9.]+)?): (?P<reason>.+)\)", re.S
)


def slot_held(detail: str) -> Optional[SlotHeld]:
    """A ``not_reinstated`` record's detail, when another value holding the single-valued slot is
    what keeps the value dead (either spelling of the detail); None for any other reason (a
    fact or a judge contradicting it: the record's cause)."""
    for pattern in (_HELD_NOW, _HELD_BEFORE):
        found = pattern.fullmatch(detail or "")
        if found is not None:
            holder = _slot_holder(found["reason"])
            if holder is not None:
                return SlotHeld(holder, found["reason"], found["judged"])
    return None


def kept_dead_note(kept: list[tuple[str, str]], by: str) -> str:
    """A revision's or resolve's note on the values re-judging kept dead, ``(key, detail)`` each:
    the holder of the slot when another value holding it is the reason, else ``by`` (the new
    fact, or the winner) contradicting it."""
    held: dict[str, list[str]] = {}
    plain: list[str] = []
    for key, detail in kept:
        found = slot_held(detail)
        if found is None:
            plain.append(key)
        else:
            held.setdefault(found.holder, []).append(key)
    said = [f"{', '.join(plain)} stay(s) dead: {by} contradicts it too (not reinstated)"] if plain else []
    said += [
        f"{', '.join(keys)} stay(s) dead: {holder} holds another value of its single-valued slot (not reinstated)"
        for holder, keys in held.items()
    ]
    return "; ".join(said)


def undecided_detail(keys: list[str], fact_key: Optional[str]) -> str:
    against = f" whether {fact_key} contradicts it" if fact_key else ""
    return (
        f"reinstated without being re-judged: no judge could decide{against} (give the fact as a triple "
        "'S|P|O' for evidence stored with subject/predicate/object, or set LLM_API_KEY for the LLM judge)"
    )


def remember_undecided(plan: Plan, keys: list[str]) -> None:
    """Evidence that comes back un-judged: its reinstatement record says so."""
    fact_key = plan.new_node.key if plan.new_node is not None else next(iter(plan.meta.seeds), None)
    notes = plan.meta.reinstate_notes
    for key in keys:
        notes[key] = undecided_detail([key], fact_key)


__all__ = [
    "NOT_REINSTATED",
    "Rejudged",
    "SlotHeld",
    "alive_after",
    "keep_dead",
    "kept_dead_note",
    "outcome_labels",
    "remember_undecided",
    "returning",
    "seeds_of",
    "slot_held",
    "undecided_detail",
]
