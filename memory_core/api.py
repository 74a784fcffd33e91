"""FALSIFY's facade: one object per data root, for Python programs, the CLI, the
viewer, the MCP server and the benchmark. Every method is async (cognee's
engines are) and returns exactly what the CLI prints with ``--json``
(:mod:`memory_core.results` declares the shapes).

    async with Falsify.open(root) as fx:          # or: fx = await Falsify.open(root)
        await fx.load("examples/company_x.json")
        result = await fx.revise("Forensic audit: ...", target="E_qa")

``open`` configures cognee for one data root (FALSIFY's own, standalone);
``attach`` works on the cognee configuration a host program already set up and
keeps FALSIFY's files in a state directory. Each operation lives in
:mod:`memory_core.ops` and takes the opened stores; this class only holds them.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from enum import Enum
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Generator, Iterable, Mapping, Optional, ParamSpec, TypeVar

from memory_core.core.errors import FacadeClosed, FalsifyError, InputError, RootBusy, speak, spoken
from memory_core.core.requests import (
    check_count,
    check_epoch,
    check_string,
    check_switch,
    requests_from,
    revision_request,
)
from memory_core.ops import check as check_op
from memory_core.ops import explain as explain_op
from memory_core.ops import history as history_op
from memory_core.ops import load as load_op
from memory_core.ops import recall as recall_op
from memory_core.ops import resolve as resolve_op
from memory_core.ops import revise as revise_op
from memory_core.ops import status as status_op
from memory_core.ops import undo as undo_op
from memory_core.store.stores import Stores
from memory_core.results import (
    CheckResult,
    ExplainResult,
    LoadResult,
    RecallResult,
    RevisionResult,
    SearchHit,
    StatusResult,
    UndoResult,
)
from memory_core.store import backends, data_root, engines, off_loop, settings, writer
from memory_core.store.backends import Backend
from memory_core.store.belief_store import BeliefStore, warm_up
from memory_core.store.embedder import check_root, decide, fingerprint, rebuild_meta, rebuild_record
from memory_core.store.journal import Journal
from memory_core.store.faults import fault_hook
from memory_core.store.lock import WriterLock


def _spoken(value: Any) -> Any:
    """A result's notes and rationales in the caller's vocabulary (see
    :func:`memory_core.core.errors.spoken`), in plain JSON types (:func:`_plain`)."""
    return spoken(_plain(value))


# a result whose walk visits this many values or more is walked in a worker thread (status of a
# 9,006-node root: ~30,000 values, 0.25 s); a smaller one at once (a thread's hop costs ~0.1 ms)
WALKED_OFF_LOOP = 512


def _walk_at_least(value: Any, limit: int) -> bool:
    """Whether :func:`_spoken` visits ``limit`` values or more in ``value`` (counted until the
    limit is reached: the count costs at most that many steps)."""
    seen, todo = 0, [value]
    while todo:
        item = todo.pop()
        items = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        seen += len(items)
        if seen >= limit:
            return True
        todo.extend(i for i in items if isinstance(i, (dict, list)))
    return False


async def _spoken_off_loop(value: Any) -> Any:
    """:func:`_spoken`, in a worker thread for a large result (the caller's vocabulary, a context
    variable, goes along): the call's own result, which nothing else holds."""
    if not _walk_at_least(value, WALKED_OFF_LOOP):
        return _spoken(value)
    return await asyncio.to_thread(_spoken, value)


