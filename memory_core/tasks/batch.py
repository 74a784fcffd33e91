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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from memory_core.core import validity
from memory_core.core.beliefs import BeliefView, Node
from memory_core.core.errors import InputError
from memory_core.core.keys import normalise_key
from memory_core.core.plan import Plan
from memory_core.core.requests import FACT_FIELDS, RevisionRequest, requests_from, shown
from memory_core.core.tms import Memory
from memory_core.judging.detect import CONSISTENT, Candidate, Detection
from memory_core.store.stores import Stores
from memory_core.store.tms_io import Reconciliation


@dataclass(frozen=True)
class RevisionOptions:
    """What was asked of a revision (fixed before it starts)."""

    what: str = "facts"  # what its items are called in messages ("fact", "facts", "file", ...)
    dry_run: bool = False  # detection only: the pipeline stops after its first task
    preview: bool = False  # the whole revision on the in-memory view, nothing written (revise --dry-run)
    pin_reason: str = "--target"  # what pinned a fact's target, for messages
    use_llm: bool = False
    threshold: Optional[float] = 0.55  # gate 1's distance floor (None: none)
    limit: int = 8  # gate 1's candidates per fact
    # built by the first task from a host's pipeline data (not prepared by FALSIFY's own run): its
    # stop fails the host's pipeline run, its last task returns the RevisionResults
    host: bool = False

    @property
    def writes(self) -> bool:
        return not (self.dry_run or self.preview)


@dataclass(frozen=True)
class Stop:
    """Why a batch stopped, as one value: ``error`` raised on its fact ``at`` (the facts before
    it are applied, this one and the ones after it are not), or, with ``at`` None, before
    anything of the batch could be applied (nothing is). The caller raises it, once."""

    error: BaseException
    at: Optional[int] = None

    @property
    def whole(self) -> bool:
        """Nothing of the batch is applied."""
        return self.at is None


# what a judge found, read for where a fact belongs: a judged relation says the two are about
# the same thing; "unrelated" (another subject or predicate, or another value of a ``many``
# predicate) says they are not; undecided, or the caller's "consistent" (--record), says nothing
UNRELATED = "unrelated"
NO_SIGNAL = (None, CONSISTENT)


def _nearest_related(c: Candidate) -> tuple:
    """Sort key of a fact's candidates for the question it joins: those a judge found related
    first, then undecided ones, then those a judge found unrelated; nearest first within each
    (found by the subject+predicate lookup alone, no distance: last). The nearest claim can be
    another entity's, worded alike, in another inquiry: its question is not the fact's."""
    group = 2 if c.relation == UNRELATED else 1 if c.relation in NO_SIGNAL else 0
    return (group, c.distance is None, c.distance or 0.0)


