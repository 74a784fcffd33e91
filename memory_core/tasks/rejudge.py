"""Before a revision relabels: judge the evidence it would bring back (``core.reinstatement``).

Evidence stored dead whose refuter dies in this revision would hold again. It is
judged first against the revision's new facts (the structured judge where both
carry a triple; otherwise the LLM judge when a key is configured) and, for a
single-valued predicate, against the alive evidence stored under the same
subject and predicate. Contradicted evidence stays dead (the new fact supersedes
it); evidence no judge can decide about comes back as before, and the log says so.
The loop runs until nothing more would come back: keeping one node dead can
bring back what that node had refuted.
"""

from __future__ import annotations

from typing import Mapping, Optional, Union

from memory_core.core import reinstatement, validity
from memory_core.core.cardinality import multi_valued
from memory_core.core.keys import normalise_term, sp_key
from memory_core.core.beliefs import BeliefView
from memory_core.core.identity import node_id
from memory_core.core.plan import Plan
from memory_core.core.tms import L_ALIVE, L_DEAD, historical_node, label_of
from memory_core.core.vocabulary import SUPERSEDED
from memory_core.judging.judges import (
    ACT_THRESHOLD,
    JudgeError,
    LLMJudge,
    declarations_of,
    structured_verdict,
)
from memory_core.store.belief_store import BeliefStore, state_of
from memory_core.store.tms_io import merged
from memory_core.tasks.batch import FactJob

ACTS = ("contradicts", "supersedes")
MAX_ROUNDS = 64


def triple_of(props: dict) -> Optional[tuple[str, str, str]]:
    s, p, o = (props.get(k) for k in ("subject", "predicate", "object"))
    return (s, p, o) if s and p and o else None


def recorded_props(key: str, claim: str, question: Optional[str], triple: Optional[tuple]) -> dict:
    """A new fact of the revision as the store would hold it (what re-judging reads of it)."""
    props = {"key": key, "claim": claim, "question_key": question}
    if triple:
        props.update(subject=triple[0], predicate=triple[1], object=triple[2])
    return props


async def stored_props(
    store: BeliefStore, recorded: Mapping[str, dict], ghosts: Mapping[str, dict], keys: list[str]
) -> dict[str, dict]:
    """Stored properties of ``keys``: the revision's own new facts, forgotten nodes' tombstones, the store."""
    found: dict[str, dict] = {k: dict(recorded[k]) for k in keys if k in recorded}
    for key in keys:
        if key not in found and key in ghosts:
            found[key] = dict(ghosts[key].get("props") or {})
    rest = [k for k in keys if k not in found]
    if rest:
        found.update(await store.find_keys(rest))
    return found


async def held_same_sp(
    store: BeliefStore,
    recorded: Mapping[str, dict],
    view: BeliefView,
    new_labels: Mapping[str, str],
    sp: str,
    exclude: str,
) -> list[dict]:
    """The values stored under subject|predicate ``sp`` (this revision's new facts included)
    that hold once this revision is applied, in valid time: ``holds`` is ``alive``,
    ``disputed`` or ``historical`` (superseded in time); with ``key``, ``object``,
    ``valid_from``, ``valid_to`` (the view's interval where the view holds the node)."""

    def holds(key: str, props: Optional[dict]) -> str:
        """``alive``, ``disputed``, ``historical`` (superseded in time) or ``dead``."""
        node = view.nodes.get(key)
        if node is not None and historical_node(node):
            return "historical"
        if key in new_labels:
            return new_labels[key]
        if node is not None:
            return label_of(node.state)
        if props is None:
            return L_DEAD
        state = state_of(props)
        if state == SUPERSEDED and props.get("valid_to"):
            return "historical"
        return label_of(state)

    found: dict[str, dict] = {}
    for key, props in recorded.items():
        if key != exclude and props.get("subject") and sp_key(props["subject"], props["predicate"]) == sp:
            found[key] = {"key": key, "object": props["object"], "holds": holds(key, None)}
    for props in await store.nodes_by_sp(sp):
        stored_key = props.get("key")
        if stored_key and stored_key != exclude and stored_key not in found:
            found[stored_key] = {
                "key": stored_key,
                "object": props.get("object", ""),
                "valid_from": props.get("valid_from"),
                "valid_to": props.get("valid_to"),
                "holds": holds(stored_key, props),
            }
    for key, item in found.items():
        node = view.nodes.get(key)
        if node is not None:
            item["valid_from"], item["valid_to"] = node.valid_from, node.valid_to
    return sorted((o for o in found.values() if o["holds"] != L_DEAD), key=lambda o: o["key"])


