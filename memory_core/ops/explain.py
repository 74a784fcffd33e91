"""``explain KEY``: why a node is in its state (see :mod:`memory_core.core.why`).

The revision log gives the history of every change to the node, forgotten nodes
included (and what an undo removed: "removed by undo of epoch N"); for a node that is
alive now, the current graph gives the justification that holds it, recursively to
premises; for a hypothesis, its support score and its remaining and lost supporters. A key
neither stored nor ever logged is an InputError (exit 2).
"""

from __future__ import annotations

import asyncio

from memory_core.core import why
from memory_core.core.errors import InputError
from memory_core.core.identity import KIND_BY_TYPE, node_id
from memory_core.core.investigation import check_key
from memory_core.store.stores import Stores
from memory_core.store.belief_store import state_of
from memory_core.store.journal import Journal
from memory_core.store.forgotten import forgotten_index


async def explain(stores: Stores, key: str) -> dict:
    key = check_key(key, "explain")
    # the whole revision log is read: off the event loop, so other tasks keep running
    result = await asyncio.to_thread(lambda: why.history(stores.journal.entries(), key))
    fate = result.pop("fate", None)
    props = (await stores.store.find_keys([key])).get(key)
    if props is None:
        if not result["known"]:
            raise InputError(
                f"explain: no node with key {key!r} in this data root, and none in its revision log "
                "(never loaded, recorded or forgotten here)"
            )
        # not stored: a revision forgot it, or an undo removed what had added it
        result["state"] = fate or "forgotten"
        return result
    result.pop("removed_by_undo", None)
    result["key"] = props.get("key", result["key"])
    result["known"] = True
    result["state"] = state_of(props)
    kind = KIND_BY_TYPE.get(props.get("type", ""))
    question = props.get("question_key")
    if kind == "hypothesis" and question:
        view = await stores.store.view_of_investigation(question)
        gone = forgotten_index(stores.journal).gone.values()
        result["support"] = why.support_of(view, result["key"], node_id("hypothesis", result["key"]), gone)
    elif result["state"] == "alive" and question:
        view = await stores.store.view_of_investigation(question)
        result["why_alive"] = why.why_alive(view, result["key"])
    return result


def revision_log(journal: Journal) -> list[dict]:
    return why.revision_log(journal.entries())
