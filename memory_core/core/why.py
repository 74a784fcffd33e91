"""Why a node is in its state: pure functions over the revision log and a belief view.

* :func:`history` follows the log: every change a revision, load, undo or repair
  made is logged with its rule, its cause (the nodes that triggered it) and its
  epoch, forgotten nodes included, so the chain can be followed back to the fact
  that started it ("why is K dead?").
* :func:`why_alive` reads the current graph, as a JTMS's ``why`` does: the
  justification that holds an alive node now, recursively down to premises
  ("why is K alive?").
"""

from __future__ import annotations

from typing import Iterable, Optional

from memory_core.core.vocabulary import Rule
from memory_core.core.beliefs import ALIVE, BeliefView
from memory_core.core.keys import normalise_key

RULE_TEXT = {
    Rule.CONTRADICTED: "refuted: contradicted by {cause}",
    Rule.SUPERSEDED_BY_FACT: "superseded by new evidence {cause}",
    Rule.JUSTIFICATION_LOST: "invalidated: it rested on {cause}, now dead",
    Rule.NONCRITICAL_DECAY: "weakened: non-critical dependency {cause} died",
    Rule.SUPPORT_LOST: "superseded: lost its supporting evidence; rival promoted ({cause})",
    Rule.WEAKENED_NO_RIVAL: "weakened: lost its support {cause}, no supported rival",
    Rule.PROMOTED: "promoted over {cause}",
    Rule.REBALANCED: "weight lowered so the promoted rival {cause} stays on top",
    Rule.ORPHANED: "forgotten: dead, and nothing alive consumes or supersedes it",
    Rule.VALIDITY_ENDED: "superseded in time: {detail}",
    Rule.VALIDITY_SHORTENED: "its validity ends earlier: {detail}",
    Rule.OUTRANKED: "refuted: recorded, but {cause} won the contradiction",
    Rule.DISPUTED: "disputed: neither side won ({cause})",
    Rule.REINSTATED: "reinstated: alive again (cause: {cause})",
    Rule.RESOLVED: "alive again: its dispute was resolved in its favour ({cause} lost)",
    Rule.DEMOTED: "promotion undone: {cause} has its support back",
    Rule.NOT_REINSTATED: "stays dead: its refuter died, but {cause} contradicts it too",
}


def sentence(rule: str, cause: list[str], detail: str = "") -> str:
    template = RULE_TEXT.get(rule, rule)
    if "{detail}" in template:
        return template.format(cause=", ".join(cause) or "-", detail=detail or "-")
    text = template.format(cause=", ".join(cause) or "-")
    return f"{text} ({detail})" if detail else text


