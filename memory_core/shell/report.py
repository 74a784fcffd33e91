"""Human-readable output of the CLI (the ``--json`` forms are the contracts)."""

from __future__ import annotations

import shlex
from memory_core.core import validity


def _short(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def interval(valid_from, valid_to) -> str:
    """A valid-time interval as text: half-open, ``[2010-01-01, 2018-03-01)``; an open
    end is ``…``."""
    return f"[{valid_from or '…'}, {valid_to or '…'})"


def print_load(r: dict) -> None:
    if r.get("epoch"):
        print(
            f"loaded investigation {r['question']} (epoch {r['epoch']}): "
            f"{len(r['added'])} node(s) added, {len(r['edges_added'])} edge(s) added"
        )
        if r["added"]:
            print("  nodes: " + ", ".join(r["added"]))
        if r["invalidated"]:
            print(
                "  entered invalidated (their justifications were already dead): "
                + ", ".join(r["invalidated"])
            )
    else:
        print(f"investigation {r['question']}: nothing new to load")
    for note in r.get("notes", []):
        print(f"  note: {note}")


def print_status(r: dict) -> None:
    if r.get("epoch") is not None:  # status --epoch N
        print(f"as it stood after epoch {r['epoch']} (rebuilt from the revision log)")
    if not r["nodes"]:
        if r.get("epoch") is not None:  # the root holds what was loaded since: nothing to load now
            print(
                "no investigations then"
                + (" (epoch 0 is the data root before its first load)" if r["epoch"] == 0 else "")
            )
        else:
            print("no investigations in this data root (load one: python main.py load FILE)")
        return
    timed = any(n.get("valid_from") or n.get("valid_to") for n in r["nodes"])
    valid = f" {'VALID':<26}" if timed else ""
    # every key whole, as --json gives it: a key is how a node is named on the command line, and
    # two long keys cut to the column's width would read as one (a readable key is ~30 characters)
    wide = max([14] + [len(n["key"]) for n in r["nodes"]])
    print(f"{'KEY':<{wide}} {'TYPE':<11} {'STATE':<12} {'WEIGHT':>6} {'EPOCH':>5} {'CONF':>5}{valid}  TEXT")
    for n in r["nodes"]:
        conf = "" if n.get("confidence") is None else f"{n['confidence']:.2f}"
        span = ""
        if timed:
            held = n.get("valid_from") or n.get("valid_to")
            span = f" {interval(n.get('valid_from'), n.get('valid_to')) if held else '':<26}"
        print(
            f"{n['key']:<{wide}} {n['type']:<11} {n['state']:<12} {n['feedback_weight']:>6.2f} "
            f"{n['epoch']:>5} {conf:>5}{span}  {_short(n['text'], 70)}"
        )
    if r["edges"]:
        print("\nEDGES")
        for e in r["edges"]:
            props = {k: v for k, v in e.items() if k not in ("type", "from", "to") and v is not None}
            extra = " ".join(f"{k}={v}" for k, v in props.items())
            print(f"  {e['from']} -{e['type']}-> {e['to']}  {extra}".rstrip())


# what the caller asked beside the decision: repeated in the commands printed for the decision
_KEPT = ("triple", "key", "source", "asserted_at", "trust", "policy", "valid_from", "valid_to", "inquiry")
_DECIDED_WITH = ("supports", "refutes", "weight")


def flag(name: str, value: str) -> str:
    """``--name VALUE`` as a shell word pair the CLI's parser reads back: a value starting with
    ``-`` (a key may: ``-E1``) is joined to its flag (``--target=-E1``), which argparse would
    otherwise take for an option of its own ("expected one argument", exit 2)."""
    quoted = shlex.quote(value)
    return f"{name}={quoted}" if value.startswith("-") else f"{name} {quoted}"


def flags_of(request) -> str:
    """The flags of a revision request (a :class:`~memory_core.core.requests.RevisionRequest`)
    other than its decision (``--target``, ``--record``), as the CLI spells them: the ready
    commands printed when the caller has to decide repeat them, so deciding loses none (a
    ``--supports H`` given before the decision is part of it)."""
    from memory_core.core.fields import FIELDS

    flags = {f.name: f.flag for f in FIELDS}
    words = []
    for name in _KEPT + _DECIDED_WITH:
        value = getattr(request, name)
        if value is None:
            continue
        if name == "triple":
            value = "|".join(value)
        words.append(flag(flags[name], f"{value:g}" if isinstance(value, float) else str(value)))
    return " ".join(words)


def print_revision(r: dict, again: str = "python main.py", keep: str = "") -> None:
    """``again``: how the hints spell the command (with its ``--root``), for the ready
    ``--target`` commands printed when the caller has to decide; ``keep``: the flags the
    caller gave beside the decision (:func:`flags_of`), repeated in them."""
    keep = f" {keep}" if keep else ""
    print(f"fact: {_short(r['fact'], 100)}")
    for c in r.get("candidates", []):
        dist = "lookup" if c["distance"] is None else f"{c['distance']:.3f}"
        rank = f"#{c['rank']} " if c.get("rank") else ""
        lexical = f", lexical {c['lexical']:.2f}" if c.get("lexical") is not None else ""
        if c["relation"] is None:
            print(
                f"  candidate {rank}{c['key']}: gate-1 distance {dist}{lexical}; undecided - "
                f"{_short(c.get('claim', ''), 90)}"
            )
        else:
            print(
                f"  candidate {rank}{c['key']}: gate-1 distance {dist}{lexical}; judge says {c['relation']} "
                f"(confidence {c['confidence'] if c['confidence'] is not None else '-'}) - {_short(c['rationale'], 90)}"
            )
    if r.get("note"):
        print(f"  {r['note']}")
    if r.get("to_decide"):
        print("  you decide: read the candidates above; if the fact contradicts one, revise with its key:")
        for key in r["to_decide"]:
            print(f"    {again} revise {shlex.quote(r['fact'])} {flag('--target', key)}{keep}")
        bears = (
            ""
            if any(word.split("=")[0] in ("--supports", "--refutes") for word in keep.split())
            else " (add --supports H or --refutes H for the hypothesis it bears on)"
        )
        print(f"  if it contradicts none of them, record it{bears}:")
        print(f"    {again} revise {shlex.quote(r['fact'])} --record{keep}")
    if r.get("edges_added"):
        print(f"  edges added: {', '.join(r['edges_added'])}")
    preview = r.get("preview") if r.get("dry_run") else None
    if r.get("already_applied") or (not r.get("epoch") and not preview):
        return
    if preview:  # a dry run: the whole plan, marked as such
        print(
            f"  PREVIEW (dry run, nothing written): the revision would record {preview['new_evidence']} as epoch "
            f"{preview['epoch']} (judge: {r['judge']}) and apply:"
        )
    elif r.get("new_evidence"):
        print(
            f"  recorded as {r['new_evidence']} (judge: {r['judge']}, epoch {r['epoch']}, {r['elapsed_ms']:.0f} ms)"
        )
    else:
        print(f"  {r['judge']} (epoch {r['epoch']}, {r['elapsed_ms']:.0f} ms)")
    _print_validity(r.get("validity") or {})
    if r.get("intervals"):
        print(
            "  valid time: "
            + "; ".join(
                f"{k} {interval(v.get('valid_from'), v.get('valid_to'))}"
                + (f" (was until {v['was']})" if v.get("was") else (" (was open)" if "was" in v else ""))
                for k, v in r["intervals"].items()
            )
        )
    for d in r.get("decisions", []):
        print(f"  {d['reason']}")
    for label, key in (
        ("refuted", "refuted"),
        ("invalidated", "invalidated"),
        ("superseded", "superseded"),
        ("weakened", "weakened"),
        ("promoted", "promoted"),
        ("disputed", "disputed"),
        ("reinstated", "reinstated"),
        ("restored from tombstones (graph + vector)", "restored"),
        ("promotion undone", "demoted"),
        ("forgotten (graph + vector)", "forgotten"),
    ):
        if r.get(key):
            print(f"  {label}: {', '.join(r[key])}")
    if preview and not any(
        r.get(k)
        for k in (
            "refuted",
            "invalidated",
            "superseded",
            "weakened",
            "promoted",
            "disputed",
            "reinstated",
            "restored",
            "demoted",
            "forgotten",
        )
    ):
        print("  (no other node would change)")


# how a judged contradiction was read in valid time, in words (``validity`` of a revision's
# result); ``untimed`` is a contradiction as any other and ``one_side_untimed`` has its note
_VALIDITY_WORDS = {
    "disjoint": "valid at other times than the fact: no contradiction, left as they are",
    "ends_stored": "held until the fact starts",
    "new_precedes": "valid from a later date than the fact: the fact holds until the earliest of them starts",
    "same_period": "valid from the same date as the fact: a contradiction, decided by the policy",
}


def _print_validity(validity: dict) -> None:
    """One line per way the revision read a contradiction in valid time: without it, a
    candidate the judge says the fact contradicts, left as it is (``disjoint``), reads as a
    contradiction ignored."""
    for case, words in _VALIDITY_WORDS.items():
        keys = [k for k, c in validity.items() if c == case]
        if keys:
            print(f"  valid time read: {', '.join(keys)} {words} ({case})")


def print_explain(r: dict) -> None:
    if not r["known"]:
        print(f"{r['key']}: no record in the revision log (never loaded or changed in this data root)")
        return
    now = r.get("state")
    if now == "removed":
        now = (
            f"removed by undo of epoch {r['removed_by_undo']}"
            if r.get("removed_by_undo")
            else "removed by an undo"
        )
    state = f" (now {now})" if now else ""
    print(f"why {r['key']}{state}:")
    for e in r["events"]:
        undone = " [undone]" if e.get("undone") else ""
        fact = f"  <- fact: {_short(e['fact'], 70)}" if e.get("fact") and e["rule"] not in ("loaded",) else ""
        print(f"  epoch {e['epoch']}: {e['text']}{undone}{fact}")
    if r.get("why_alive"):
        print("alive because:")
        _print_why(r["why_alive"], "  ")
    if r.get("why_dead"):  # what keeps a dead or disputed node out now
        print(f"{r['state']} now because:")
        for reason in r["why_dead"]["reasons"]:
            print(f"  {reason}")
    support = r.get("support")
    if support:

        def names(items):
            return ", ".join(f"{i['key']} ({i['state']}, weight {i['weight']:g})" for i in items) or "none"

        print(
            f"support score {support['score']:g} (alive supporters' weights minus alive refuters'; "
            f"hypothesis weight {support['weight']:g}):"
        )
        print(f"  remaining supporters: {names(support['remaining'])}")
        if support.get("disputed"):
            print(f"  disputed supporters (count for nothing until decided): {names(support['disputed'])}")
        print(f"  lost supporters: {names(support['lost'])}")
        if support.get("refuters"):
            print(f"  refuted by: {names(support['refuters'])}")


def _print_why(node: dict, indent: str) -> None:
    if node is None:
        return
    if node.get("premise"):
        print(f"{indent}{node['key']}: a premise (rests on nothing)")
        return
    if node.get("note"):
        print(f"{indent}{node['key']}: {node['note']}")
        return
    group = f" (justification {node['justification']})" if node.get("justification") else ""
    names = ", ".join(a["key"] for a in node["antecedents"] if a)
    print(f"{indent}{node['key']} rests on {names}{group}, all alive")
    for antecedent in node["antecedents"]:
        _print_why(antecedent, indent + "  ")


def print_recall(r: dict) -> None:
    if r.get("epoch") is not None:  # recall --epoch N
        print(f"as it stood after epoch {r['epoch']}")
    label = "path" if r.get("path") else "question"
    scope = f" (inquiry {r['inquiry']})" if r.get("inquiry") else ""
    when = ""
    if r.get("as_of"):
        read, today = r.get("as_of_from_question"), r.get("as_of_today")
        when = f" (as of {r['as_of']}" + (
            f", read from its words '{read}')" if read else f": {today})" if today else ")"
        )
    print(f"{label}: {r['question']}{when}{scope}")
    order = r.get("order_from_question")
    if order is not None:  # a question about the value before or after another (at the time above)
        anchor, side = order["anchor"], "before" if order["before"] else "after"
        print(
            f"  read from its words '{order['words']}': the value {side} {anchor['key']} ({anchor['text'].rstrip('.')})"
        )
    f, b = r["falsify"], r["baseline"]
    mark_f = r.get("scoreboard", {}).get("falsify_mark", "")
    mark_b = r.get("scoreboard", {}).get("baseline_mark", "")
    print(f"  FALSIFY recall : {f['answer']} {mark_f}".rstrip())
    print(f"    nodes: {', '.join(f['nodes']) or '-'}; sources: {'; '.join(f['sources']) or '-'}")
    for hop in (r.get("path") or {}).get("hops", []):
        values = ", ".join(f"{v['object']} ({v['key']})" for v in hop["values"]) or "none alive"
        dead = (
            "; not used: " + ", ".join(f"{v['key']} ({v['state']})" for v in hop["not_used"])
            if hop.get("not_used")
            else ""
        )
        print(f"    {' / '.join(hop['subjects'])} -{hop['predicate']}-> {values}{dead}")
    for u in f.get("unsupported", []):
        print(f"    unsupported: {u['key']} ({u['text']}): no alive evidence supports it")
    if f.get("untimed"):
        print(
            f"    no valid time recorded (taken as holding {validity.said(r['as_of'])}): {', '.join(f['untimed'])}"
        )
    for d in f.get("disputes", []):
        rests = f"; resting on it: {', '.join(d['rests_on_it'])}" if d.get("rests_on_it") else ""
        print(
            f"    disputed: {d['keys'][0]} vs {d['keys'][1]} (both kept, neither used{rests}; "
            f"resolve LOSER --winner WINNER ends it)"
        )
    if r.get("stored_questions") is not None:
        stored = "; ".join(f"{q['key']}: {q['question']}" for q in r["stored_questions"]) or "none"
        print(f"    stored questions: {stored}")
    print(f"  Plain-RAG      : {b['answer']} {mark_b}".rstrip())
    print(f"    nodes: {', '.join(b['nodes']) or '-'}; sources: {'; '.join(b['sources']) or '-'}")
    print(f"  verdict: {r['verdict']}")


def print_undo(r: dict) -> None:
    if not r.get("undone"):
        print(r.get("note", "nothing to undo"))
        return
    print(f"undid epoch {r['undone']} ({r['kind']}); now at epoch {r['epoch']}")
    for label in ("restored", "removed", "reverted"):
        if r.get(label):
            print(f"  {label}: {', '.join(r[label])}")


def print_check(r: dict) -> None:
    if r.get("recovered_at_open"):
        print(f"  recovered on open: {r['recovered_at_open']}")
    if r["clean"]:
        print("check: clean (stores agree, every state obeys the revision rules, journal complete)")
    for p in r.get("problems", []):
        print(f"  problem: {p}")
    for a in r.get("repaired", []):
        print(f"  repaired: {a}")
    for what in r.get("cannot_restore", []):  # each says "cannot repair: ..." or "cannot restore ..."
        print(f"  {what}")
    if r.get("repaired") is not None and not r["clean"]:
        print("  after repair: " + ("clean" if r.get("clean_after_repair") else "problems remain"))
        remaining = r.get("problems_after_repair") or []
        if remaining != r.get("problems", []):  # a repair fixed some: name the ones left
            for p in remaining:
                print(f"    still: {p}")