@dataclass(repr=False, slots=True)
class FactJob:
    batch: "RevisionBatch"
    index: int
    request: RevisionRequest
    detection: Optional[Detection] = None  # everything gate 1 and the judges found (batch-wide pass)
    narrowed: Optional[Detection] = None  # what was still alive when this fact's turn came
    plan: Optional[Plan] = None
    timings: dict[str, float] = field(default_factory=dict)  # task name -> ms
    already: Optional[str] = None  # the "already recorded" note: nothing to do for this fact
    registered_trust: Optional[float] = None  # --trust of a source this fact registers
    hypothesis_question: Optional[str] = None  # the question of the hypothesis --supports/--refutes names
    inquiry: Optional[str] = None  # the stored question --inquiry names (its key as stored)
    # the fact asserted again: the records of its claim (stored, or of an earlier line of the
    # batch) -> whether the record held at the batch's start (None: an earlier line's) and its
    # epoch; at its turn the fact is "already recorded" as the first of them that holds then,
    # else a new record (its key the next free one: tasks.detect_contradictions.place_repeats)
    repeats: dict[str, tuple[Optional[bool], Optional[int]]] = field(default_factory=dict)
    # stored evidence claiming the fact's text under other keys (found by its triple's subject and
    # predicate at detection: tasks.detect_contradictions.find_same_claims)
    same_claim: list[str] = field(default_factory=list)

    def __repr__(self) -> str:  # cognee records repr(data) with each pipeline run: keep it short
        return f"FactJob({self.index}: {self.request.fact[:60]!r})"

    def time_case(self, key: str) -> Optional[str]:
        """How the fact's valid time reads against stored evidence ``key``'s
        (:func:`validity.classify`); None for a fact without a ``valid_from`` or a key not in view."""
        view, r = self.batch.view, self.request
        node = view.nodes.get(key) if view is not None and r.valid_from is not None else None
        if node is None:
            return None
        return validity.classify((r.valid_from, r.valid_to), (node.valid_from, node.valid_to))

    def _disjoint(self, key: str) -> bool:
        """Whether the fact's valid time and stored evidence ``key``'s do not overlap."""
        return self.time_case(key) == validity.DISJOINT

    def in_timeline(self, key: str) -> bool:
        """Whether valid time orders the fact and stored evidence ``key`` (one started before
        the other): a succession in the slot's timeline, no contradiction."""
        return self.time_case(key) in (validity.ENDS_STORED, validity.NEW_PRECEDES)

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
    def applies(self) -> bool:
        """Whether the batch's stop leaves this fact to be applied."""
        stop = self.batch.stop
        return stop is None or (stop.at is not None and self.index < stop.at)

    @property
    def verdicts(self) -> list[tuple[str, str, float]]:
        """``(key, relation, confidence)`` of each candidate the fact acts on."""
        acting = self.narrowed.acting if self.narrowed else []
        # an acting candidate has both (Candidate.acts): the test only narrows the types
        return [(c.key, c.relation, c.confidence) for c in acting if c.relation and c.confidence is not None]

    @property
    def records(self) -> bool:
        """Whether this fact writes: a judge found a contradiction, or a judge decided the
        candidates and none contradicts (the fact is recorded next to what it relates to; see
        ``Detection.may_record``). With near undecidable candidates and no contradiction,
        nothing is recorded: the caller decides."""
        d = self.narrowed
        if self.batch.options.dry_run or d is None or self.already or self.batch.failed:
            return False
        if self.request.record or d.acting:
            return True
        # nothing stored within reach: recorded where it belongs, if the root says where
        return d.may_record and (bool(d.candidates) or self.question is not None)

    @property
    def question(self) -> Optional[str]:
        """The question the new evidence joins: the one the caller named (``inquiry``), else
        that of what it contradicts, else that of the hypothesis the caller named
        (``supports``/``refutes``), else of the nearest candidate a judge found related to it
        (the same value of its subject and predicate; :func:`_nearest_related`), else the
        root's default question."""
        narrowed = self.narrowed or Detection("none", [], [], "")
        acting = narrowed.acting
        if self.inquiry is not None:  # what it contradicts is of that question (contradicts_elsewhere)
            return self.inquiry
        if acting:
            # a timed fact contradicts only what time reads as a contradiction: a value it is
            # disjoint from stays as it is (core.validity), so its question is not the fact's
            contradicted = [c for c in acting if not self._disjoint(c.key)]
            return (contradicted or acting)[0].question
        if self.inquiry is not None:
            return self.inquiry
        if self.hypothesis_question is not None:
            return self.hypothesis_question
        ranked = sorted(narrowed.candidates, key=_nearest_related)
        if ranked and ranked[0].question:
            return ranked[0].question
        return self.batch.home_question if self.request.record or not ranked else None


