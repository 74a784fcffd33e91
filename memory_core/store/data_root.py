"""Where FALSIFY keeps its data and how cognee is configured before it is imported.

One data root holds everything: cognee's relational, graph (Ladybug) and vector
(LanceDB) databases, its logs and cache, the local embedding model's cache,
FALSIFY's meta file, revision log and journal. Resolution order:
``--root DIR``, else ``$FALSIFY_HOME``, else ``./.falsify``.

cognee reads several settings at import and caches config objects on first use,
so :func:`configure` must run before the first ``import cognee``; it refuses to
move an already-imported cognee to another root.

``.env`` handling, predictable by construction: FALSIFY loads
``<project>/.env`` with python-dotenv *without* override (a variable set in the
shell wins over the file). cognee, at import, would search for a ``.env`` from
the working directory upward and load it *with* override (the file would beat
the shell); FALSIFY points cognee's ``COGNEE_ENV_FILE`` at an empty file in the
data root, so cognee loads nothing more and the one rule is "shell beats the
project's .env". (Set ``COGNEE_ENV_FILE`` yourself to make cognee load a file
of your choosing, with cognee's override semantics.)
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from memory_core.store import backends, embedder, lazy_imports, process, settings as config
from memory_core.store.backends.postgres import database_url  # noqa: F401  (re-exported)
from memory_core.store.environment import hosted_embeddings_configured, llm_key_configured  # noqa: F401  (re-exported)
from memory_core.store.environment import redact_logs
from memory_core.store.lock import refuse_unsafe_root
from memory_core.store.pipeline import RUNNER_NAMES

PROJECT_DIR = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Paths:
    root: Path

    @property
    def system(self) -> Path:
        return self.root / "cognee_system"

    @property
    def data(self) -> Path:
        return self.root / "cognee_data"

    @property
    def cache(self) -> Path:
        return self.root / "cognee_cache"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def meta(self) -> Path:
        return self.root / "falsify.json"

    @property
    def log(self) -> Path:
        """The revision log: one JSON line per state change (explain reads it)."""
        return self.root / "revisions.jsonl"

    @property
    def journal(self) -> Path:
        return self.root / "journal"

    @property
    def lock(self) -> Path:
        return self.root / "writer.lock"

    @property
    def home(self) -> Path:
        """Where Ladybug keeps its ``~/.lbdb`` extension folder for this root (HOME points
        here only while the graph database opens; see BeliefStore.open)."""
        return self.root / "home"


_configured: Paths | None = None
_llm_key: bool = False  # whether the settings configure() went by give a hosted LLM key


def resolve_root(root: str | os.PathLike | None, settings: config.Settings) -> Path:
    """``root`` if given, else ``settings.home`` (``FALSIFY_HOME``), else ``./.falsify``."""
    if root:
        return Path(root).expanduser().resolve()
    env = settings.home
    if env:
        return Path(env).expanduser().resolve()
    return (Path.cwd() / ".falsify").resolve()


def root_exists(root: str | os.PathLike | None, settings: config.Settings) -> bool:
    """Whether ``root`` holds a data root (its meta file or cognee's databases)."""
    paths = Paths(resolve_root(root, settings))
    return paths.meta.is_file() or paths.system.is_dir()


def load_dotenv_file() -> bool:
    """Load ``<project>/.env`` without overriding the process environment; True when it set
    anything (the opening that called it then reads the settings again:
    :func:`memory_core.store.settings.reload`)."""
    env_file = PROJECT_DIR / ".env"
    if env_file.is_file():
        from dotenv import load_dotenv

        before = dict(os.environ)
        load_dotenv(env_file, override=False)
        return dict(os.environ) != before
    return False


def _values(paths: Paths) -> dict[str, str]:
    return {
        "SYSTEM_ROOT_DIRECTORY": str(paths.system),
        "DATA_ROOT_DIRECTORY": str(paths.data),
        "CACHE_ROOT_DIRECTORY": str(paths.cache),
        "COGNEE_LOGS_DIR": str(paths.logs),
        "ENABLE_BACKEND_ACCESS_CONTROL": "false",
        "FASTEMBED_CACHE_PATH": str(paths.models),
        "HF_HUB_CACHE": str(paths.models),
    }


_own_process = False


def claim_process() -> None:
    """This process is FALSIFY's own (the CLI, the MCP server, the viewer): cognee settings
    in the environment it inherited (a user's shell configured for another cognee program)
    are replaced by the data root's, as nothing else in the process uses cognee. Without
    the claim, :func:`configure` refuses to change a host's cognee settings."""
    global _own_process
    _own_process = True


def _layout_root(values: dict[str, str]) -> Path | None:
    """The data root whose layout these cognee directories are (FALSIFY set them, e.g. in a
    parent FALSIFY process the environment was inherited from), or None."""
    system = values.get("SYSTEM_ROOT_DIRECTORY")
    if not system:
        return None
    root = Path(system).parent
    mine = {
        k: v for k, v in _values(Paths(root)).items() if k in values and k != "ENABLE_BACKEND_ACCESS_CONTROL"
    }
    return root if all(values[k] == v for k, v in mine.items()) else None


def host_settings(paths: Paths, backend: "backends.Backend") -> list[str]:
    """The cognee settings of this process that opening ``paths`` would overwrite, as
    ``NAME=value`` (the host's: set before FALSIFY configured anything): environment
    variables holding other values than the root's, and an already imported cognee whose
    databases are elsewhere. Values that lay out another FALSIFY data root (inherited from
    a FALSIFY process) are not a host's; nor are cognee's database settings of the PostgreSQL
    backend, which FALSIFY_BACKEND=postgres asks FALSIFY to set (its database's)."""
    wanted = dict(_values(paths))
    if embedder.local_enabled():
        wanted.update(embedder.environment(paths))
    have = {k: os.environ[k] for k in wanted if os.environ.get(k) not in (None, "")}
    inherited = _layout_root(have)
    found = []
    for key, value in have.items():
        if value == wanted[key] or (inherited is not None and key in _values(Paths(inherited))):
            continue
        found.append(f"{key}={value}")
    if "cognee" in sys.modules:  # imported (and so configured) before FALSIFY configured it
        try:
            from cognee.infrastructure.databases.relational.config import get_relational_config

            system = get_relational_config().db_path
        except Exception:  # noqa: BLE001  (a cognee that does not say: its roots are not ours to move)
            system = None
        if system is None or not Path(system).resolve().is_relative_to(paths.system.resolve()):
            found.append(f"cognee already imported, its databases in {system or 'an unknown place'}")
    return found


def configure(root: str | os.PathLike | None, backend: "backends.Backend") -> Paths:
    """Point cognee at one data root. Call before the first ``import cognee``. ``backend``:
    the one the caller chose from its settings (``Falsify.open``: ``backends.choose``); the
    data root's place and the embedder are decided by ``backend.settings`` too. In a
    process that is not FALSIFY's own (:func:`claim_process`), a host's cognee settings
    (:func:`host_settings`) are never overwritten: ``HostConfigError``, nothing changed."""
    global _configured, _llm_key
    paths = Paths(resolve_root(root, backend.settings))
    if _attached:
        from memory_core.core.errors import RootConflict

        raise RootConflict(
            f"FALSIFY is attached to the host's cognee configuration in this process; opening the "
            f"data root {paths.root} would reconfigure the host's cognee (use Falsify.attach, or "
            "open the root from another process)"
        )
    check_backend(paths.meta, backend.name)
    if _configured is not None:
        if _configured.root != paths.root:
            from memory_core.core.errors import RootConflict

            raise RootConflict(
                f"cognee is already configured for {_configured.root} in this process; one process serves one "
                f"data root (open {paths.root} from another process)"
            )
        return _configured
    load_dotenv_file()
    redact_logs()  # no log record of this process carries a secret
    refuse_unsafe_root(paths.root)  # nothing is made in a root another user could change
    embedder.decide(backend.settings)  # the offline model unless hosted embeddings are configured
    if not _own_process:
        taken = host_settings(paths, backend)
        if taken:
            from memory_core.core.errors import HostConfigError

            raise HostConfigError(
                "Falsify.open: this program has configured cognee itself (" + "; ".join(taken) + "), and "
                f"opening the data root {paths.root} would move cognee there, under the program's feet; nothing "
                "was changed. Use Falsify.attach(state_dir) to work on the program's own cognee configuration, "
                "or open the root from a process of its own (the falsify command)"
            )
    backend.reach()  # a database that cannot be reached: refused before anything is made on disk
    process.configure_process(backend.settings)  # allocator settings, before cognee's native threads start
    os.environ.update(
        backend.cognee_environment()
    )  # e.g. cognee's postgres + pgvector adapters on our database
    for key, value in backend.cognee_defaults().items():  # e.g. the embedded backend's SQLite pool
        os.environ.setdefault(key, value)
    paths.root.mkdir(parents=True, exist_ok=True)
    for p in (paths.system, paths.data, paths.cache, paths.logs, paths.models):
        p.mkdir(parents=True, exist_ok=True)
    os.environ.update(_values(paths))
    if not os.environ.get("COGNEE_ENV_FILE"):
        quiet = paths.root / "cognee.env"
        if not quiet.exists():
            quiet.write_text(
                "# intentionally empty: FALSIFY loads <project>/.env itself (see data_root.py)\n"
            )
        os.environ["COGNEE_ENV_FILE"] = str(quiet)
    paths.home.mkdir(exist_ok=True)
    # Quiet, local, no phoning home.
    for key, value in {
        "TELEMETRY_DISABLED": "1",
        # ladybug 0.19 (pinned by cognee 1.6.5) burns 8 MiB of max_db_size per CHECKPOINT
        # (LadybugDB/ladybug#924): at cognee's 32 GiB default a long-lived process
        # (the viewer) dies after ~900 revisions. bench.checkpoint_budget reproduces it.
        "KUZU_MAX_DB_SIZE": str(1 << 40),
        # cognee's default buffer pool (32 GiB of address space) costs ~80 MB of resident memory
        # at open for the page table of its frames, whatever the graph's size; 4 GiB costs ~10
        # and still holds a graph far larger than a belief memory's (a power of 2, as ladybug needs)
        "KUZU_BUFFER_POOL_SIZE": str(1 << 32),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "GLINER_AUTO_INSTALL": "false",
        "GRAPH_DATABASE_SUBPROCESS_ENABLED": "false",
        "VECTOR_DB_SUBPROCESS_ENABLED": "false",
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "ERROR"),
        # keep HOME-relative caches (ladybug extensions, tiktoken) inside the root
        "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", str(paths.cache / "tiktoken")),
    }.items():
        os.environ.setdefault(key, value)
    embedder.apply_environment(paths)
    _configured = paths
    _llm_key = bool(backend.settings.llm_key)
    if "cognee" in sys.modules:
        _reapply(paths)
    return paths


