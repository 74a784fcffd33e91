"""Recall, twice over the same stores: FALSIFY (truth state read) vs plain RAG.

* **FALSIFY** finds the investigation whose question is nearest to the query,
  reads its subgraph, keeps only ``alive`` nodes, and answers from the
  best-supported alive hypothesis (support, then feedback weight, then prior)
  with its alive supporting evidence and their sources.
* **Plain RAG** is what a cognee user gets out of the box: vector search of
  the same collections of facts and findings (``Evidence_claim``,
  ``Conclusion_statement``) with no truth state, answering from the nearest hits.

Offline both answers are extractive (the chosen statement and its source); with
``LLM_API_KEY`` each is written by the LLM from its own context only.
The scoreboard marks are computed from the nodes each answer used and their
truth state: the baseline is ``[STALE]`` when its answer rests on a dead node;
FALSIFY is ``[revised]`` when its answer is a hypothesis a revision promoted.
"""

from __future__ import annotations

from typing import Optional

from memory_core.judging.prompts import ANSWER_PROMPT, Answer, answer_input
from memory_core.core import validity
from memory_core.core.beliefs import ALIVE
from memory_core.core.tms import downstream
from memory_core.core.vocabulary import DISPUTED, DISPUTES
from memory_core.core.errors import InputError
from memory_core.core.identity import collection
from memory_core.core.investigation import check_text
from memory_core.store.belief_store import state_of, to_node
from memory_core.judging.llm import structured_output

BASELINE_K = 3
DEAD_WORDS = {"refuted": "refuted", "superseded": "superseded", "invalidated": "invalidated"}


async def find_question(stores, text: str) -> Optional[dict]:
    hits = await stores.store.search(collection("question"), text, 3) if text else []
    found = await stores.store.raw_nodes(str(h.id) for h in hits)
    for hit in hits:
        props = found.get(str(hit.id))
        if props and state_of(props) == ALIVE:
            return props
    keys = await stores.store.question_keys()
    if len(keys) == 1:
        return (await stores.store.find_keys(keys))[keys[0]]
    return None


def promoted_keys(journal) -> dict[str, int]:
    """Hypotheses promoted by a revision that has not been undone → epoch."""
    undone = {e.get("undoes") for e in journal.entries() if e.get("kind") == "undo"}
    found = {}
    for entry in journal.entries():
        if entry.get("kind") == "undo" or entry["epoch"] in undone:
            continue
        for change in entry.get("changes", []):
            if change["rule"] == "promoted":
                found[change["key"]] = entry["epoch"]
            elif change["rule"] == "support_lost":
                found.pop(change["key"], None)
    return found


async def falsify_side(stores, qprops: dict, as_of: Optional[str] = None) -> dict:
    raw, _ = await stores.store.investigation(qprops["key"])
    props_by_key = {p["key"]: p for p in raw if "key" in p}
    view = await stores.store.view_of_investigation(qprops["key"])
    if as_of is not None:  # valid time: the beliefs valid at that date, labelled on that slice
        view = validity.as_of(view, as_of)
    disputes = disputes_of(view)
    alive = [k for k, n in view.nodes.items() if n.kind == "hypothesis" and n.alive]
    if not alive:
        return {"answer": "no alive hypothesis", "nodes": [], "sources": [], "context": [], **disputes}
    best = min(alive, key=lambda h: (-view.support(h), -view.nodes[h].weight, -(view.nodes[h].prior or 0.0), h))
    evidence = sorted(view.alive_supporters(best), key=lambda e: (-max(x.weight for x in view.in_edges(best) if x.src == e), e))
    sources = [props_by_key[e].get("source_id") for e in evidence if props_by_key[e].get("source_id")]
    lead = props_by_key[evidence[0]] if evidence else None
    answer = view.nodes[best].text
    if lead is not None:
        answer += f" Evidence: {lead.get('claim')}" + (f" (source: {lead['source_id']})" if lead.get("source_id") else "")
    context = [view.nodes[best].text] + [props_by_key[e].get("claim", "") for e in evidence]
    return {"answer": answer, "nodes": [best] + evidence, "sources": sources, "context": context,
            "states": {k: view.nodes[k].state for k in [best] + evidence}, **disputes}


