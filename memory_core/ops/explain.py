"""``explain KEY``: why a node is in its state (see :mod:`memory_core.core.why`).

The revision log gives the history of every change to the node, forgotten nodes
included (and what an undo removed: "removed by undo of epoch N"); for an evidence or
conclusion node, the current graph gives why it is in its state now: alive, the
justification that holds it, recursively to premises; dead or disputed, what keeps it
out (the attackers that hold or are in dispute, each justification's members that do not); for a
hypothesis, its support score and its remaining and lost supporters, from every
``supports`` and ``refutes`` edge it has, whatever inquiry the other end belongs to (rule
5 counts them so when a revision promotes). The graph read for an evidence or conclusion
is the node with its justifications followed up to premises, whatever inquiry each
antecedent belongs to, and the forgotten nodes any of them still rests on as the dead
ghosts they are (forgetting a node deletes its edges: without them a justification
through it would look whole). A key neither stored nor ever logged is an InputError
(exit 2).
"""

from __future__ import annotations

import asyncio

from memory_core.core import why
from memory_core.core.beliefs import BeliefView
from memory_core.core.errors import InputError
from memory_core.core.identity import KIND_BY_TYPE, node_id
from memory_core.core.investigation import check_key, key_refusal, named
from memory_core.core.results import ExplainResult
from memory_core.core.tms import attackers
from memory_core.core.vocabulary import DEPENDS_ON
from memory_core.store.stores import Stores
from memory_core.store.belief_store import state_of, to_node
from memory_core.store.journal import Journal
from memory_core.store.forgotten import forgotten_index
from memory_core.store.tms_io import add_antecedent_ghosts

MAX_CHAIN = 500  # nodes read up the justifications of the node explained


async def explain(stores: Stores, key: str) -> ExplainResult:
    asked = key
    try:
        key = check_key(key, "explain")
    except InputError:
        await refuse_if_stored(stores, asked)
        raise
    props = (await stores.store.find_keys([key])).get(key)
    kind = KIND_BY_TYPE.get(props.get("type", "")) if props is not None else None
    view, ghosts, related, unread = BeliefView(), set[str](), set[str](), set[str]()
    if props is not None and kind in ("evidence", "conclusion"):
        view, ghosts, unread = await chain_view(stores, props)
        me = props.get("key", key)
        related = {a for _, group in view.justifications(me) for a in group} | set(attackers(view, me))
    # the whole revision log is read: off the event loop, so other tasks keep running
    logged = await asyncio.to_thread(lambda: why.history(stores.journal.entries(), key, related))
    # the logged history, with its fate said as the state of a node no longer stored
    result: ExplainResult = {"key": logged["key"], "known": logged["known"], "events": logged["events"]}
    if props is None:
        if not result["known"]:
            await refuse_if_stored(stores, asked)
            raise InputError(
                f"explain: no node with key {key!r} in this data root, and none in its revision log "
                "(never loaded, recorded or forgotten here)"
            )
        if "removed_by_undo" in logged:
            result["removed_by_undo"] = logged["removed_by_undo"]
        # not stored: a revision forgot it, or an undo removed what had added it
        result["state"] = logged["fate"] or "forgotten"
        return result
    result["key"] = props.get("key", result["key"])
    result["known"] = True
    result["state"] = state_of(props)
    if kind == "hypothesis":
        # the hypothesis with every supports/refutes edge it has, whatever inquiry the other end
        # belongs to: rule 5's support, as the revision engine counts it when it promotes
        node = to_node(props)
        if node is not None:
            view.add_node(node)
            await stores.store.complete(view, [node.key])
        gone = forgotten_index(stores.journal).gone.values()
        result["support"] = why.support_of(view, result["key"], node_id("hypothesis", result["key"]), gone)
    elif kind in ("evidence", "conclusion"):
        if result["state"] == "alive":
            result["why_alive"] = why.why_alive(view, result["key"], unread)
        else:
            result["why_dead"] = why.why_dead(view, result["key"], ghosts)
    return result


async def refuse_if_stored(stores: Stores, key) -> None:
    """Refuse ``key`` as naming a stored node whose key FALSIFY's input does not accept (written
    past that input, e.g. by a host's own add_data_points), if one is stored under it (as cognee
    compares keys): not "no node". Returns when none is (the caller's own refusal stands)."""
    if not isinstance(key, str) or not key.strip() or _unencodable(key):
        return  # a lone surrogate names no stored node: an id is made of the key's UTF-8 bytes
    props = (await stores.store.find_keys([key])).get(key) or {}
    stored = props.get("key")
    if not isinstance(stored, str):
        return
    refused = key_refusal(stored)
    if refused is None:
        return
    kind = KIND_BY_TYPE.get(props.get("type", ""), "belief")
    raise InputError(
        f"explain: the stored {kind} node {named(stored)} has a key FALSIFY does not accept ({refused}): it "
        "was written past FALSIFY's input (e.g. by a host's add_data_points), so no command can name it; "
        "check names it as a problem"
    )


def _unencodable(key: str) -> bool:
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


async def chain_view(stores: Stores, props: dict) -> tuple[BeliefView, set[str], set[str]]:
    """The node of ``props`` with every edge it has (its justifications, attackers and
    consumers), its antecedents with theirs, up to premises, across inquiries (bounded by
    :data:`MAX_CHAIN`); then the forgotten nodes any of them rests on, as dead ghosts.
    Returns the view, the ghosts' keys and the nodes whose justifications were not read (the
    bound reached)."""
    view = BeliefView()
    node = to_node(props)
    if node is None:
        return view, set(), set()
    view.add_node(node)
    done: set[str] = set()
    todo = [node.key]
    while todo and len(done) < MAX_CHAIN:
        done.update(todo)
        await stores.store.complete(view, todo)
        todo = sorted({e.dst for k in todo for e in view.out_edges(k, DEPENDS_ON)} - done)
    ghosts: dict[str, dict] = {}
    add_antecedent_ghosts(view, forgotten_index(stores.journal), ghosts)
    return view, set(ghosts), set(todo)


def revision_log(journal: Journal) -> list[dict]:
    return why.revision_log(journal.entries())