def _plain(value: Any) -> Any:
    """A result as ``--json`` prints it: an enum member (a node's ``type``, an event's ``rule``:
    ``StrEnum``s inside FALSIFY) becomes its plain value, in place through dicts and lists."""
    if isinstance(value, dict):
        for name, item in value.items():
            value[name] = _plain(item)
    elif isinstance(value, list):
        value[:] = [_plain(item) for item in value]
    elif isinstance(value, Enum):
        return value.value
    return value


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _speaks(fn: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """A facade method whose errors and notes name arguments in the caller's vocabulary
    (Python keywords by default; the CLI and the MCP server set theirs), and that refuses
    to run on a closed facade (``FacadeClosed``: nothing read, nothing written)."""

    @functools.wraps(fn)
    async def method(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if args and isinstance(args[0], Falsify):
            args[0]._check_open(fn.__name__)
        try:
            with writer.collecting() as warnings:
                result = await fn(*args, **kwargs)
            return await _spoken_off_loop(_warned(result, warnings.new()))
        except FalsifyError as error:
            raise speak(error)

    return method


def _in_order(fn: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """A facade method that runs after the calls made on this facade before it, in the order
    they were made (a revise then an undo: the undo reverts that revise, never what came
    before it), and before the ones made after it; refused (``FacadeClosed``, nothing read or
    written) when the facade was closed while it waited."""

    @functools.wraps(fn)
    async def method(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        fx = args[0]
        assert isinstance(fx, Falsify)
        async with fx._order:
            fx._check_open(fn.__name__)
            fx._order_holder = asyncio.current_task()
            try:
                with off_loop.collector_held():  # no full collection stops the loop meanwhile
                    return await fn(*args, **kwargs)
            finally:
                fx._order_holder = None

    return method


def _in_turn(fn: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """A facade method that reads or changes the stores as a whole: it runs in order
    (:func:`_in_order`) and holds the root's revision lock while it runs (a revision takes the
    same lock in its pipeline, a host's revision Tasks too), so two calls at once -- a load
    and an undo, a revise and an undo -- never interleave their writes or epochs, and a read
    asked while a change is being written sees the stores before it or after it, never half
    of it (the graph's new node without the refutation it brings, say)."""

    @functools.wraps(fn)
    async def method(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        fx = args[0]
        assert isinstance(fx, Falsify)
        try:
            await fx.stores.revision.take()
        except FacadeClosed:  # closed while it waited for its turn: nothing read or written
            fx._check_open(fn.__name__)
            raise
        try:
            return await fn(*args, **kwargs)
        finally:
            fx.stores.revision.release()

    return _in_order(method)


def _open_only(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """A synchronous facade method that refuses to run on a closed facade."""

    @functools.wraps(fn)
    def method(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if args and isinstance(args[0], Falsify):
            args[0]._check_open(fn.__name__)
        return fn(*args, **kwargs)

    return method


@dataclass(frozen=True)
class Writes:
    """A facade method's declaration that a call may change the graph. No dry run
    (``dry_run=True``) ever does; ``when`` names an argument that must be true besides
    (``check`` changes the graph only with ``repair``)."""

    when: Optional[str] = None

    def changes(self, arguments: Mapping[str, Any]) -> bool:
        if arguments.get("dry_run"):
            return False
        return self.when is None or bool(arguments.get(self.when))


_WRITERS: dict[Callable[..., Any], Writes] = {}  # facade method -> its declaration (set by @writes)


def writes(
    when: Optional[str] = None,
) -> Callable[[Callable[_P, Awaitable[_R]]], Callable[_P, Awaitable[_R]]]:
    """Declare the facade method below as one that may change the graph (read by
    :func:`changes_graph`: the servers announce such calls, the warm CLI its commands). On a
    facade opened without the writer lock (``lock=False``) such a call is refused as a second
    writer is (``RootBusy``), nothing written: no lock fences its writes (on PostgreSQL another
    writer may be writing the same database), and a reader's rollback of an unfinished change
    may undo the one a live writer is applying."""

    def declare(fn: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
        declared = Writes(when)
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        async def method(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            fx = args[0] if args else None
            if isinstance(fx, Falsify) and fx.read_only and not fx.closed:  # a closed one: FacadeClosed
                try:
                    arguments: Optional[Mapping[str, Any]] = signature.bind(*args, **kwargs).arguments
                except TypeError:  # the call's own TypeError, raised by the call
                    arguments = None
                if arguments is not None and declared.changes(arguments):
                    raise RootBusy(
                        f"{fn.__name__}: this Falsify was opened read-only (lock=False: without the "
                        "root's writer lock), so it writes nothing; nothing was written (open the root "
                        "with its lock to write)"
                    )
            return await fn(*args, **kwargs)

        _WRITERS[method] = declared
        return method

    return declare


def changes_graph(method: Callable[..., Any], arguments: Mapping[str, Any]) -> bool:
    """Whether calling the facade method ``method`` (``Falsify.revise``: the class's
    function) with the named ``arguments`` may change the graph: it is declared with
    :func:`writes` and the call is not a dry run (nor a ``check`` without ``repair``)."""
    declared = _WRITERS.get(method)
    return declared is not None and declared.changes(arguments)


def _warned(result: Any, warnings: list[str]) -> Any:
    """A committed change whose after-commit work failed succeeds, saying so: ``"warnings"``."""
    if warnings:
        target = (
            result[-1] if isinstance(result, list) and result and isinstance(result[-1], dict) else result
        )
        if isinstance(target, dict):
            target["warnings"] = list(target.get("warnings") or []) + warnings
    return result


class Opening:
    """What :meth:`Falsify.open` and :meth:`Falsify.attach` return: ``await`` it for
    the facade, or use it as ``async with ... as fx`` (closed on leaving the block,
    also on an exception), the way ``aiosqlite.connect`` works."""

    def __init__(self, factory: Callable[[], Awaitable["Falsify"]]):
        self._factory = factory
        self._fx: Optional[Falsify] = None

    def __await__(self) -> Generator[Any, None, "Falsify"]:
        return _speaks(self._factory)().__await__()

    async def __aenter__(self) -> "Falsify":
        self._fx = await _speaks(self._factory)()
        return self._fx

    async def __aexit__(self, *exc: object) -> None:
        if self._fx is not None:
            await self._fx.close()


class Falsify:
    """A data root opened for reading and revising (holds its writer lock until closed)."""

    def __init__(self, stores: Stores, lock: Optional[WriterLock], owns_engines: bool = False):
        self.stores = stores
        self._lock = lock
        self._owns_engines = owns_engines  # opened standalone: close() releases cognee's engines too
        self.opened_ms = 0.0
        self.closed = False  # set by close(): every method and the Tasks built from it refuse (FacadeClosed)
        self._order = asyncio.Lock()  # the facade's calls, one at a time in the order they were made
        self._order_holder: Optional[asyncio.Task] = None

    @property
    def read_only(self) -> bool:
        """Opened without the root's writer lock (``lock=False``): it reads; every write is
        refused (``RootBusy``, nothing written). A facade lent the stores of an opening that holds
        the lock (the warm server's, to one command) writes under that opening's lock."""
        return self._lock is None and not self.stores.holds_writer_lock

    def _check_open(self, what: str) -> None:
        if self.closed:
            raise FacadeClosed(
                f"{what}: this Falsify is closed (its writer lock and stores are released); open or "
                "attach the root again; nothing was read or written"
            )

    # the opened parts, for programs that go one level down (and the tests)
    @property
    def store(self):
        return self.stores.store

    @property
    def journal(self) -> Journal:
        return self.stores.journal

    @property
    def paths(self):
        return self.stores.paths

    @property
    def recovered(self) -> Optional[str]:
        return self.stores.recovered

    @property
    def hook(self):
        return self.stores.hook

    @hook.setter
    def hook(self, value) -> None:
        self.stores.hook = value

    # ---- lifecycle -------------------------------------------------------
    @classmethod
    def open(
        cls,
        root=None,
        *,
        lock: bool = True,
        purpose: str = "falsify",
        database: Optional[str] = None,
        create: bool = True,
        warm: bool = True,
    ) -> Opening:
        """Open the data root ``root`` (default ``$FALSIFY_HOME``, else ``./.falsify``):
        configure cognee for it, take its writer lock (waiting up to
        ``FALSIFY_LOCK_TIMEOUT``, polling with ``asyncio.sleep``), and finish or roll back an
        interrupted change. ``database``: a ``postgresql://`` URL: the PostgreSQL backend on
        that database (same as ``FALSIFY_BACKEND=postgres`` + ``FALSIFY_DATABASE_URL``).
        ``create=False``: a root that does not exist yet is an ``InputError`` ("no data root
        at ..."), and nothing is created (the CLI's read-only commands open so); on the
        PostgreSQL backend the database holds the beliefs, so a new local root may read it.
        ``warm=False``: for short work that reads only the graph and the revision log (the
        CLI's ``status`` and ``explain``): the vector store, the embedding model and the
        modules a write imports are not loaded at open (measured: 0.3 s of a forked command, 1.8 s of a cold one)
        but on their first use, which then pays them where it runs (on the PostgreSQL backend
        the vector store's engine is built at open all the same); every call still works.

        cognee is configured through the process environment, so ``open`` sets (once per
        process; one process serves one root, a second raises ``RootConflict``):
        ``SYSTEM_ROOT_DIRECTORY``, ``DATA_ROOT_DIRECTORY``, ``CACHE_ROOT_DIRECTORY``,
        ``COGNEE_LOGS_DIR``, ``ENABLE_BACKEND_ACCESS_CONTROL=false``, ``FASTEMBED_CACHE_PATH``,
        ``HF_HUB_CACHE`` and ``COGNEE_ENV_FILE`` (to the root's own paths); unless already set,
        ``TELEMETRY_DISABLED``, ``KUZU_MAX_DB_SIZE``, ``LITELLM_LOCAL_MODEL_COST_MAP``,
        ``GLINER_AUTO_INSTALL=false``, ``GRAPH_DATABASE_SUBPROCESS_ENABLED=false``,
        ``VECTOR_DB_SUBPROCESS_ENABLED=false``, ``LOG_LEVEL=ERROR``, ``TIKTOKEN_CACHE_DIR``;
        the embedding settings of the embedder it selects (``EMBEDDING_*``, ``HF_HUB_OFFLINE``...:
        :mod:`memory_core.store.embedder`); allocator settings (``ARROW_DEFAULT_MEMORY_POOL``:
        :mod:`memory_core.store.process`); on the PostgreSQL backend cognee's ``GRAPH_DATABASE_*``
        and ``VECTOR_DB_*`` connection settings. It loads ``<project>/.env`` without override.
        A host that configures cognee itself uses :meth:`attach`, which sets nothing: in a program
        that already set cognee's storage or embedding settings to other values, or imported
        cognee first, ``open`` raises ``HostConfigError`` naming them and changes nothing
        (:func:`memory_core.store.data_root.host_settings`). cognee's engines, its import and the
        local model's loading run in a worker thread: the caller's event loop keeps running."""
        if database:
            data_root.use_database(database)
        return Opening(lambda: cls._open(root, lock, purpose, create, warm))

    @classmethod
    def attach(cls, state_dir, *, lock: bool = True, purpose: str = "falsify (attached)") -> Opening:
        """Open FALSIFY on the cognee configuration the host already set up (its own
        system/data roots, LLM and embedding provider). FALSIFY's own files (journal,
        revision log, lock, root metadata) live in ``state_dir``. Nothing of the
        host's is changed: not ``HOME``, not cognee's roots, not the environment."""
        return Opening(lambda: cls._attach(state_dir, lock, purpose))

    @classmethod
    async def _open(cls, root, lock: bool, purpose: str, create: bool = True, warm: bool = True) -> "Falsify":
        start = time.perf_counter()
        # the settings of this opening: a variable set (or --database given) before it counts
        data_root.load_dotenv_file()
        backend = backends.choose(settings.reload())
        # on PostgreSQL the beliefs live in the database: a new local root reads a shared one
        if not create and backend.beliefs_in_root and not data_root.root_exists(root, backend.settings):
            raise InputError(
                f"no data root at {data_root.resolve_root(root, backend.settings)} (nothing was "
                "created; `load` an investigation to start one, or pass the right --root / "
                "FALSIFY_HOME)"
            )
        paths = data_root.configure(root, backend)

        async def prepare(held):
            mine = fingerprint()
            backend.check_embedder(mine)  # a shared database: its own record decides
            # (a lost record is rebuilt from LanceDB's files: an import and a read, off the loop too)
            rebuilt = await asyncio.to_thread(
                rebuild_record, paths.meta, mine, held is not None, backend.name
            )
            await asyncio.to_thread(data_root.import_cognee)  # seconds of imports: never on the caller's loop
            return await _open_stores(
                backend,
                paths,
                paths.root,
                repair=held is not None,
                home=paths.home,
                embedder=mine,
                rebuilt=rebuilt,
                warm=warm,
            )

        return await cls._locked(
            start, backend.writer_lock(paths.lock, purpose) if lock else None, prepare, owns_engines=True
        )

    @classmethod
    async def _attach(cls, state_dir, lock: bool, purpose: str) -> "Falsify":
        start = time.perf_counter()
        state = Path(state_dir).expanduser().resolve()
        # imports cognee as the host left it (in a worker thread: never on the caller's loop) and
        # refuses a host configuration FALSIFY cannot work on (HostConfigError)
        await asyncio.to_thread(data_root.attach)
        with data_root.attaching():  # the process counts as attached only if this one succeeds
            state.mkdir(parents=True, exist_ok=True)
            backend = backends.choose(settings.reload())
            decide(backend.settings)  # the process's embedder, as an opening decides it

            async def prepare(held):
                mine = data_root.attached_fingerprint()
                check_root(state / "falsify.json", mine, write=held is not None, backend=backend.name)
                return await _open_stores(
                    backend, None, state, repair=held is not None, home=None, embedder=mine
                )

            # the backend's writer lock, as an opening takes it: the state directory's flock where the
            # beliefs live beside it, the database's lock on PostgreSQL (a flock of the state directory
            # let a second host, or a CLI, write the same database at once, and left the journal unfenced)
            return await cls._locked(
                start, backend.writer_lock(state / "writer.lock", purpose) if lock else None, prepare
            )

    @classmethod
    async def _locked(cls, start: float, lock, prepare, owns_engines: bool = False) -> "Falsify":
        """Take ``lock`` (if any), open the stores with ``prepare(held)``; release the lock if
        opening fails."""
        held = None
        if lock is not None:  # waiting for another writer never blocks the event loop
            held = await lock.acquire_async()
        try:
            stores = await prepare(held)
        except BaseException:
            try:
                if owns_engines:  # the engines may be open already: the root is let go whole
                    await engines.release(held=False)
            finally:
                if held:
                    held.release()
            raise
        fx = cls(stores, held, owns_engines=owns_engines)
        if owns_engines:
            engines.hold()
        fx.opened_ms = (time.perf_counter() - start) * 1000
        return fx

    async def close(self) -> None:
        """Release the data root: from now on every method (and every revision Task built from
        this facade) raises ``FacadeClosed`` and writes nothing. A root opened with
        :meth:`open` has its graph database and vector store closed (another process can
        open the root at once; cognee reopens them if this process opens the root again);
        the writer lock goes last (when the process has opened the root more than once, the
        engines are closed with the last of its facades). An attached facade leaves the host's
        engines to the host. Closing twice is harmless. A call already under way (a revision
        being written, a read) ends first; calls still waiting for their turn raise
        ``FacadeClosed``. A close cancelled meanwhile (a host's ``wait_for``, a server shutting
        down) still runs to its end, then raises the cancellation: the writer lock is never let
        go while a change is being written (another process would take the root and roll that
        change back under the writer)."""
        if self.closed:
            return
        self.closed = True
        caller = asyncio.current_task()
        await writer.uncancellable(lambda: self._let_go(caller))

    async def _let_go(self, caller: Optional[asyncio.Task]) -> None:
        """:meth:`close`'s work, for ``caller`` (the task that called it: when that task is
        running one of this facade's calls, that call is not waited for)."""
        try:
            if self._order_holder is None or self._order_holder is not caller:
                async with self._order:  # the call under way ends first; those waiting are refused
                    pass
            await self.stores.revision.shut_down(caller)  # and a host's revision Tasks under way
            self.journal.close()  # the PostgreSQL journal's connection
            if self._owns_engines:
                await engines.release()
        finally:
            if self._lock:
                self._lock.release()
                self._lock = None

    async def __aenter__(self) -> "Falsify":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    @_open_only
    async def warm_up(self) -> float:
        """Load the embedding model, cognee's relational tables and its pipeline runner
        once (the first run of a process costs ~1 s). Returns the milliseconds it took."""
        return await warm_up(self.store)

    # ---- writing ---------------------------------------------------------
    @writes()
    @_speaks
    @_in_turn
    async def load(self, source: Any) -> LoadResult:
        """Load an investigation: a path, JSON text or bytes, or a dict. A *fragment*
        (``{"question": {"key": "Q"}, ...}`` naming a stored question) adds hypotheses,
        evidence, conclusions and edges to it; edges may name stored keys. Re-loading adds
        only what is new and never resurrects a forgotten node. Bad input: ``InputError``,
        nothing written."""
        await _read_log_ahead(self.stores.journal)  # the forgotten index, off the loop
        return await load_op.load(self.stores, source)

    @writes()
    @_speaks
    @_in_turn
    async def load_file(self, path) -> LoadResult:
        await _read_log_ahead(self.stores.journal)
        return await load_op.load(self.stores, Path(path))

    @writes()
    @_speaks
    @_in_order
    async def revise(
        self,
        fact: str,
        *,
        triple: Optional[str] = None,
        target: Optional[str] = None,
        key: Optional[str] = None,
        source: Optional[str] = None,
        asserted_at: Optional[str] = None,
        trust: Optional[float] = None,
        policy: Optional[str] = None,
        valid_from: Optional[str] = None,
        valid_to: Optional[str] = None,
        record: bool = False,
        supports: Optional[str] = None,
        refutes: Optional[str] = None,
        weight: Optional[float] = None,
        inquiry: Optional[str] = None,
        dry_run: bool = False,
        pin_reason: str = "--target",
    ) -> RevisionResult:
        """Revise the beliefs with one new fact (two-gate detection, cascade, promotion,
        forget). ``triple`` "S|P|O" enables the offline structured judge; ``target`` pins
        the contradicted evidence; ``dry_run`` judges and changes nothing; ``trust`` registers an unknown
        ``source`` with that trust and ``policy`` overrides the question's reconciliation policy;
        ``valid_from``/``valid_to``: when the fact was true in the world (ISO dates).

        Offline, a fact in words comes back with ``to_decide`` (dry run or not): the caller
        judges those candidates and revises again with ``target=KEY`` for the one the fact
        contradicts, or ``record=True`` if it contradicts none of them (the fact is recorded as
        new evidence, unjudged); ``supports``/``refutes`` name a hypothesis the recorded fact
        bears on (an edge with ``weight``, default 0.5); ``inquiry`` the stored question the fact
        belongs to (where it is recorded). The keywords are the request's fields
        (:mod:`memory_core.core.fields`)."""
        check_switch(dry_run, "dry_run")
        request = revision_request(
            fact,
            triple,
            target,
            key,
            source,
            asserted_at,
            trust=trust,
            policy=policy,
            valid_from=valid_from,
            valid_to=valid_to,
            record=record,
            supports=supports,
            refutes=refutes,
            weight=weight,
            inquiry=inquiry,
        )
        return await revise_op.revise(self.stores, request, dry_run=dry_run, pin_reason=pin_reason)

    @writes()
    @_speaks
    @_in_order
    async def revise_many(
        self, facts: Iterable[Any], *, dry_run: bool = False, what: str = "facts", on_result=None
    ) -> list[RevisionResult]:
        """Many facts (strings, or dicts with the ``revise --file`` fields), validated and
        checked against the root as a whole before anything is written, then applied in
        order; one result per fact."""
        check_switch(dry_run, "dry_run")
        # every fact validated: a worker thread's work for a large batch (the caller's vocabulary
        # for messages goes along)
        size = len(facts) if isinstance(facts, (list, tuple)) else None
        requests = await off_loop.run(requests_from, facts, what, size=size)
        return await revise_op.revise_many(
            self.stores, requests, what=what, dry_run=dry_run, on_result=on_result
        )

    @writes()
    @_speaks
    @_in_turn
    async def resolve(self, loser: str, winner: str) -> RevisionResult:
        """End the dispute between two disputed evidence nodes: ``loser`` refuted (with
        a ``supersedes`` edge from ``winner``), ``winner`` alive, everything relabelled
        (the loser's dependents die and are forgotten, the winner's come back). The
        result has the shape of :meth:`revise`'s."""
        check_string(loser, "loser")
        check_string(winner, "--winner")
        return await resolve_op.resolve(self.stores, loser, winner)

    @writes()
    @_speaks
    @_in_turn
    async def undo(self) -> UndoResult:
        """Revert the last revision or load completely; again reverts the one before."""
        return await undo_op.undo(self.stores)

    @writes(when="repair")
    @_speaks
    @_in_turn
    async def check(self, repair: bool = False) -> CheckResult:
        """Verify graph/vector agreement, the revision rules and the journal; ``repair``
        fixes what can be fixed and says what it did."""
        check_switch(repair, "repair")
        return await check_op.check(self.stores, repair=repair)

    # ---- reading ---------------------------------------------------------
    @_speaks
    @_in_turn
    async def status(self, *, epoch: Optional[int] = None) -> StatusResult:
        """Every node (key, type, state, weight, epoch, text, ...) and edge. ``epoch``: the
        graph as it stood after that epoch, rebuilt from the revision log (nothing is
        written), with ``"epoch": N``; an epoch that does not exist is an InputError."""
        check_epoch(epoch)
        if epoch is not None:
            return await history_op.status_at(self.stores, epoch)
        return await status_op.status(self.store)

    @_speaks
    @_in_turn
    async def snapshot(self, *, epoch: Optional[int] = None) -> dict:
        """The viewer's graph: status plus sources and the reason for each state (``epoch``:
        as it stood after that epoch)."""
        check_epoch(epoch)
        if epoch is not None:
            return await history_op.snapshot_at(self.stores, epoch)
        return await status_op.snapshot(self.stores)

    @_speaks
    @_in_turn
    async def recall(
        self,
        question: Optional[str] = None,
        *,
        epoch: Optional[int] = None,
        as_of: Optional[str] = None,
        inquiry: Optional[str] = None,
        path: Optional[str] = None,
    ) -> RecallResult:
        """FALSIFY's answer (alive beliefs of every kind, every inquiry; "nothing stored
        matches" below the relevance floor) next to a plain-RAG answer. ``epoch``: from
        the beliefs alive after that epoch (labels as stored then), with ``"epoch": N``;
        ``as_of``: an ISO date, from the beliefs valid then (valid time), with ``"as_of"``;
        ``inquiry``: a question's key, only its beliefs answer; ``path``:
        ``"SUBJECT|PREDICATE|PREDICATE..."``, alive triples followed hop by hop (docs/recall.md)."""
        check_string(question, "question", optional=True)
        check_epoch(epoch)
        check_string(as_of, "--as-of", optional=True)
        check_string(inquiry, "inquiry", optional=True)
        check_string(path, "path", optional=True)
        if not question and inquiry is None and path is None:
            question = self.default_question() or ""
        # what recall folds from the revision log (kept by the log's identity) is folded here, in a
        # worker thread: recall would read the whole log on the event loop the first time
        await _read_log_ahead(self.stores.journal, recall_op.revision_marks)
        return await recall_op.recall(
            self.stores, question, epoch=epoch, as_of=as_of, inquiry=inquiry, path=path
        )

    @_speaks
    @_in_turn
    async def search(self, query: str, *, top_k: int = 5, include_dead: bool = False) -> list[SearchHit]:
        """The nearest evidence and conclusions to ``query``: alive ones only, unless
        ``include_dead`` (which is what a plain vector search returns)."""
        check_string(query, "query")
        check_count(top_k, "top_k", 1, recall_op.MAX_TOP_K)
        check_switch(include_dead, "include_dead")
        return await recall_op.search(self.stores, query, top_k=top_k, include_dead=include_dead)

    @_speaks
    @_in_turn
    async def explain(self, key: str) -> ExplainResult:
        """Why a node is in its state (forgotten nodes included), from the revision log;
        for an alive node also the justification that holds it now."""
        check_string(key, "key")
        await _read_log_ahead(self.stores.journal)  # the forgotten index, off the loop
        return await explain_op.explain(self.stores, key)

    @_open_only
    def revision_log(self) -> list[dict]:
        return explain_op.revision_log(self.journal)

    @_open_only
    def timeline(self) -> list[dict]:
        """The revision log as one row per epoch (kind, fact, judge, what changed)."""
        return history_op.timeline(self.journal.entries())

    @_open_only
    def default_question(self) -> Optional[str]:
        return self.stores.default_question()

    @_open_only
    def forgotten(self) -> dict[str, int]:
        return load_op.forgotten(self.journal)


async def _read_log_ahead(journal, *folds: Callable[[Any], Any]) -> None:
    """Bring the revision log's caches up to date in a worker thread, so the operation that uses
    them next finds them current instead of reading the log on the event loop: the forgotten
    index (:func:`memory_core.store.forgotten.forgotten_index`, one per journal, fed the new
    entries) and each of ``folds`` (a fold the operation keeps by the log's identity, e.g.
    recall's revision marks). The caller holds the facade's turn (nothing writes the log
    meanwhile); the index is shared by every operation on the journal, so the thread's work runs
    to its end even when the caller is cancelled (:func:`memory_core.store.writer.uncancellable`)."""
    from memory_core.store.forgotten import forgotten_index

    def read() -> None:
        forgotten_index(journal).antecedents_of(())  # its consumer map built here too
        for fold in folds:
            fold(journal)

    await writer.uncancellable(lambda: asyncio.to_thread(read))


async def _open_stores(
    backend: Backend,
    paths,
    state: Path,
    repair: bool,
    home: Optional[Path],
    embedder: Optional[dict] = None,
    rebuilt: Optional[str] = None,
    warm: bool = True,
) -> Stores:
    store = await BeliefStore.open(repair_torn_checkpoint=repair, home=home, backend=backend, warm=warm)
    journal = backend.open_journal(state)
    try:
        # a lost embedder record: rebuilt from the stores, or refused before anything is written
        if embedder is not None and rebuilt is None:
            rebuilt = await rebuild_meta(store, journal, embedder, write=repair)
    except BaseException:
        journal.close()
        raise
    # an unfinished change is rolled back only under the writer lock: an opening without it (a
    # reader) cannot tell a crashed writer's intent from the one a live writer is applying now, and
    # rolling that back under it left the log saying committed over stores holding the before-state
    recovered = await writer.recover(store, journal) if repair else None
    recovered = "; ".join(filter(None, [store.repaired, rebuilt, recovered])) or None
    return Stores(
        store, journal, paths, fault_hook(backend.settings.fault_at), recovered, holds_writer_lock=repair
    )


def revision_tasks(fx: Falsify, *, use_llm: Optional[bool] = None, dry_run: bool = False) -> list:
    """The cognee Tasks of a revision bound to ``fx``, for a host's own
    ``cognee.run_custom_pipeline(tasks=revision_tasks(fx), data=[...])``: each data item
    (a fact, a dict with the ``revise`` fields, or a list of them) is one batch. A FALSIFY
    error fails the host's run the way cognee reports any task's error (the run raises the
    original exception, e.g. ``InputError`` with its ``exit_code``, and is recorded as
    ``PipelineRunErrored``); the last Task outputs the batch's ``RevisionResult``s (one per
    fact, in order), which a Task the host appends receives as its input. Tasks of a
    closed ``fx`` raise ``FacadeClosed``."""
    from memory_core import tasks
    from memory_core.store.pipeline import task

    if fx.closed:
        from memory_core.core.errors import FacadeClosed

        raise FacadeClosed("revision_tasks: this Falsify is closed; open or attach it again")
    if fx.read_only and not dry_run:
        raise RootBusy(
            "revision_tasks: this Falsify was opened read-only (lock=False: without the root's writer "
            "lock), so its Tasks may not write; open or attach the root with its lock (or build dry-run "
            "Tasks); nothing was written"
        )
    use_llm = bool(fx.stores.settings.llm_key) if use_llm is None else use_llm
    built = tasks.revision_tasks(
        fx.stores,
        use_llm=use_llm,
        dry_run=dry_run,
        results=revise_op.result_of,
        closed=lambda: fx.closed,
    )
    built[0] = task(_gives_back_the_revision_lock(built[0].executable, fx.stores), needs_llm=use_llm)
    return built


def _gives_back_the_revision_lock(detect: Callable[..., Awaitable[Any]], stores: Stores):
    """The first revision Task of a host's run, which takes the facade's revision lock for its
    batch; the last (``write_revision``) gives it back. A run that ends before the last Task
    (the host cancelled it: a ``wait_for`` timeout, a closed client; cognee cancelled the item
    because another failed; a Task of the host's between FALSIFY's raised) never reaches it,
    and every later call on the facade, its ``close`` too, would wait for the lock for ever.
    So the run's task (cognee runs each data item's Tasks in one asyncio task) gives the lock
    back when it ends still holding it. Nothing is left half written: the lock is held without
    a write until the last Task, whose write rolls itself back when cut short."""

    async def detect_contradictions(items, ctx=None):
        run = asyncio.current_task()
        if run is not None:
            run.add_done_callback(functools.partial(_give_back, stores))
        return await detect(items, ctx)

    return detect_contradictions


def _give_back(stores: Stores, run: asyncio.Task) -> None:
    """The revision lock given back by ``run``, a host's item that ended holding it."""
    stores.revision.release_held_by(run)


RECALL_FIELDS = ("question", "inquiry", "path", "as_of", "epoch")


def recall_tasks(fx: Falsify) -> list:
    """The cognee Task of a recall bound to ``fx``, ``recall_beliefs``, for a host's own
    ``cognee.run_custom_pipeline(tasks=recall_tasks(fx), data=[...])``: each data item (a
    question, or a dict of ``recall``'s arguments: question, inquiry, path, as_of, epoch) is
    answered by the same code as ``Falsify.recall``; the Task outputs the item's
    ``RecallResult``s in order (a Task the host appends receives them). A bad item fails the
    host's run with its ``InputError``; Tasks of a closed ``fx`` raise ``FacadeClosed``."""
    from memory_core.core.errors import FacadeClosed
    from memory_core.store.pipeline import task

    if fx.closed:
        raise FacadeClosed("recall_tasks: this Falsify is closed; open or attach it again")

    async def recall_beliefs(items, ctx=None):
        if fx.closed:
            raise FacadeClosed(
                "this recall Task belongs to a closed Falsify; open or attach it again and build "
                "the Task from the new one"
            )
        results = []
        for item in items:
            if isinstance(item, str):
                results.append(await fx.recall(item))
            elif isinstance(item, dict) and set(item) <= set(RECALL_FIELDS):
                results.append(
                    await fx.recall(
                        item.get("question"), **{k: v for k, v in item.items() if k != "question"}
                    )
                )
            else:
                allowed = ", ".join(RECALL_FIELDS)
                raise InputError(
                    f"recall_beliefs: a data item is a question or a dict of {allowed}, got "
                    f"{type(item).__name__}"
                    + (
                        f" with {', '.join(sorted(set(item) - set(RECALL_FIELDS)))}"
                        if isinstance(item, dict)
                        else ""
                    )
                )
        return results

    return [task(recall_beliefs)]


__all__ = ["Falsify", "Opening", "InputError", "revision_tasks", "recall_tasks"]
