"""``undo``: revert the last revision (or load) entirely.

The log line of every change embeds its intent — before/after images and
tombstones — so undo applies the inverse: forgotten nodes come back in both
stores (re-embedded with the same model, so the same vectors) with their
properties, states, weights, edges and epochs; the new fact and anything else
added is removed; every changed state, weight and confidence returns to its
before image. The undo is itself journalled (all or nothing) and logged, and
undo again reverts the change before. A repair by ``check --repair`` is a barrier:
it is not undone, and nothing before it is.
"""

from __future__ import annotations

import time

from memory_core.core.results import UndoResult
from memory_core.store.journal import inverse
from memory_core.store.stores import Stores
from memory_core.store import writer


async def undo(stores: Stores) -> UndoResult:
    entry = stores.journal.last_undoable()
    if entry is None:
        return {"undone": None, "note": "nothing to undo: no revision or load left to revert"}
    if entry.get("kind") == "repair":
        # a repair's before-image is a state check rejects: reverting it (or reaching past
        # it to an older change, whose inverse assumes the unrepaired state) would bring it back
        return {
            "undone": None,
            "note": f"nothing to undo: the last change is check --repair's (epoch "
            f"{entry['epoch']}); a repair is not undone, since that would bring "
            "back the state check rejected",
        }
    intent = inverse(entry["intent"])
    epoch = stores.journal.epoch() + 1
    intent["epoch"] = epoch
    changes = [
        {
            "key": u["key"],
            "rule": "undo",
            "cause": [],
            "detail": f"undo of epoch {entry['epoch']}",
            "before": u["before"],
            "after": u["after"],
        }
        for u in intent["updates"]
    ]
    record = {
        "epoch": epoch,
        "kind": "undo",
        "undoes": entry["epoch"],
        "undoes_kind": entry.get("kind"),
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "changes": changes,
        "restored": [n["key"] for n in intent["add_nodes"]],
        "removed": [n["key"] for n in intent["del_nodes"]],
        "intent": intent,
    }
    await writer.run(stores.store, stores.journal, intent, record, stores.hook)
    return {
        "undone": entry["epoch"],
        "kind": entry.get("kind"),
        "fact": entry.get("fact"),
        "epoch": epoch,
        "restored": record["restored"],
        "removed": record["removed"],
        "reverted": [c["key"] for c in changes],
    }
