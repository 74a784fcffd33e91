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

from memory_core.core.beliefs import ALIVE, BeliefView
from memory_core.core.keys import normalise_key

RULE_TEXT = {
    "contradicted": "refuted: contradicted by new evidence {cause}",
    "superseded_by_fact": "superseded by new evidence {cause}",
    "justification_lost": "invalidated: it rested on {cause}, now dead",
    "noncritical_decay": "weakened: non-critical dependency {cause} died",
    "support_lost": "superseded: lost its supporting evidence; rival promoted ({cause})",
    "weakened_no_rival": "weakened: lost its support {cause}, no supported rival",
    "promoted": "promoted over {cause}",
    "rebalanced": "weight lowered so the promoted rival {cause} stays on top",
    "orphaned": "forgotten: dead, and nothing alive consumes or supersedes it",
    "outranked": "refuted: recorded, but {cause} won the contradiction",
    "disputed": "disputed: neither side won ({cause})",
    "reinstated": "reinstated: alive again (cause: {cause})",
    "resolved": "alive again: its dispute was resolved in its favour ({cause} lost)",
    "demoted": "promotion undone: {cause} has its support back",
    "not_reinstated": "stays dead: its refuter died, but {cause} contradicts it too",
}


def sentence(rule: str, cause: list[str], detail: str = "") -> str:
    text = RULE_TEXT.get(rule, rule).format(cause=", ".join(cause) or "-")
    return f"{text} ({detail})" if detail else text


def history(entries: Iterable[dict], key: str) -> dict:
    wanted = normalise_key(key)
    events, canonical, undone = [], None, set()
    entries = list(entries)
    for entry in entries:
        if entry.get("kind") == "undo":
            undone.add(entry.get("undoes"))
    for entry in entries:
        epoch, kind = entry["epoch"], entry.get("kind")
        base = {"epoch": epoch, "at": entry.get("at"), "fact": entry.get("fact"), "undone": epoch in undone}
        if kind == "load" and any(normalise_key(k) == wanted for k in entry.get("added", [])):
            canonical = canonical or next(k for k in entry["added"] if normalise_key(k) == wanted)
            events.append(dict(base, rule="loaded", text=f"loaded from investigation {entry.get('question')}"))
        if kind == "revise":
            recorded = entry.get("facts") or ([entry] if entry.get("new_evidence") else [])
            for item in recorded:
                if item.get("new_evidence") and normalise_key(item["new_evidence"]) == wanted:
                    canonical = canonical or item["new_evidence"]
                    batch = f" (one of {len(recorded)} facts revised together)" if len(recorded) > 1 else ""
                    events.append(dict(base, fact=item.get("fact"), rule="recorded", text="recorded as new evidence" + batch))
        if kind == "undo":
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    events.append(dict(base, rule="undo", text=f"undo of epoch {entry.get('undoes')}: back to {change['after']['state']}"))
        else:
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    canonical = canonical or change["key"]
                    events.append(dict(base, fact=change.get("fact", base["fact"]), rule=change["rule"],
                                       cause=change["cause"], state=change["after"]["state"],
                                       text=sentence(change["rule"], change["cause"], change.get("detail", ""))))
            for gone in entry.get("forgotten", []):
                if normalise_key(gone) == wanted:
                    events.append(dict(base, rule="orphaned", state="forgotten", text=sentence("orphaned", [])))
    return {"key": canonical or key, "known": bool(events), "events": events}


def why_index(entries: Iterable[dict]) -> dict[str, str]:
    """The latest reason for every key that ever changed state (for the viewer)."""
    why = {}
    for entry in entries:
        for change in entry.get("changes", []):
            prefix = f"epoch {entry['epoch']}: "
            if entry.get("kind") == "undo":
                why[change["key"]] = prefix + f"restored by undo of epoch {entry.get('undoes')}"
            else:
                why[change["key"]] = prefix + sentence(change["rule"], change["cause"], change.get("detail", ""))
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
            return {"key": key, "state": node.state, "premise": False, "justification": group or None,
                    "antecedents": [why_alive(view, a, seen) for a in antecedents]}
    return {"key": key, "state": node.state, "premise": False, "justification": None, "antecedents": [],
            "note": "alive, but no justification holds (check reports it)"}


def revision_log(entries: Iterable[dict]) -> list[dict]:
    """Every logged change as one flat row (the viewer's log)."""
    keep = ("epoch", "kind", "at", "fact", "new_evidence", "judge", "question", "undoes")
    result = []
    for entry in entries:
        base = {k: entry[k] for k in keep if k in entry}
        for change in entry.get("changes", []):
            result.append(dict(base, key=change["key"], rule=change["rule"], cause=change["cause"],
                               detail=change.get("detail", ""),
                               **{"from": change["before"]["state"], "to": change["after"]["state"]}))
        for gone in entry.get("forgotten", []):
            result.append(dict(base, key=gone, rule="orphaned", cause=[], detail="forgotten from graph and vector store",
                               **{"from": None, "to": "forgotten"}))
    return result