def _reapply(paths: Paths) -> None:
    os.environ.update(_values(paths))
    import cognee

    cognee.config.system_root_directory(str(paths.system))
    cognee.config.data_root_directory(str(paths.data))


def import_cognee():
    """Import cognee after :func:`configure` (which set everything cognee reads at import).
    Blocking (``asyncio.to_thread`` runs it off the loop). The import runs once per process,
    whole: an opening cancelled meanwhile (``asyncio.wait_for``'s timeout) stops waiting, the
    import goes on in its thread, and every other caller -- the next opening, two at once --
    waits for that same run rather than importing modules it has half initialised (a
    ``cannot import name ... from partially initialized module``); a run that failed is tried
    again by the next caller."""
    if _configured is None:
        raise RuntimeError("memory_core.store.data_root.configure() must run before cognee is imported")
    with process.importing_lock:
        running = process.importing
        mine = running is None or (running.done() and running.exception() is not None)
        if mine:
            running = process.importing = concurrent.futures.Future()
            running.set_running_or_notify_cancel()  # no caller can cancel the run
    if not mine:
        return _ready(running.result())
    try:
        if "cognee" in sys.modules:  # imported before FALSIFY's first opening (a host, a test)
            cognee = sys.modules["cognee"]
            ready = _ready(cognee)
        else:
            hook = sys.excepthook
            with process.collector_paused(freeze=_own_process):
                defer_unused_packages()
                import cognee

                ready = _ready(cognee)  # inside the pause too: what it builds is frozen with the rest
            if not _own_process:
                # cognee's import makes its logger the process's hook for uncaught exceptions (a
                # rich traceback of ~100 lines before Python's own): a host's stays the host's
                sys.excepthook = hook
    except BaseException as error:
        running.set_exception(error)
        raise
    running.set_result(cognee)
    return ready