@dataclass(repr=False, slots=True)
class RevisionBatch:
    """One revision: what was asked (:class:`RevisionOptions`), one :class:`FactJob` per
    fact, and what the revision found and decided so far (the fields below ``jobs``)."""

    stores: Stores
    requests: list[RevisionRequest]
    options: RevisionOptions = field(default_factory=RevisionOptions)
    jobs: list[FactJob] = field(default_factory=list)
    epoch: int = 0
    stop: Optional[Stop] = None  # why the batch stopped (see Stop), if it did
    view: Optional[BeliefView] = None
    original: dict[str, Node] = field(default_factory=dict)  # key -> Node as stored before the batch
    forgotten_nodes: dict[str, Node] = field(default_factory=dict)  # key -> Node, forgotten by this batch
    entry: Optional[dict] = None  # the log line written
    started: float = field(default_factory=time.perf_counter)
    locked: bool = False
    turn: int = 0  # the revision lock's turn this batch holds (see RevisionLock.take)
    # detection started before cognee's runner reached the first task (tasks.detect_contradictions
    # start_detection); the task takes its result if nobody held the lock in between
    detecting: Optional[asyncio.Task] = None
    # memory_core.store.tms_io.reconciliation_inputs: forgotten nodes rebuilt from their
    # tombstones (key -> tombstone), the log's Memory (a copy: the batch's facts extend it),
    # what decides the contradictions, the sources registered with --trust (this batch's own
    # added as they come), ghosts restored so far
    ghosts: dict[str, dict] = field(default_factory=dict)
    memory: Optional[Memory] = None
    memory_from_log: bool = False  # ``memory`` began as the log's (else as nothing read)
    reconciliation: Reconciliation = field(default_factory=Reconciliation)
    registered: dict[str, float] = field(default_factory=dict)
    restored: set[str] = field(default_factory=set)
    # evidence earlier facts of the batch brought back (changed or restored from its tombstone,
    # holding for gate 1 where it did not when gate 1 ran at the batch's start): compared with
    # each later fact at its turn (detect_contradictions.note_returned, compare_with_returned)
    came_back: set[str] = field(default_factory=set)
    new_keys: frozenset[str] = frozenset()  # the keys of the batch's new facts
    # the new facts whose plans have begun, as the store will hold them (key -> recorded_props),
    # in the batch's order: what re-judging and settling read of them before they are stored
    # (kept as each fact begins: rebuilding it for every fact made a batch quadratic)
    recorded: dict[str, dict] = field(default_factory=dict)
    # the same facts' stored properties as a policy reads them (source, date, question, trust)
    recorded_evidence: dict[str, dict] = field(default_factory=dict)
    # the same facts by claim (core.keys.claim_text -> keys): a later line claiming it again finds them
    recorded_claims: dict[str, list[str]] = field(default_factory=dict)
    # question key -> its predicate declarations (or None), read once per batch: a revision never
    # changes a question's declarations
    declarations: dict[str, Optional[dict]] = field(default_factory=dict)
    # where a fact related to no stored belief is recorded: the root's default question, else its
    # only question (None: nothing loaded, or several questions); read by home() once per batch
    home_question: Optional[str] = None
    questions: Optional[list[str]] = None

    def __post_init__(self) -> None:
        if not self.jobs:
            self.jobs = [FactJob(self, i, r) for i, r in enumerate(self.requests)]
        self.keys_changed()

    def __repr__(self) -> str:
        return f"RevisionBatch({len(self.jobs)} fact(s), epoch={self.epoch})"

    def keys_changed(self) -> None:
        """The new facts' keys were (re)decided, or which facts are already recorded: remember
        the keys of the facts that add a node (one already recorded names stored evidence)."""
        self.new_keys = frozenset(j.new_key for j in self.jobs if not j.already)

    @property
    def failed(self) -> bool:
        """Stopped before anything of it could be applied."""
        return self.stop is not None and self.stop.whole

    def fail(self, error: BaseException) -> None:
        """Nothing of the batch is applied: ``error`` is what its caller raises."""
        self.stop = Stop(error)

    async def declared(self, question: str) -> Optional[dict]:
        """The predicate declarations of ``question`` (None: it declares none), read from the
        store once per batch."""
        if question not in self.declarations:
            found = await self.stores.store.declared_predicates([{"question_key": question}])
            self.declarations[question] = found.get(question)
        return self.declarations[question]

    async def home(self) -> Optional[str]:
        """Read :attr:`home_question` (once per batch)."""
        if self.questions is None:
            self.questions = await self.stores.store.question_keys()
            default = self.stores.default_question()
            self.home_question = (
                default
                if default in self.questions
                else self.questions[0]
                if len(self.questions) == 1
                else None
            )
        return self.home_question

    @property
    def belief_view(self) -> BeliefView:
        """:attr:`view`, for the tasks after ``collect_belief_subgraph`` (which reads it)."""
        if self.view is None:
            raise RuntimeError(
                "the batch's belief view is read by collect_belief_subgraph, which has not run"
            )
        return self.view

    def snapshot_original(self) -> None:
        self.original = {k: copy.copy(n) for k, n in self.view.nodes.items()} if self.view is not None else {}

    async def acquire(self) -> None:
        if not self.locked:
            self.turn = await self.stores.revision.take()
            self.locked = True
            # a query on PostgreSQL (a stalled database would hold the loop), the log's last line
            # read and decoded on the embedded backend: off the event loop
            self.epoch = await asyncio.to_thread(self.stores.journal.epoch) + 1

    def reset_detection(self) -> None:
        """Forget what detection found (it is run again)."""
        self.stop = None
        for job in self.jobs:
            job.detection = job.already = None
            job.repeats = {}
            job.same_claim = []
            if len(self.requests) == len(self.jobs):  # its key as asked (detection may give another)
                job.request = self.requests[job.index]
            job.timings.pop("detect_contradictions", None)

    def release(self) -> None:
        if self.locked:
            self.locked = False
            self.stores.revision.release()


def as_requests(item: Any) -> list[RevisionRequest]:
    """A pipeline data item → validated requests (``InputError`` names the bad one): a fact's
    text, a dict of ``revise``'s fields, or a list of those (one batch); anything else (a
    number, ``None``, bytes) is refused naming it, before anything is read or written."""
    if isinstance(item, (str, dict, RevisionRequest)):
        item = [item]
    elif isinstance(item, (bytes, bytearray, Mapping)) or not isinstance(item, Iterable):
        raise InputError(
            "detect_contradictions: a data item is a fact (its text), a dict of revise's fields ("
            + ", ".join(FACT_FIELDS)
            + ") or a list of those, got "
            + ("None" if item is None else f"{type(item).__name__} {shown(item)}"),
            field="facts",
        )
    items = list(item)
    if items and all(isinstance(i, RevisionRequest) for i in items):
        return items
    return requests_from(items)


def named_inquiry(job: FactJob) -> str:
    """The stored question ``inquiry`` names (matched as keys are); refused when no question
    has that key."""
    named = job.request.inquiry or ""
    stored = job.batch.questions or []
    found = next((q for q in stored if normalise_key(q) == normalise_key(named)), None)
    if found is None:
        raise InputError(
            f"--inquiry {named!r}: no question with that key in this data root (stored: {', '.join(stored) or 'none'})",
            field="inquiry",
        )
    return found
