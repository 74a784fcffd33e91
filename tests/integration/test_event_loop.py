"""A host's event loop keeps running while a facade call works on a large investigation: the
CPU work on what the stores returned (decoding property blobs, building views and rows,
labelling, replaying the log, walking the result into plain values) runs in worker threads
(memory_core.store.off_loop), never on the loop thread.

Deterministic, no timing: a profile function on the loop thread only (``sys.setprofile`` is
per thread) counts the calls of FALSIFY's per-node functions -- its JSON decoding, ``to_node``,
status's ``node_row``, ``BeliefView.add_node``, the result walk ``_plain``/``spoken``, check's
log ``replay`` -- made on the loop for the nodes of one investigation of ~450 nodes (every
name carries this module's own prefix: the session's root is shared). Before, each call made
one per node there (hundreds to thousands); now a few dozen at most (small reads and results,
handled at once, and the revision log's own lines, which hold the prefix too)."""

from __future__ import annotations

import json
import os
import sys
import uuid

import pytest

from conftest import investigation
from memory_core import api
from memory_core.core.beliefs import BeliefView
from memory_core.ops import check_log, status as status_op
from memory_core.store import belief_store

pytestmark = pytest.mark.slow

EVIDENCE = 300  # + 150 conclusions, 3 hypotheses, the question: ~450 nodes, ~1,050 edges
# at most this many calls of one per-node function on the loop thread per facade call: a read of
# fewer rows than memory_core.store.off_loop.ROWS (64) is handled at once (a thread's hop would
# cost more); before, every call that read the investigation made ~450-1,500 of them
PER_NODE_ON_LOOP = 64
# a result walked into plain values on the loop thread has fewer values than this (status of the
# investigation: ~4,000)
WALKED_ON_LOOP = 1000


@pytest.fixture(scope="module")
def prefix() -> str:
    return f"loop{uuid.uuid4().hex[:8]}_"


