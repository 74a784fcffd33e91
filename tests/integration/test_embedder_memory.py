"""The offline embedder's onnxruntime session: cognee's fastembed engine runs it (fastembed's
TextEmbedding -> its text model -> ``model``, the session), built by FALSIFY's session options
(memory_core.store.embedder.configure_sessions) when a text is first embedded: the int8-stored
weights folded to float32 once, and no CPU memory arena, which would keep the largest batch ever
embedded for the process's life. This checks the layout FALSIFY leans on, the options, that a
process which embeds nothing never builds the session, that a large batch's memory goes back,
and that the vectors are those of fastembed's own session; bench.startup measures the memory."""

from __future__ import annotations

import ctypes
import json
import sys

import pytest

import forkserver
from harness import REPO, clean_env, copy_root, loaded_root
from memory_core.store import embedder


def _session():
    engine = embedder.embedding_engine()
    deferred = engine.embedding_model.model.model
    assert isinstance(deferred, embedder._DeferredSession), type(deferred)
    session = deferred.session()
    assert deferred.built and type(session).__name__ == "InferenceSession" and callable(session.run)
    return engine, deferred


LAZY = """
import asyncio, json, sys
from memory_core.api import Falsify
from memory_core.store import embedder


def session_built():
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

    deferred = embedder._engine_of(get_embedding_engine()).embedding_model.model.model
    return [type(deferred).__name__, deferred.built]


async def main(root):
    seen = {}
    async with Falsify.open(root) as fx:
        seen["opened"] = session_built()
        await fx.status()
        await fx.explain("E_qa")
        await fx.check()
        seen["status_explain_check"] = session_built()
        await fx.recall("When did Company X learn of the brake-valve defect?")
        seen["recall"] = session_built()
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
"""


def test_a_process_that_embeds_nothing_never_builds_the_session(tmp_path_factory, tmp_path):
    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "root")
    proc = forkserver.run(
        [sys.executable, "-c", LAZY, str(root)], cwd=REPO, env=clean_env(), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["opened"] == seen["status_explain_check"] == ["_DeferredSession", False], seen
    assert seen["recall"] == ["_DeferredSession", True], seen


def _resident_mb() -> float:
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def test_the_offline_session_has_no_arena_and_folds_its_weights(app):
    _engine, deferred = _session()
    options = deferred.session().get_session_options()
    assert options.enable_cpu_mem_arena is False
    try:  # constant folding is not disabled (the weights would be made again in every run)
        disabled = options.get_session_config_entry("optimization.disable_specified_optimizers")
    except Exception:  # noqa: BLE001  (onnxruntime raises for an entry never set)
        disabled = ""
    assert "ConstantFolding" not in disabled


async def test_a_large_batch_gives_its_memory_back(app):
    """With onnxruntime's arena, 64 texts of 120 words leave the process ~600 MB larger for
    good; without it, what the run allocated goes back to malloc, which returns it."""
    engine, _session_ = _session()
    await engine.embed_text(["warm up"])
    before = _resident_mb()
    texts = [" ".join(["the supplier warned the company about the valve"] * 15) + f" {i}" for i in range(64)]
    vectors = await engine.embed_text(texts)
    assert len(vectors) == 64
    grown = _resident_mb() - before
    assert grown < 200, f"the process kept {grown:.0f} MB after one large batch"


async def test_the_vectors_are_those_of_fastembeds_own_session(app):
    """Vectors of FALSIFY's session equal those of a session built with fastembed's own
    options (ORT_ENABLE_ALL, the default arena), to float precision."""
    import onnxruntime

    engine, deferred = _session()
    session = deferred.session()
    theirs_options = onnxruntime.SessionOptions()
    theirs_options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert theirs_options.enable_cpu_mem_arena is True
    reference = onnxruntime.InferenceSession(
        str(embedder.model_onnx()), sess_options=theirs_options, providers=session.get_providers()
    )
    texts = ["The March QA report was back-dated.", "Supplier Valtec warned Company X in January 2021. " * 20]
    mine = await engine.embed_text(texts)
    engine.embedding_model.model.model = reference
    try:
        theirs = await engine.embed_text(texts)
    finally:
        engine.embedding_model.model.model = deferred
    for a, b in zip(mine, theirs):
        assert list(a) == pytest.approx(list(b), abs=1e-6)
