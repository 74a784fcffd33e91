"""The offline embedder's onnxruntime session: cognee's fastembed engine runs it (fastembed's
TextEmbedding -> its text model -> ``model``, the session), built by FALSIFY's session options
(memory_core.store.embedder.configure_sessions): the int8-stored weights folded to float32 once
when it is built, and no CPU memory arena, which would keep the largest batch ever embedded for
the process's life. This checks the layout FALSIFY leans on, the options, that a large batch's
memory goes back, and that the vectors are those of fastembed's own session; bench.startup
measures the memory."""

from __future__ import annotations

import ctypes

import pytest

from memory_core.store import embedder


def _session():
    engine = embedder.embedding_engine()
    session = engine.embedding_model.model.model
    assert type(session).__name__ == "InferenceSession" and callable(session.run), type(session)
    return engine, session


def _resident_mb() -> float:
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def test_the_offline_session_has_no_arena_and_folds_its_weights(app):
    _engine, session = _session()
    options = session.get_session_options()
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

    engine, session = _session()
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
        engine.embedding_model.model.model = session
    for a, b in zip(mine, theirs):
        assert list(a) == pytest.approx(list(b), abs=1e-6)