async def _judge_in_slot(
    store: BeliefStore,
    recorded: Mapping[str, dict],
    view: BeliefView,
    plan: Plan,
    new_labels: Mapping[str, str],
    key: str,
    triple: tuple[str, str, str],
    by_key: str,
) -> Union[reinstatement.Rejudged, tuple[str, str], None]:
    """Returning evidence ``key`` with single-valued ``triple`` against the other values of its
    subject and predicate that hold once the revision is applied. Where time cannot order
    the two (either has no ``valid_from``), an alive other value contradicts it; where it can,
    it takes its place in the timeline (:func:`validity.returning_place`): a value that held
    when it starts contradicts it, and one that starts later ends it (a value the new fact
    ends at its start, when the fact holds, counts as ending there). Returns a
    :class:`reinstatement.Rejudged` (it stays dead), ``(date, cause)`` (it comes back held
    until ``date``), or None."""
    node = view.nodes[key]

    def held_by(detail: str) -> reinstatement.Rejudged:
        return reinstatement.Rejudged(key, by_key, "contradicts", 0.9, "structured", detail)

    sp = sp_key(triple[0], triple[1])  # a stored triple's parts are never empty (triple_of)
    same_sp = await held_same_sp(store, recorded, view, new_labels, sp, key) if sp is not None else []
    others = [o for o in same_sp if normalise_term(o.get("object", "")) != normalise_term(triple[2])]
    for other in others:
        if other["holds"] == "alive" and (node.valid_from is None or other.get("valid_from") is None):
            return held_by(
                f"{other['key']} holds another value of the single-valued {triple[1]!r} of {triple[0]!r}: "
                f"{other.get('object')!r}, not {triple[2]!r}"
            )
    fact = plan.new_node.key if plan.new_node is not None else None
    ends = plan.meta.fact_ends if fact and new_labels.get(fact) == L_ALIVE else None
    placed = validity.returning_place(
        (node.valid_from, node.valid_to),
        [(o["key"], (o.get("valid_from"), o.get("valid_to"))) for o in others],
        ends,
    )
    if placed is None:
        return None
    verdict, cause, start = placed
    if verdict == "until":
        return (start, cause)
    other = next(o for o in others if o["key"] == cause)
    return held_by(
        f"{cause} holds another value of the single-valued {triple[1]!r} of {triple[0]!r} "
        f"({other.get('object')!r}, valid from {start}) when its validity starts ({node.valid_from})"
    )


def _both_timed(view: BeliefView, fact: str, key: str) -> bool:
    """Whether new fact ``fact`` and returning evidence ``key`` both have a ``valid_from``: a
    value of one slot then ends another at its start rather than refuting it, for a value that
    comes back as for a stored one (rule 1d: ``_judge_in_slot``)."""
    a, b = view.nodes.get(fact), view.nodes.get(key)
    return a is not None and b is not None and a.valid_from is not None and b.valid_from is not None


