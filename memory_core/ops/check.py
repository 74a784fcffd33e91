"""``check``: do the stores agree, do the states obey the rules, is the journal complete?

* Graph vs vector: every embeddable node has its vector row; no vector row
  without its node.
* Revision rules: every alive Evidence/Conclusion with critical dependencies
  has a well-founded justification (no alive node rests on a dead one, no
  alive cycle holds itself up), computed over the whole graph by check's own
  labelling (:mod:`memory_core.ops.check_log`, not the cascade's); every state
  is a known one.
* Forget rules against the revision log (its intents replayed): no node the log
  says exists is missing, none was forgotten while a node alive now supersedes
  or consumes it, and no stored dead orphan was left by a revision that should
  have forgotten it.
* Journal: no unfinished intent; every log line parses. Opening the root has
  already recovered an interrupted change (pending intent, torn last log line,
  torn graph checkpoint); the result names it under ``recovered_at_open``.

``--repair`` deletes orphan vector rows, re-indexes nodes missing theirs (state
and weight preserved), restores missing or wrongly forgotten nodes from the log
(both stores, state, edges), invalidates unfounded alive nodes and forgets missed
orphans through journalled intents, and rolls back an unfinished intent.
"""

from __future__ import annotations

import json

from memory_core.core.beliefs import STATES
from memory_core.ops.check_log import forget_problems, replay, restore_entries, unfounded_alive
from memory_core.core.identity import KINDS, TYPE_BY_KIND, collection
from memory_core.core.revision import plan_relabel, plan_settle
from memory_core.core.tms import three_valued_violations
from memory_core.ops.stores import Stores
from memory_core.store import writer
from memory_core.store.belief_store import to_node
from memory_core.store.intents import log_changes, tombstones, updates
from memory_core.store.tms_io import add_antecedent_ghosts, forgotten_index


async def _graph_ids(store, kind: str) -> dict[str, dict]:
    return await store.raw_nodes(await store.ids_of_kind(kind))


