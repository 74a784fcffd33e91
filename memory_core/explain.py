"""``explain KEY``: why a node is in its state, from the revision log.

Every change a revision or load made is logged with its rule, its cause (the
nodes that triggered it) and its epoch, forgotten nodes included, so the chain
can be followed back to the fact that started it.
"""

from __future__ import annotations

from .journal import Journal
from .models import normalise_key

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
}


def sentence(rule: str, cause: list[str], detail: str = "") -> str:
    text = RULE_TEXT.get(rule, rule).format(cause=", ".join(cause) or "-")
    return f"{text} ({detail})" if detail else text


def explain(journal: Journal, key: str) -> dict:
    wanted = normalise_key(key)
    events, canonical, undone = [], None, set()
    entries = list(journal.entries())
    for entry in entries:
        if entry.get("kind") == "undo":
            undone.add(entry.get("undoes"))
    for entry in entries:
        epoch, kind = entry["epoch"], entry.get("kind")
        base = {"epoch": epoch, "at": entry.get("at"), "fact": entry.get("fact"), "undone": epoch in undone}
        if kind == "load" and any(normalise_key(k) == wanted for k in entry.get("added", [])):
            canonical = canonical or next(k for k in entry["added"] if normalise_key(k) == wanted)
            events.append(dict(base, rule="loaded", text=f"loaded from investigation {entry.get('question')}"))
        if kind == "revise" and entry.get("new_evidence") and normalise_key(entry["new_evidence"]) == wanted:
            canonical = canonical or entry["new_evidence"]
            events.append(dict(base, rule="recorded", text="recorded as new evidence"))
        if kind == "undo":
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    events.append(dict(base, rule="undo", text=f"undo of epoch {entry.get('undoes')}: back to {change['after']['state']}"))
        else:
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    canonical = canonical or change["key"]
                    events.append(dict(base, rule=change["rule"], cause=change["cause"], state=change["after"]["state"],
                                       text=sentence(change["rule"], change["cause"], change.get("detail", ""))))
            for gone in entry.get("forgotten", []):
                if normalise_key(gone) == wanted:
                    events.append(dict(base, rule="orphaned", state="forgotten", text=sentence("orphaned", [])))
    return {"key": canonical or key, "known": bool(events), "events": events}


def why_index(journal: Journal) -> dict[str, str]:
    """The latest reason for every key that ever changed state (for the viewer)."""
    why = {}
    for entry in journal.entries():
        for change in entry.get("changes", []):
            prefix = f"epoch {entry['epoch']}: "
            if entry.get("kind") == "undo":
                why[change["key"]] = prefix + f"restored by undo of epoch {entry.get('undoes')}"
            else:
                why[change["key"]] = prefix + sentence(change["rule"], change["cause"], change.get("detail", ""))
    return why