def history(entries: Iterable[dict], key: str) -> dict:
    """Every logged event of ``key`` (each with its epoch, rule, state, cause and text) and
    its fate when it is no longer stored: ``"forgotten"`` (a revision forgot it) or
    ``"removed"`` (an undo removed what added it: ``removed_by_undo`` is the undone epoch)."""
    wanted = normalise_key(key)
    events, canonical, undone = [], None, set()
    entries = list(entries)
    by_epoch = {e.get("epoch"): e for e in entries}
    for entry in entries:
        if entry.get("kind") == "undo":
            undone.add(entry.get("undoes"))
    fate, removed_by = None, None

    def mine(keys) -> Optional[str]:
        return next((k for k in keys or [] if normalise_key(k) == wanted), None)

    for entry in entries:
        epoch, kind = entry["epoch"], entry.get("kind")
        base = {"epoch": epoch, "at": entry.get("at"), "fact": entry.get("fact"), "undone": epoch in undone}
        if kind == "load" and mine(entry.get("added")):
            canonical = canonical or mine(entry.get("added"))
            entered = _entered(entry, wanted)
            events.append(
                dict(
                    base,
                    rule="loaded",
                    state=entered,
                    cause=[],
                    text=f"loaded from investigation {entry.get('question')} ({entered})",
                )
            )
            fate = None
        if kind == "revise":
            recorded = entry.get("facts") or ([entry] if entry.get("new_evidence") else [])
            for item in recorded:
                if item.get("new_evidence") and normalise_key(item["new_evidence"]) == wanted:
                    canonical = canonical or item["new_evidence"]
                    batch = f" (one of {len(recorded)} facts revised together)" if len(recorded) > 1 else ""
                    entered = _entered(entry, wanted)
                    acted = [
                        c.get("key")
                        for c in item.get("candidates") or []
                        if c.get("relation") in ("contradicts", "supersedes")
                    ]
                    events.append(
                        dict(
                            base,
                            fact=item.get("fact"),
                            rule="recorded",
                            state=entered,
                            cause=acted,
                            text=f"recorded as new evidence ({entered}){batch}",
                        )
                    )
                    fate = None
        if kind == "undo":
            target = by_epoch.get(entry.get("undoes"), {})
            told = False
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    told = True
                    events.append(
                        dict(
                            base,
                            rule="undo",
                            state=change["after"]["state"],
                            cause=[],
                            undoes=entry.get("undoes"),
                            text=f"undo of epoch {entry.get('undoes')}: back to {change['after']['state']}",
                        )
                    )
            gone = mine(entry.get("removed"))
            if gone:
                if mine(target.get("restored")):  # that change had brought it back from its tombstone
                    fate = "forgotten"
                    events.append(
                        dict(
                            base,
                            rule="undo",
                            state="forgotten",
                            cause=[],
                            undoes=entry.get("undoes"),
                            text=f"forgotten again: undo of epoch {entry.get('undoes')} reverted its "
                            "reinstatement",
                        )
                    )
                else:
                    fate, removed_by = "removed", entry.get("undoes")
                    events.append(
                        dict(
                            base,
                            rule="removed",
                            state="removed",
                            cause=[],
                            undoes=entry.get("undoes"),
                            text=f"removed by undo of epoch {entry.get('undoes')} (the change that added it)",
                        )
                    )
            back = mine(entry.get("restored")) or mine(target.get("forgotten"))
            if back and not gone:
                fate = None
            if back and not gone and not told:
                events.append(
                    dict(
                        base,
                        rule="undo",
                        state="restored",
                        cause=[],
                        undoes=entry.get("undoes"),
                        text=f"restored by undo of epoch {entry.get('undoes')} (it had forgotten it)",
                    )
                )
        else:
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    canonical = canonical or change["key"]
                    events.append(
                        dict(
                            base,
                            fact=change.get("fact", base["fact"]),
                            rule=change["rule"],
                            cause=change["cause"],
                            state=change["after"]["state"],
                            text=sentence(change["rule"], change["cause"], change.get("detail", "")),
                        )
                    )
            if mine(entry.get("restored")):
                fate = None
            if mine(entry.get("forgotten")):
                fate = "forgotten"
                by = [entry["new_evidence"]] if entry.get("new_evidence") else []
                events.append(
                    dict(
                        base,
                        rule=Rule.ORPHANED,
                        state="forgotten",
                        cause=by,
                        text=sentence(Rule.ORPHANED, []),
                    )
                )
    result = {"key": canonical or key, "known": bool(events), "events": events, "fate": fate}
    if fate == "removed":
        result["removed_by_undo"] = removed_by
    return result


def _entered(entry: dict, wanted: str) -> str:
    """The state a node entered with in a load or revision (its add_nodes image)."""
    for node in (entry.get("intent") or {}).get("add_nodes", []):
        if normalise_key(node.get("key", "")) == wanted:
            return node.get("state", ALIVE)
    return ALIVE


def why_index(entries: Iterable[dict]) -> dict[str, str]:
    """The latest reason for every key that ever changed state (for the viewer)."""
    why = {}
    for entry in entries:
        for change in entry.get("changes", []):
            prefix = f"epoch {entry['epoch']}: "
            if entry.get("kind") == "undo":
                why[change["key"]] = prefix + f"restored by undo of epoch {entry.get('undoes')}"
            else:
                why[change["key"]] = prefix + sentence(
                    change["rule"], change["cause"], change.get("detail", "")
                )
    return why