def disputes_of(view) -> dict:
    """The disputes that touch the question: ``disputed``, every disputed
    node's key; ``disputes``, each unresolved pair of rivals with what rests on it."""
    disputed = sorted(k for k, n in view.nodes.items() if n.state == DISPUTED)
    pairs = sorted({tuple(sorted((e.src, e.dst))) for e in view.edges
                    if e.kind == DISPUTES and view.state(e.src) == DISPUTED and view.state(e.dst) == DISPUTED})
    rows = []
    for a, b in pairs:
        rests = sorted(k for k in downstream(view, [a, b]) if k not in (a, b) and view.state(k) == DISPUTED)
        rows.append({"keys": [a, b], "rests_on_it": rests})
    return {"disputed": disputed, "disputes": rows}


async def baseline_side(stores, text: str) -> dict:
    hits = []
    for kind in ("evidence", "conclusion"):
        for hit in await stores.store.search(collection(kind), text, BASELINE_K):
            hits.append((float(hit.score), str(hit.id), kind, (hit.payload or {}).get("text", "")))
    hits.sort()
    hits = hits[:BASELINE_K]
    found = await stores.store.raw_nodes(h[1] for h in hits)
    nodes, sources, states, context = [], [], {}, []
    for _, i, kind, text_ in hits:
        props = found.get(i)
        key = props["key"] if props else f"?{i[:8]}"
        nodes.append(key)
        states[key] = state_of(props) if props else "missing"
        context.append(text_)
        if props and props.get("source_id"):
            sources.append(props["source_id"])
    if not hits:
        return {"answer": "no stored facts match", "nodes": [], "sources": [], "context": [], "states": {}}
    lead = found.get(hits[0][1]) or {}
    answer = hits[0][3] + (f" (source: {lead['source_id']})" if lead.get("source_id") else "")
    return {"answer": answer, "nodes": nodes, "sources": sources, "context": context, "states": states,
            "distances": [round(h[0], 4) for h in hits]}


async def llm_answer(question: str, context: list[str], timeout: Optional[float] = None) -> str:
    result = await structured_output(answer_input(question, context), ANSWER_PROMPT, Answer, "the LLM answer", "answer",
                                     timeout=timeout)
    return result.answer


