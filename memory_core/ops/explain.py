"""``explain KEY``: why a node is in its state (see :mod:`memory_core.core.why`).

The revision log gives the history of every change to the node, forgotten nodes
included; for a node that is alive now, the current graph gives the
justification that holds it, recursively to premises.
"""

from __future__ import annotations

import asyncio

from memory_core.core import why
from memory_core.core.investigation import check_key
from memory_core.ops.stores import Stores
from memory_core.store.belief_store import state_of
from memory_core.store.journal import Journal


async def explain(stores: Stores, key: str) -> dict:
    key = check_key(key, "explain")
    # the whole revision log is read: off the event loop, so other tasks keep running
    result = await asyncio.to_thread(lambda: why.history(stores.journal.entries(), key))
    props = (await stores.store.find_keys([key])).get(key)
    if props is None:
        result["state"] = "forgotten" if result["known"] else None
        return result
    result["key"] = props.get("key", result["key"])
    result["known"] = True
    result["state"] = state_of(props)
    if result["state"] == "alive" and props.get("question_key"):
        view = await stores.store.view_of_investigation(props["question_key"])
        result["why_alive"] = why.why_alive(view, result["key"])
    return result


def revision_log(journal: Journal) -> list[dict]:
    return why.revision_log(journal.entries())