def why_alive(view: BeliefView, key: str, _seen: Optional[set] = None) -> Optional[dict]:
    """The justification holding an alive node, recursively to premises::

        {"key", "state", "premise": bool, "justification": group name or None,
         "antecedents": [why_alive(antecedent) ...]}

    A premise (no critical ``depends_on``) holds by itself. Of several holding
    justifications the first in group order is shown (all of its antecedents are
    alive). None for a node that is not alive or not in the view."""
    node = view.nodes.get(key)
    if node is None or node.state != ALIVE:
        return None
    seen = set(_seen or ()) | {key}
    justifications = view.justifications(key)
    if not justifications:
        return {"key": key, "state": node.state, "premise": True, "justification": None, "antecedents": []}
    for group, antecedents in justifications:
        if all(view.state(a) == ALIVE and a not in seen for a in antecedents):
            return {
                "key": key,
                "state": node.state,
                "premise": False,
                "justification": group or None,
                "antecedents": [why_alive(view, a, seen) for a in antecedents],
            }
    return {
        "key": key,
        "state": node.state,
        "premise": False,
        "justification": None,
        "antecedents": [],
        "note": "alive, but no justification holds (check reports it)",
    }


def support_of(view: BeliefView, key: str, node_ident: str = "", forgotten: Iterable[dict] = ()) -> dict:
    """A hypothesis's support as the promotion rule reads it: ``score`` = Σ weight of alive
    supporters − Σ weight of alive refuters; ``remaining``: the alive supporters; ``disputed``:
    supporters in an open dispute (they count for nothing until it is decided); ``lost``:
    supporters that are dead now (with their state), forgotten ones included (from their
    tombstones: ``forgotten``, with ``node_ident`` the hypothesis's node id); ``refuters``:
    the alive nodes refuting it. Each entry is ``{"key", "state", "weight"}``."""
    remaining, disputed, lost, refuters = [], [], [], []
    for edge in view.in_edges(key):
        if edge.kind not in ("supports", "refutes"):
            continue
        state = view.state(edge.src)
        item = {"key": edge.src, "state": state, "weight": edge.weight}
        if edge.kind == "refutes":
            if state == ALIVE:
                refuters.append(item)
        elif state == ALIVE:
            remaining.append(item)
        elif state == "disputed":
            disputed.append(item)
        else:
            lost.append(item)
    for tomb in forgotten:
        for src, dst, rel, props in tomb.get("edges", []):
            if rel == "supports" and dst == node_ident and src == tomb.get("id"):
                lost.append(
                    {
                        "key": tomb.get("key"),
                        "state": "forgotten",
                        "weight": float((props or {}).get("weight", 1.0)),
                    }
                )
    node = view.nodes.get(key)
    return {
        "score": round(view.support(key), 6),
        "weight": None if node is None else node.weight,
        "remaining": sorted(remaining, key=lambda i: i["key"]),
        "disputed": sorted(disputed, key=lambda i: i["key"]),
        "lost": sorted(lost, key=lambda i: i["key"]),
        "refuters": sorted(refuters, key=lambda i: i["key"]),
    }


def revision_log(entries: Iterable[dict]) -> list[dict]:
    """Every logged change as one flat row (the viewer's log)."""
    keep = ("epoch", "kind", "at", "fact", "new_evidence", "judge", "question", "undoes")
    result = []
    for entry in entries:
        base = {k: entry[k] for k in keep if k in entry}
        for change in entry.get("changes", []):
            result.append(
                dict(
                    base,
                    key=change["key"],
                    rule=change["rule"],
                    cause=change["cause"],
                    detail=change.get("detail", ""),
                    **{"from": change["before"]["state"], "to": change["after"]["state"]},
                )
            )
        for gone in entry.get("forgotten", []):
            result.append(
                dict(
                    base,
                    key=gone,
                    rule=Rule.ORPHANED,
                    cause=[],
                    detail="forgotten from graph and vector store",
                    **{"from": None, "to": "forgotten"},
                )
            )
    return result