async def rejudge_returning(
    store: BeliefStore,
    view: BeliefView,
    plan: Plan,
    facts: list[tuple[str, str, Optional[tuple]]],
    *,
    use_llm: bool,
    recorded: Mapping[str, dict] = {},
    ghosts: Mapping[str, dict] = {},
) -> list[reinstatement.Rejudged]:
    """``facts``: the revision's new facts as (key, text, triple or None); the first one
    is the one that supersedes what stays dead. ``recorded``: the properties of the facts
    the revision has recorded so far (key -> :func:`recorded_props`); ``ghosts``: the
    forgotten nodes in ``view`` (key -> tombstone). Returns the verdicts applied."""
    seeds, forced = reinstatement.seeds_of(plan)
    judged: set[str] = set()
    applied: list[reinstatement.Rejudged] = []
    undecided: list[str] = []
    by_key = facts[0][0] if facts else None
    for _ in range(MAX_ROUNDS):
        back, new_labels = reinstatement.returning(view, seeds, forced, skip=judged)
        if not back or by_key is None:
            break
        judged.update(back)
        props = await stored_props(store, recorded, ghosts, back)
        declared = await store.declared_predicates(props.values())
        verdicts: dict[str, reinstatement.Rejudged] = {}
        ask_llm: list[str] = []
        for key in back:
            mine = props.get(key) or {}
            decl = declarations_of(declared, mine)
            triple = triple_of(mine)
            decided = False
            for fkey, _, ftriple in facts:
                if not (ftriple and triple):
                    continue
                v = structured_verdict(ftriple, mine, decl)
                if v is None:
                    continue
                decided = True
                if v.relation in ACTS and _both_timed(view, fkey, key):
                    continue  # valid time orders the two: its place in the slot's timeline decides
                if v.relation in ACTS and v.confidence >= ACT_THRESHOLD:
                    verdicts[key] = reinstatement.Rejudged(
                        key, by_key, v.relation, v.confidence, "structured", f"{fkey}: {v.rationale}"
                    )
                    break
            if key not in verdicts and triple and not multi_valued(decl, triple[1]):
                slot = await _judge_in_slot(store, recorded, view, plan, new_labels, key, triple, by_key)
                if isinstance(slot, reinstatement.Rejudged):
                    verdicts[key] = slot
                elif slot is not None:  # it comes back held only until then
                    plan.meta.returning_until[key] = slot
            if key in verdicts:
                continue
            if not decided:
                ask_llm.append(key)
        if ask_llm and use_llm:
            fkey, ftext, _ = facts[0]
            try:
                answers = await LLMJudge(store.settings).judge(
                    ftext,
                    [(k, (props.get(k) or {}).get("claim") or view.nodes[k].text) for k in ask_llm],
                    predicates=None,
                )
            except JudgeError:
                answers = {}
            for key in ask_llm:
                v = answers.get(key)
                if v is None:
                    undecided.append(key)
                elif v.relation in ACTS and v.confidence >= ACT_THRESHOLD:
                    verdicts[key] = reinstatement.Rejudged(
                        key, by_key, v.relation, v.confidence, "llm", v.rationale
                    )
        else:
            undecided += ask_llm
        if not verdicts:
            break
        # a value holding the slot supersedes what it keeps dead: read into the view first
        holders = {h for v in verdicts.values() if (h := reinstatement.slot_holder_of(v)) is not None}
        missing = sorted(h for h in holders if h not in view.nodes)
        if missing:
            await merged(view, await store.affected_view([node_id("evidence", k) for k in missing]))
        for key in sorted(verdicts):
            reinstatement.keep_dead(view, plan, verdicts[key])
            applied.append(verdicts[key])
    if undecided:
        reinstatement.remember_undecided(plan, undecided)
    return applied


async def judge_batch_facts_by_cardinality(job: FactJob) -> None:
    """An earlier fact of the same batch was judged by the structured judge before its
    question was known (so as single-valued): now that it is recorded, judge it again
    with its question's predicate declarations (another value of a ``many`` predicate
    is not a contradiction), as a revision one at a time would."""
    batch, request = job.batch, job.request
    if not request.triple or job.narrowed is None:
        return
    # the earlier facts recorded with a triple (this fact's plan has not begun: every fact
    # recorded so far is an earlier one)
    for cand in job.narrowed.candidates:
        props = batch.recorded.get(cand.key)
        if props is None or "subject" not in props or cand.judge != "structured":
            continue
        question = props["question_key"]
        declared = await batch.declared(question) if question is not None else None
        v = structured_verdict(
            request.triple,
            {"subject": props["subject"], "predicate": props["predicate"], "object": props["object"]},
            declared,
        )
        if v is not None:
            cand.relation, cand.confidence, cand.rationale = v.relation, v.confidence, v.rationale


__all__ = ["judge_batch_facts_by_cardinality", "recorded_props", "rejudge_returning"]