def _ready(cognee):
    _reapply(_configured)
    _level_cognee_logs()
    return cognee


def defer_unused_packages() -> list[str]:
    """Stand-ins for what cognee imports at once and FALSIFY never calls (litellm only with a
    hosted model; :mod:`memory_core.store.lazy_imports`): about 210 MB resident; and, in
    FALSIFY's own process (:func:`claim_process`), pandas, which pyarrow would import on its
    first conversion (:func:`lazy_imports.defer_pandas`, 30-45 MB). Returns the packages deferred.
    :func:`import_cognee` does it before cognee is imported."""
    deferred = lazy_imports.install(hosted=bool(_llm_key) or not embedder.local_enabled())
    if _own_process and lazy_imports.defer_pandas():
        deferred.append(lazy_imports.PANDAS)
    return deferred


# cognee's own loggers, its SQLite driver's (a record per query) and its pipeline runner's
LEVELLED_LOGGERS = ("cognee", "aiosqlite") + RUNNER_NAMES


def _level_cognee_logs() -> None:
    """cognee's loggers (``cognee.*``, its pipeline runner's, its SQLite driver's) at ``LOG_LEVEL``,
    unless something set their level already; in FALSIFY's own process (:func:`claim_process`), the
    root logger too, whose only handlers are cognee's. cognee leaves them unset (its root logger
    lets everything through) and its handlers drop what is below ``LOG_LEVEL``, so every record is
    built first (about 0.1-0.2 ms a record with the secret masking; each pipeline task logs twice, 6 %
    of a 300-fact batch); with the level on the logger, a record below it is dropped before it is
    built. A host program's root logger is its own: left as it is."""
    import logging

    level = logging.getLevelName(os.environ.get("LOG_LEVEL", "ERROR").strip().upper())
    if not isinstance(level, int):
        return
    for name in LEVELLED_LOGGERS + (("",) if _own_process else ()):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(level)