async def check(stores: Stores, repair: bool = False) -> dict:
    store, journal = stores.store, stores.journal
    problems, repaired = [], []
    missing_vectors: dict[str, dict] = {}
    orphan_rows: dict[str, list[str]] = {}
    every: dict[str, dict] = {}  # every stored node (id -> props), for the whole-graph checks
    for kind in KINDS:
        nodes = await _graph_ids(store, kind)
        every.update(nodes)
        rows = await store.vector_ids(collection(kind))
        for i, props in nodes.items():
            if i not in rows:
                missing_vectors[i] = props
                problems.append(f"{props.get('key', i)} ({kind}) has no row in vector collection {collection(kind)}")
        extra = sorted(rows - set(nodes))
        if extra:
            orphan_rows[kind] = extra
            problems += [f"vector row {i} in {collection(kind)} has no graph node" for i in extra]
    # the whole graph (edges may cross investigations), labelled by check's own
    # well-founded computation (memory_core.ops.check_log, not the cascade's)
    edges = await store.all_edges_of(list(every)) if every else []
    whole = store._view(list(every.values()), edges)
    unfounded_all = unfounded_alive({k: n.state for k, n in whole.nodes.items()}, whole.edges)
    unfounded_by_q = {}
    mislabelled: list[str] = []  # questions with nodes the three-valued labelling disagrees with
    forgotten = forgotten_index(journal)
    for question in await store.question_keys():
        view = await store.view_of_investigation(question)
        ghosts: dict[str, dict] = {}
        add_antecedent_ghosts(view, forgotten, ghosts)  # a kept node resting on a forgotten one
        for key, node in view.nodes.items():
            if node.state not in STATES:
                problems.append(f"{key} has unknown state {node.state!r}")
        bad = sorted(k for k in unfounded_all if k in view.nodes)
        if bad:
            unfounded_by_q[question] = (whole, bad)
            problems += [f"{k} is alive but has no well-founded justification" for k in bad]
        # issue 14: the three-valued labelling (supersedes/disputes attack; disputed = undefined)
        wrong = [(k, state, label) for k, state, label in three_valued_violations(view) if k not in bad and k not in ghosts]
        if wrong:
            mislabelled.append(question)
        problems += [f"{k} is {state} but the three-valued labelling makes it {label}" for k, state, label in wrong]
    # the forget rules against the revision log (missing nodes, wrongly forgotten ones, orphans kept)
    stored = {i: {"key": n.key, "state": n.state, "epoch": n.epoch}
              for i, n in ((i, to_node(p)) for i, p in every.items()) if n is not None}
    forget_found, restore, forget_ids = forget_problems(replay(journal.entries()), stored, edges)
    problems += forget_found
    if journal.pending() is not None:
        problems.append("the journal holds an unfinished intent")
    if journal.log_path.exists():
        data = journal.log_path.read_bytes()
        for n, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue  # blank lines: every reader of the log skips them
            try:
                json.loads(line)
            except ValueError:
                problems.append(f"revisions.jsonl line {n} is not valid JSON")
        if data and not data.endswith(b"\n"):
            problems.append("revisions.jsonl ends with a torn line")
    result = {"clean": not problems, "problems": problems}
    if stores.recovered:
        # opening the root already finished or rolled back an interrupted change (a pending
        # intent, a torn log line, a torn graph checkpoint): say so; "clean" is the state after it
        result["recovered_at_open"] = stores.recovered
    if not repair or not problems:
        return result
    done = await writer.recover(store, journal)
    if done:
        repaired.append(done)
    for kind, ids in orphan_rows.items():
        await store.delete_vectors(collection(kind), ids)
        repaired.append(f"deleted {len(ids)} orphan vector row(s) from {collection(kind)}")
    if missing_vectors:
        points = []
        for i, props in missing_vectors.items():
            node = to_node(props)  # re-adding rewrites the property blob: carry state and weight along
            points.append(writer.build_point(node.kind, i, props, node.state, node.epoch, node.weight))
        await store.add_points(points)
        repaired.append(f"re-indexed {len(points)} node(s) missing their vector rows")
    if restore:
        epoch = journal.epoch() + 1
        adds = restore_entries(restore, set(every))
        keys = sorted(n["key"] for n in adds)
        intent = {"epoch": epoch, "add_nodes": adds}
        entry = {"epoch": epoch, "kind": "repair", "restored": keys, "changes": [], "intent": intent}
        await writer.run(store, journal, intent, entry)
        repaired.append(f"restored {', '.join(keys)} from the revision log, with state and edges (epoch {epoch})")
    for question, (view, bad) in unfounded_by_q.items():
        epoch = journal.epoch() + 1
        original = {k: type(n)(**vars(n)) for k, n in view.nodes.items()}
        plan = plan_settle(view, bad, epoch)
        intent = {"epoch": epoch, "updates": updates(view, original, plan, skip=set())}
        entry = {"epoch": epoch, "kind": "repair", "question": question, "changes": log_changes(plan), "intent": intent}
        await writer.run(store, journal, intent, entry)
        repaired.append(f"invalidated unfounded node(s) {', '.join(bad)} (epoch {epoch})")
    for question in mislabelled:  # read again: the repairs above may have changed it
        view = await store.view_of_investigation(question)
        ghosts = {}
        add_antecedent_ghosts(view, forgotten_index(journal), ghosts)
        keys = [k for k, _, _ in three_valued_violations(view) if k not in ghosts]
        if not keys:
            continue
        epoch = journal.epoch() + 1
        original = {k: type(n)(**vars(n)) for k, n in view.nodes.items()}
        images = replay(journal.entries()).nodes
        dead_as = {img.get("key"): img.get("state") for img in images.values() if img.get("key") in keys}
        plan = plan_relabel(view, keys, epoch, forgotten_index(journal).memory, dead_as)
        intent = {"epoch": epoch, "updates": updates(view, original, plan, skip=set(ghosts))}
        entry = {"epoch": epoch, "kind": "repair", "question": question, "changes": log_changes(plan), "intent": intent}
        await writer.run(store, journal, intent, entry)
        repaired.append(f"relabelled {', '.join(keys)} as the three-valued labelling makes them (epoch {epoch})")
    if forget_ids:
        epoch = journal.epoch() + 1
        keys = sorted(stored[i]["key"] for i in forget_ids)
        intent = {"epoch": epoch, "del_nodes": await tombstones(store, whole, keys)}
        entry = {"epoch": epoch, "kind": "repair", "changes": [], "forgotten": keys, "intent": intent}
        await writer.run(store, journal, intent, entry)
        repaired.append(f"forgot orphan(s) {', '.join(keys)} the forget rule had missed (epoch {epoch})")
    journal.repair_log()
    after = await check(stores, repair=False)
    result.update(repaired=repaired, clean_after_repair=after["clean"], problems_after_repair=after["problems"])
    return result