async def recall(stores, question: str, epoch=None, as_of: Optional[str] = None) -> dict:
    """``epoch``: answer from the beliefs as they stood after that epoch (labels as stored
    then; :mod:`memory_core.ops.history`), with ``"epoch": N`` in the result. ``as_of``: an
    ISO date; FALSIFY answers from the beliefs valid then (:func:`memory_core.core.validity.as_of`),
    with ``"as_of": DATE`` in the result (both together: valid at DATE as believed after N)."""
    if as_of is not None:
        as_of = validity.check_date(as_of, "as_of")  # a bad date fails before anything is read
    if epoch is not None:
        from memory_core.ops.history import stores_at

        past = await stores_at(stores, epoch)  # a bad epoch fails before the question is read
        return dict(await recall(past, question, as_of=as_of), epoch=past.journal.epoch())
    if question is None or (isinstance(question, str) and not question.strip()):
        question = ""  # no question: the root's only (or default) investigation
    else:  # bounded and free of control characters, as a claim is
        question = check_text(question, "question", "text")
    qprops = await find_question(stores, question)
    if qprops is None:
        empty = {"answer": "no investigation in this data root matches the question", "nodes": [], "sources": []}
        return {"question": question, "falsify": empty, "baseline": dict(empty), "verdict": "nothing to compare",
                "scoreboard": {"falsify_mark": "", "baseline_mark": ""}}
    question = question or qprops.get("question", "")
    mine = await falsify_side(stores, qprops, as_of)
    theirs = await baseline_side(stores, question)
    mode = "extractive"
    # the settings of the stores (a past epoch's read-only store has none of its own: the process's)
    settings = stores.settings
    if settings.llm_key:
        timeout = settings.judge_timeout
        try:
            mine["answer"] = await llm_answer(question, mine["context"], timeout)
            theirs["answer"] = await llm_answer(question, theirs["context"], timeout)
            mode = "llm"
        except Exception as error:  # keep the extractive answers, say why
            mode = f"extractive (LLM answer failed: {type(error).__name__})"
    promoted = promoted_keys(stores.journal)
    lead_f = mine["nodes"][0] if mine["nodes"] else None
    used_b = theirs["nodes"][:1] if mode != "llm" else theirs["nodes"]
    dead_b = [k for k in used_b if theirs["states"].get(k) not in (ALIVE,)]
    stale = bool(dead_b)
    # a disputed belief is not dead, only not settled: say which
    belief = "a dead belief" if any(theirs["states"].get(k) != DISPUTED for k in dead_b) else "a disputed belief"
    revised = lead_f in promoted
    if stale and revised:
        verdict = (f"FALSIFY answers from {lead_f} (alive, promoted at epoch {promoted[lead_f]}); plain RAG answers from "
                   + ", ".join(f"{k} ({theirs['states'][k]})" for k in dead_b) + f": it still cites {belief}")
    elif stale:
        verdict = f"plain RAG answers from {belief}: " + ", ".join(f"{k} ({theirs['states'][k]})" for k in dead_b)
    elif revised:
        verdict = f"FALSIFY answers from {lead_f}, promoted at epoch {promoted[lead_f]}; plain RAG's answer rests on alive beliefs"
    else:
        verdict = "both answers rest on alive beliefs"
    strip = lambda side: {k: side[k] for k in ("answer", "nodes", "sources")}
    falsify = dict(strip(mine), disputed=mine.get("disputed", []), disputes=mine.get("disputes", []))
    timed = {"as_of": as_of} if as_of is not None else {}
    return {"question": question, "investigation": qprops["key"], "falsify": falsify, "baseline": strip(theirs),
            "verdict": verdict, "mode": mode, **timed,
            "scoreboard": {"falsify_mark": "[revised]" if revised else "", "baseline_mark": "[STALE]" if stale else ""},
            "baseline_states": theirs.get("states", {}), "baseline_distances": theirs.get("distances", [])}


SEARCH_KINDS = ("evidence", "conclusion")
MAX_TOP_K = 100


async def search(stores, query: str, top_k: int = 5, include_dead: bool = False) -> list[dict]:
    """FALSIFY's retriever: the nearest evidence and conclusions to ``query``, alive ones
    only unless ``include_dead`` (which is what a plain vector search returns)."""
    query = check_text(query, "search", "query")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"search: 'top_k' must be an integer from 1 to {MAX_TOP_K}, got {top_k!r}")
    hits = []
    # dead hits are skipped, so ask for more than top_k: enough to fill it from the alive ones
    limit = top_k if include_dead else min(MAX_TOP_K * 4, top_k * 4 + 20)
    for kind in SEARCH_KINDS:
        for hit in await stores.store.search(collection(kind), query, limit):
            hits.append((float(hit.score), str(hit.id), kind))
    hits.sort()
    found = await stores.store.raw_nodes(h[1] for h in hits)
    result = []
    for distance, node_id_, kind in hits:
        props = found.get(node_id_)
        if props is None:
            continue  # a vector row without its node (check reports it)
        node = to_node(props)
        if node is None or (not include_dead and not node.alive):
            continue
        result.append({"key": node.key, "type": node.kind, "text": node.text, "state": node.state,
                       "distance": round(distance, 4), "sources": [props["source_id"]] if props.get("source_id") else []})
        if len(result) == top_k:
            break
    return result