_attached = 0  # the attachings made or under way (Falsify.attach): while any, no opening reconfigures cognee


def check_backend(meta_path: Path, name: str) -> None:
    """Refuse (:class:`BackendMismatch`) a data root whose ``falsify.json`` records another
    backend than ``name``, before anything is made: a PostgreSQL root opened without its URL
    would otherwise be read as an empty embedded root ("nothing stored"), and a load there would
    build a second store. A root without the record (made by an earlier version) is let be; its
    next opening with the lock records it (:func:`memory_core.store.embedder.rebuild_record`)."""
    from memory_core.core.errors import BackendMismatch
    from memory_core.core.investigation import loads_json

    try:
        meta = loads_json(meta_path.read_bytes(), "falsify.json")
    except (OSError, ValueError):
        return  # no record (a new root), or a damaged one: the embedder check names it
    recorded = meta.get("backend") if isinstance(meta, dict) else None
    if not isinstance(recorded, str) or recorded == name:
        return
    words = {"postgres": "the PostgreSQL backend", "ladybug": "the embedded backend (Ladybug + LanceDB)"}
    how = (
        "give it the database it was made with (--database URL or FALSIFY_DATABASE_URL)"
        if recorded == "postgres"
        else "open it without --database / FALSIFY_DATABASE_URL / FALSIFY_BACKEND=postgres"
    )
    raise BackendMismatch(
        f"this data root ({meta_path.parent}) was made for {words.get(recorded, recorded)}, but the current "
        f"settings select {words.get(name, name)}: {how}, or use another --root; nothing was opened"
    )


def attach() -> None:
    """Use cognee as the host configured it (``Falsify.attach``): nothing is set, moved
    or read from FALSIFY's .env; cognee is imported as the host left it. The process counts as
    attached only inside :func:`attaching`."""
    import cognee  # noqa: F401  (the host's configuration, as it stands)

    check_host_configuration()


@contextlib.contextmanager
def attaching():
    """An attaching under way (``Falsify.attach``, after :func:`attach`): the process counts as
    attached meanwhile, and for good when it succeeds; a refused one (its lock busy, its state
    directory refused, cancelled) leaves nothing behind: a later ``Falsify.open`` in the process
    is not refused for it."""
    global _attached
    _attached += 1
    try:
        yield
    except BaseException:
        _attached -= 1
        raise