@pytest.fixture(scope="module")
async def big(app, prefix):
    """One large investigation in the session's root; its load's epoch, then one revision after
    it (so the load's epoch is in the past)."""
    evidence = [
        {
            "key": f"E{i}",
            "claim": f"Witness {i} of {prefix} saw suspect {i % 3} near dock {i} on day {i % 28 + 1}.",
            "subject": f"{prefix} witness {i} sighting",
            "predicate": "is located at",
            "object": f"dock {i}",
            "source_id": f"src{i % 5}",
        }
        for i in range(EVIDENCE)
    ]
    hypotheses = [
        {"key": f"H{h}", "statement": f"Suspect {h} of {prefix} did it.", "prior": 0.3} for h in range(3)
    ]
    conclusions = [
        {
            "key": f"K{j}",
            "statement": f"Suspect {j % 3} of {prefix} was near dock {2 * j}.",
            "confidence": 0.7,
        }
        for j in range(EVIDENCE // 2)
    ]
    edges = [{"type": "supports", "from": f"E{i}", "to": f"H{i % 3}", "weight": 0.5} for i in range(EVIDENCE)]
    edges += [
        {"type": "depends_on", "from": f"K{j}", "to": f"E{2 * j + k}", "critical": True}
        for j in range(EVIDENCE // 2)
        for k in (0, 1)
    ]
    loaded = await app.load(investigation(prefix, hypotheses, evidence, conclusions, edges))
    revised = await app.revise(
        f"Forensic audit of {prefix}: witness 1 was elsewhere that day.", target=f"{prefix}E1"
    )
    assert revised["epoch"] == loaded["epoch"] + 1, revised
    return loaded["epoch"]


class LoopWork:
    """Counts, on the thread that installs it (the event loop's), the calls of per-node
    functions made for this module's nodes, and the size of each result walked there."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.calls: dict[str, int] = {}
        self.walked: list[int] = []
        mine = lambda value: self._mine(value)  # noqa: E731
        text = lambda s: isinstance(s, str) and prefix in s  # noqa: E731
        node = lambda n: self._mine(getattr(n, "key", None))  # noqa: E731
        self.watched = {
            json.decoder.JSONDecoder.decode.__code__: ("json decode", "s", text),
            belief_store.to_node.__code__: ("to_node", "props", mine),
            status_op.node_row.__code__: ("node_row", "props", mine),
            BeliefView.add_node.__code__: ("BeliefView.add_node", "node", node),
            check_log.Replay.apply.__code__: ("check_log.Replay.apply", "entry", lambda e: True),
        }

    def _mine(self, value) -> bool:
        if isinstance(value, dict):
            value = value.get("key")
        return isinstance(value, str) and value.startswith(self.prefix)

    def _profile(self, frame, event, arg) -> None:
        if event != "call":
            return
        if frame.f_code is api._spoken.__code__:
            self.walked.append(_values(frame.f_locals.get("value")))
            return
        seen = self.watched.get(frame.f_code)
        if seen is not None:
            name, argument, ours = seen
            if name == "json decode" and not _decoding_graph_rows(frame):
                return  # a vector search's payloads (pgvector's, in cognee: as many as the search asks)
            if ours(frame.f_locals.get(argument)):
                self.calls[name] = self.calls.get(name, 0) + 1

    async def count(self, call) -> dict[str, int]:
        """The calls of ``call`` (a coroutine) made on the loop thread: per-node function -> how
        many, and under ``"walked"`` the size of the largest result walked there."""
        self.calls, self.walked = {}, []
        previous = sys.getprofile()
        sys.setprofile(self._profile)
        try:
            await call
        finally:
            sys.setprofile(previous)
        return dict(self.calls, walked=max(self.walked, default=0))


def _decoding_graph_rows(frame) -> bool:
    """Whether the first caller of this JSON decoding outside the json package is FALSIFY's code or
    cognee's graph adapter (its ``get_neighborhood`` decodes on the loop)."""
    caller = frame.f_back
    while caller is not None and f"{os.sep}json{os.sep}" in caller.f_code.co_filename:
        caller = caller.f_back
    where = caller.f_code.co_filename if caller is not None else ""
    return f"{os.sep}memory_core{os.sep}" in where or f"{os.sep}databases{os.sep}graph{os.sep}" in where


def _values(value) -> int:
    """How many values a walk of ``value`` visits (every item of every dict and list in it)."""
    if isinstance(value, dict):
        return len(value) + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return len(value) + sum(_values(v) for v in value)
    return 0


def assert_off_loop(what: str, calls: dict) -> None:
    walked = calls.pop("walked")
    assert max(calls.values(), default=0) <= PER_NODE_ON_LOOP, (
        f"{what}: per-node work on the event loop: {calls}"
    )
    assert walked < WALKED_ON_LOOP, f"{what}: a result of {walked} values walked on the event loop"


def reads(app, prefix: str, epoch: int) -> dict:
    return {
        "status": lambda: app.status(),
        "status at an epoch": lambda: app.status(epoch=epoch),
        "snapshot": lambda: app.snapshot(),
        "snapshot at an epoch": lambda: app.snapshot(epoch=epoch),
        "recall": lambda: app.recall(
            f"Where did witness 7 of {prefix} see the suspect?", inquiry=f"{prefix}Q"
        ),
        "search": lambda: app.search(f"witness 7 of {prefix}", top_k=10),
        "explain a hypothesis": lambda: app.explain(f"{prefix}H1"),
        "check": lambda: app.check(),
    }


@pytest.mark.parametrize(
    "name",
    [
        "status",
        "status at an epoch",
        "snapshot",
        "snapshot at an epoch",
        "recall",
        "search",
        "explain a hypothesis",
        "check",
    ],
)
async def test_a_read_of_a_large_investigation_does_its_per_node_work_off_the_loop(app, big, prefix, name):
    call = reads(app, prefix, big)[name]
    await call()  # a first run fills what a process keeps between calls (the log's folds, the model)
    calls = await LoopWork(prefix).count(call())
    assert_off_loop(name, calls)


async def test_a_revision_and_its_undo_do_their_per_node_work_off_the_loop(app, big, prefix):
    """A revision pinned to a node of the large investigation (its view: the hypotheses' supporters,
    hundreds of nodes) and the undo of it; then a batch of two facts and its undo."""
    loop = LoopWork(prefix)
    calls = await loop.count(app.revise(f"Audit of {prefix}: witness 4 lied.", target=f"{prefix}E4"))
    assert_off_loop("revise", calls)
    calls = await loop.count(app.undo())
    assert_off_loop("undo", calls)
    facts = [{"fact": f"Audit of {prefix}: witness {i} lied.", "target": f"{prefix}E{i}"} for i in (5, 6)]
    calls = await loop.count(app.revise_many(facts))
    assert_off_loop("revise_many", calls)
    calls = await loop.count(app.undo())
    assert_off_loop("undo of the batch", calls)


def test_the_collector_is_held_while_any_call_holds_it_and_a_hosts_choice_stands():
    """``collector_held``: counted (the last holder turns the collector on again, also on an
    error), and a host that turned the collector off itself finds it off afterwards."""
    import gc

    from memory_core.store.off_loop import collector_held

    assert gc.isenabled()
    with collector_held():
        assert not gc.isenabled()
        with collector_held():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError):
        with collector_held():
            raise KeyError("x")
    assert gc.isenabled()
    gc.disable()  # the host's own choice
    try:
        with collector_held():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_a_call_holds_the_collector_until_it_ends_even_cancelled(app, big, prefix):
    """During a revision's write steps the collector is off; after the call, and after one
    cancelled at a write step, it is on again."""
    import asyncio
    import gc

    seen: list[bool] = []
    app.hook = lambda name: seen.append(gc.isenabled())
    try:
        await app.revise(f"Audit of {prefix}: witness 8 lied.", target=f"{prefix}E8")
    finally:
        app.hook = None
    assert seen and not any(seen), seen
    assert gc.isenabled()
    await app.undo()

    task = None

    def cancel(name: str) -> None:
        if name == "nodes":
            task.cancel()

    app.hook = cancel
    try:
        task = asyncio.ensure_future(app.revise(f"Audit of {prefix}: witness 9 lied.", target=f"{prefix}E9"))
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        app.hook = None
    assert gc.isenabled()


@pytest.mark.parametrize("route", ["timeline", "log"])
async def test_the_viewer_reads_the_revision_log_off_the_loop(app, big, prefix, route):
    """The viewer's timeline and log read and fold the whole revision log (the large
    investigation's load entry among them) in a worker thread, not on the server's loop."""
    from memory_core.session import Gate
    from memory_core.web import routes

    read = {"timeline": routes.timeline, "log": routes.log}[route]
    gate = Gate(app)
    rows = await read(gate, {})
    assert any(prefix in json.dumps(row, default=str) for row in rows)  # the investigation's entries
    calls = await LoopWork(prefix).count(read(gate, {}))
    assert calls.get("json decode", 0) == 0, calls


async def test_a_batch_lets_the_loop_run_between_its_facts(app, prefix):
    """A batch's facts are planned one after another on its shared view; between two facts the
    host's event loop runs (cognee hands each fact to the tasks after propagate_refutation
    without suspending, so before, a batch of thousands of facts held the loop for seconds).
    Counted, not timed: a task on the loop counts its turns, and the count is read as each fact
    begins (a dry run: the whole revision on the in-memory view, nothing written)."""
    import asyncio

    from memory_core.tasks.propagate_refutation import begin_fact

    facts = [
        {
            "fact": f"Lamp {i} of {prefix}turns glows colour {i}.",
            "triple": f"{prefix}turns lamp {i}|glows|colour {i}",
        }
        for i in range(6)
    ]
    turns = 0
    at_fact: dict[int, int] = {}  # fact's index -> the loop's turns when it began

    async def count_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    def profile(frame, event, arg) -> None:
        if event == "call" and frame.f_code is begin_fact.__code__:
            job = frame.f_locals.get("job")
            if job is not None and prefix in job.fact:
                at_fact.setdefault(
                    job.index, turns
                )  # its first step (a coroutine is called again on resuming)

    counter = asyncio.ensure_future(count_turns())
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        results = await app.revise_many(facts, dry_run=True)
    finally:
        sys.setprofile(previous)
        counter.cancel()
    assert len(results) == len(facts) and sorted(at_fact) == list(range(len(facts))), (results, at_fact)
    began = [at_fact[i] for i in range(len(facts))]
    assert all(later > earlier for earlier, later in zip(began, began[1:])), (
        f"the loop did not run between a batch's facts (its turns as each fact began: {began})"
    )
