"""The data that flows through a revision's cognee Tasks.

A :class:`RevisionBatch` is one pipeline data item: the facts revised together,
the opened stores, the in-memory belief view they share, and one epoch — the
whole batch is one journalled intent, one write per store and one log entry
(undone together). Each fact is a :class:`FactJob` inside it, applied in order
on the shared view, so every fact sees the effects of the ones before it.

Facts arrive as the pipeline's data: a string, a dict with the ``revise``
fields, a list of those (one batch), or a prepared batch. cognee runs separate
data items concurrently; a batch holds the stores' revision lock from its first
task to its last, so batches never interleave.
"""

from __future__ import annotations

import asyncio
import copy
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from memory_core.core.beliefs import BeliefView
from memory_core.core.plan import Plan
from memory_core.core.requests import RevisionRequest, requests_from
from memory_core.judging.detect import Detection

_locks: dict[int, asyncio.Lock] = {}


def revision_lock(stores) -> asyncio.Lock:
    """One lock per opened stores object (a process serves one data root)."""
    return _locks.setdefault(id(stores), asyncio.Lock())


_turns: dict[int, int] = {}


async def take_revision_lock(stores) -> int:
    """Take the stores' revision lock; returns its turn (1, 2, ...: how many times it has been
    taken), so a holder can tell whether anyone else held it since its own earlier turn."""
    await revision_lock(stores).acquire()
    turn = _turns[id(stores)] = _turns.get(id(stores), 0) + 1
    return turn


@dataclass(repr=False)
class FactJob:
    batch: "RevisionBatch"
    index: int
    request: RevisionRequest
    detection: Optional[Detection] = None  # everything gate 1 and the judges found (batch-wide pass)
    narrowed: Optional[Detection] = None  # what was still alive when this fact's turn came
    plan: Optional[Plan] = None
    result: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    already: Optional[str] = None  # "already recorded" note: nothing to do for this fact
    pin_distance: Optional[float] = None
    registered_trust: Optional[float] = None  # --trust of a source this fact registers
    hypothesis_question: Optional[str] = None  # the question of the hypothesis --supports/--refutes names

    def __repr__(self) -> str:  # cognee records repr(data) with each pipeline run: keep it short
        return f"FactJob({self.index}: {self.request.fact[:60]!r})"

    @property
    def fact(self) -> str:
        return self.request.fact

    @property
    def new_key(self) -> str:
        return self.request.new_key

    @property
    def last(self) -> bool:
        return self.index == len(self.batch.jobs) - 1

    @property
    def verdicts(self) -> list[tuple[str, str, float]]:
        return [(c.key, c.relation, c.confidence) for c in self.narrowed.acting]

    @property
    def records(self) -> bool:
        """Whether this fact writes: a judge found a contradiction, or a judge decided the
        candidates and none contradicts (the fact is recorded next to what it relates to; see
        ``Detection.may_record``). With near undecidable candidates and no contradiction,
        nothing is recorded: the caller decides."""
        d = self.narrowed
        if self.batch.dry_run or d is None or self.already or self.batch.error is not None:
            return False
        return bool(d.acting) or d.may_record or self.request.record

    @property
    def question(self) -> Optional[str]:
        """The question the new evidence joins: that of what it contradicts, else of the
        hypothesis the caller named (``supports``/``refutes``), else of the nearest candidate,
        else the root's default question."""
        acting = self.narrowed.acting
        if acting:
            return acting[0].question
        if self.hypothesis_question is not None:
            return self.hypothesis_question
        ranked = sorted(self.narrowed.candidates, key=lambda c: (c.distance is None, c.distance or 0.0))
        if ranked and ranked[0].question:
            return ranked[0].question
        return self.batch.stores.default_question() if self.request.record else None


@dataclass(repr=False)
class RevisionBatch:
    stores: Any  # memory_core.ops.stores.Stores
    requests: list[RevisionRequest]
    what: str = "facts"
    dry_run: bool = False
    pin_reason: str = "--target"
    use_llm: bool = False
    threshold: float = 0.55
    limit: int = 8
    epoch: int = 0
    jobs: list[FactJob] = field(default_factory=list)
    view: Optional[BeliefView] = None
    original: dict = field(default_factory=dict)  # key -> Node as stored before the batch
    error: Optional[BaseException] = None
    stopped_at: Optional[int] = None  # a judge failed on this fact: the ones before it are applied
    stop_error: Optional[BaseException] = None
    forgotten_nodes: dict = field(default_factory=dict)  # key -> Node, forgotten by this batch
    entry: Optional[dict] = None  # the log line written
    started: float = field(default_factory=time.perf_counter)
    locked: bool = False
    turn: int = 0  # the revision lock's turn this batch holds (see take_revision_lock)
    # detection started before cognee's runner reached the first task (tasks.detect_contradictions
    # start_detection); the task takes its result if nobody held the lock in between
    detecting: Optional[asyncio.Task] = None
    # memory_core.store.tms_io.prepare_reconciliation: forgotten nodes rebuilt from their
    # tombstones (key -> tombstone), the log's Memory, the policies/trust context, ghosts restored so far
    ghosts: dict = field(default_factory=dict)
    memory: Any = None
    reconciliation: dict = field(default_factory=dict)
    restored: set = field(default_factory=set)
    # built by the first task from a host's pipeline data (not prepared by FALSIFY's own run): its
    # errors fail the host's pipeline run, its last task returns the RevisionResults
    host: bool = False
    # question key -> its predicate declarations (or None), read once per batch: a revision never
    # changes a question's declarations
    declarations: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.jobs:
            self.jobs = [FactJob(self, i, r) for i, r in enumerate(self.requests)]

    def __repr__(self) -> str:
        return f"RevisionBatch({len(self.jobs)} fact(s), epoch={self.epoch})"

    def new_keys(self) -> set[str]:
        """The keys of the batch's new facts (computed once)."""
        if getattr(self, "_new_keys", None) is None:
            self._new_keys = {j.new_key for j in self.jobs}
        return self._new_keys

    async def declared(self, question: str) -> Optional[dict]:
        """The predicate declarations of ``question`` (None: it declares none), read from the
        store once per batch."""
        if question not in self.declarations:
            found = await self.stores.store.declared_predicates([{"question_key": question}])
            self.declarations[question] = found.get(question)
        return self.declarations[question]

    def snapshot_original(self) -> None:
        self.original = {k: copy.copy(n) for k, n in self.view.nodes.items()}

    async def acquire(self) -> None:
        if not self.locked:
            self.turn = await take_revision_lock(self.stores)
            self.locked = True
            self.epoch = self.stores.journal.epoch() + 1

    def reset_detection(self) -> None:
        """Forget what detection found (it is run again)."""
        self.error = self.stop_error = self.stopped_at = None
        for job in self.jobs:
            job.detection = job.already = None
            job.timings.pop("detect_contradictions", None)

    def release(self) -> None:
        if self.locked:
            self.locked = False
            revision_lock(self.stores).release()


def as_requests(item: Any) -> list[RevisionRequest]:
    """A pipeline data item → validated requests (``InputError`` names the bad one)."""
    if isinstance(item, (str, dict, RevisionRequest)):
        item = [item]
    items = list(item)
    if items and all(isinstance(i, RevisionRequest) for i in items):
        return items
    return requests_from(items)