def check_host_configuration() -> None:
    """Refuse, naming the setting to change, a host configuration FALSIFY cannot work on:
    graph or vector engines in worker processes (FALSIFY reads and compacts the stores
    through engine methods cognee's remote proxies do not forward), and backend access
    control (pipeline runs then write to per-dataset databases FALSIFY does not read)."""
    from cognee.context_global_variables import backend_access_control_enabled
    from cognee.infrastructure.databases.graph.config import get_graph_config
    from cognee.infrastructure.databases.vector.config import get_vectordb_config

    from memory_core.core.errors import HostConfigError

    wrong = []
    if get_graph_config().graph_database_subprocess_enabled:
        wrong.append(
            "GRAPH_DATABASE_SUBPROCESS_ENABLED=false (cognee runs the graph engine in a worker "
            "process by default)"
        )
    if get_vectordb_config().vector_db_subprocess_enabled:
        wrong.append(
            "VECTOR_DB_SUBPROCESS_ENABLED=false (cognee runs the vector engine in a worker process "
            "by default)"
        )
    try:
        access_control = backend_access_control_enabled()
    except OSError:  # cognee: access control asked for but unsupported by the configured handlers
        access_control = True
    if access_control:
        wrong.append(
            "ENABLE_BACKEND_ACCESS_CONTROL=false (with it on, each pipeline run writes to its own "
            "per-user, per-dataset databases)"
        )
    if wrong:
        raise HostConfigError(
            "Falsify.attach: FALSIFY works on one in-process graph and vector store; set "
            + "; ".join(wrong)
            + " before cognee is imported (or before its first engine is "
            "built); nothing was opened"
        )


def attached_fingerprint() -> dict:
    """The embedder cognee is configured with (recorded in an attached state directory)."""
    from cognee.infrastructure.databases.vector.embeddings.config import get_embedding_config

    config = get_embedding_config()
    return {
        "provider": str(config.embedding_provider),
        "model": str(config.embedding_model),
        "dimensions": int(config.embedding_dimensions or 0),
    }


def use_offline_embedder(models_dir: str | os.PathLike) -> dict:
    """For a host that wants FALSIFY's packaged offline model: lay it out in
    ``models_dir`` and point cognee's embedding configuration at it (fastembed,
    all-MiniLM-L6-v2, 384 dims, local files only). Call before cognee builds its
    first vector engine. Returns the embedding settings it applied."""
    models = Path(models_dir).expanduser().resolve()
    models.mkdir(parents=True, exist_ok=True)
    embedder.prepare(models)
    values = {
        "embedding_provider": "fastembed",
        "embedding_model": embedder.MODEL,
        "embedding_dimensions": embedder.DIMENSIONS,
    }
    # fastembed and the hub client read their cache locations from the environment
    os.environ.update(
        {"FASTEMBED_CACHE_PATH": str(models), "HF_HUB_CACHE": str(models), "HF_HUB_OFFLINE": "1"}
    )
    import cognee

    cognee.config.set_embedding_config(values)
    from cognee.infrastructure.databases.vector.embeddings.config import get_embedding_config

    config = get_embedding_config()
    for name, value in values.items():
        setattr(config, name, value)
    return values


def require_configured() -> None:
    if _configured is None and not _attached and "cognee" not in sys.modules:
        raise RuntimeError(
            "call memory_core.store.data_root.configure(root) before importing modules that import "
            "cognee (memory_core.store.models, .store, ...): cognee reads its storage settings at import"
        )


def paths() -> Paths:
    if _configured is None:
        raise RuntimeError("memory_core.store.data_root.configure() has not run")
    return _configured


# ---- the backend ---------------------------------------------------------------
# FALSIFY_BACKEND=postgres puts the graph, the vectors, the revision log, the intent and the
# writer lock in one PostgreSQL database (memory_core.store.backends.postgres); the choice is
# made by memory_core.store.backends.choose from the settings (memory_core.store.settings).


def use_database(url: str) -> None:
    """``--database URL`` / ``Falsify.open(..., database=URL)``: the postgres backend on that
    database, for this process (its settings) and its children (the environment they inherit;
    :func:`memory_core.store.settings.reload` reads it back, so a reload keeps it)."""
    os.environ["FALSIFY_BACKEND"] = "postgres"
    os.environ["FALSIFY_DATABASE_URL"] = url
    config.replace(backend="postgres", database_url=url.strip() or None)
