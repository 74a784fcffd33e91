"""The offline embedder gives its memory back: cognee's fastembed engine runs an onnxruntime
session whose CPU arena would otherwise stay at the largest batch it ever embedded for the
process's life (memory_core.store.embedder.lean). This checks the layout FALSIFY leans on
(fastembed's TextEmbedding -> its text model -> ``model``, the session) and that the vectors
are the session's own; bench.startup measures the memory."""

from __future__ import annotations

import pytest

from memory_core.store import embedder

TEXTS = ["The March QA report was back-dated.", "Supplier Valtec warned Company X in January 2021. " * 20]


async def _vectors_with(engine, session, texts=TEXTS) -> list:
    """``texts``' vectors from cognee's engine with ``session`` in place of its model's own."""
    own = engine.embedding_model.model.model
    engine.embedding_model.model.model = session
    try:
        return await engine.embed_text(texts)
    finally:
        engine.embedding_model.model.model = own


async def test_the_offline_embedders_session_gives_its_arena_back(app):
    engine = embedder.embedding_engine()
    session = engine.embedding_model.model.model
    assert isinstance(session, embedder._ShrinkingSession), type(session)
    inner = session._session
    assert type(inner).__name__ == "InferenceSession" and callable(inner.run)
    embedder.lean(engine)  # idempotent
    assert engine.embedding_model.model.model is session
    wrapped = await engine.embed_text(TEXTS)
    raw = await _vectors_with(engine, inner)
    assert len(wrapped) == len(raw) == 2
    for a, b in zip(wrapped, raw):
        assert list(a) == pytest.approx(list(b), abs=1e-6)


def test_other_engines_are_left_alone():
    class Remote:
        async def embed_text(self, texts):
            return [[0.0] for _ in texts]

    engine = Remote()
    embedder.lean(engine)
    embedder.lean(None)
    assert not hasattr(engine, "embedding_model")


async def test_the_offline_model_keeps_its_int8_weights_and_its_vectors(app):
    """fastembed builds the session with FALSIFY's session config (no ConstantFolding, which
    would keep a float32 copy of every int8 weight); its vectors are those of a session built
    with fastembed's own options, to float precision."""
    import onnxruntime

    engine = embedder.embedding_engine()
    session = engine.embedding_model.model.model
    inner = session._session
    options = inner.get_session_options()
    for key, value in embedder.SESSION_CONFIG.items():
        assert options.get_session_config_entry(key) == value
    folded = onnxruntime.SessionOptions()  # ORT_ENABLE_ALL, as fastembed sets it: constant folding on
    assert folded.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    reference = onnxruntime.InferenceSession(
        str(embedder.model_onnx()),
        sess_options=folded,
        providers=inner.get_providers(),
    )
    mine = await engine.embed_text(TEXTS)
    theirs = await _vectors_with(engine, reference)
    for a, b in zip(mine, theirs):
        assert list(a) == pytest.approx(list(b), abs=1e-5)


async def test_the_offline_session_gathers_its_embedding_tables_first_with_the_same_vectors(app):
    """fastembed builds the offline session from the model with its two embedding tables (words,
    positions) gathered before they are dequantised (memory_core/store/onnx_graph.py); its
    vectors are bitwise those of a session of the packaged file itself, with the same options."""
    import onnxruntime

    engine = embedder.embedding_engine()
    session = engine.embedding_model.model.model
    inner = session._session
    assert embedder.gathered_tables == 2
    # the rewritten model's bytes are not kept (onnxruntime keeps a session's bytes under this name)
    assert getattr(inner, embedder.MODEL_BYTES) is None
    assert getattr(
        onnxruntime.InferenceSession(b"" + embedder.model_onnx().read_bytes()), embedder.MODEL_BYTES
    )
    plain = onnxruntime.InferenceSession(
        str(embedder.model_onnx()), sess_options=inner.get_session_options(), providers=inner.get_providers()
    )
    mine = await engine.embed_text(TEXTS)
    theirs = await _vectors_with(engine, plain)
    assert [list(v) for v in mine] == [list(v) for v in theirs]


def test_a_local_models_runs_are_bounded_and_cover_every_text_once():
    texts = ["short"] * 40 + [
        "a longer claim of about a hundred characters, as a stored conclusion has. " * 1
    ] * 40
    texts += ["x" * 3000]  # past the model's window: runs alone
    runs = embedder.local_runs(texts)
    assert sorted(i for run in runs for i in run) == list(range(len(texts)))
    for run in runs:
        tokens = max(min(embedder.MAX_TOKENS, len(texts[i]) // 4 + 2) for i in run)
        assert len(run) == 1 or len(run) * tokens**2 <= embedder.RUN_BUDGET
    assert runs[-1] == [len(texts) - 1]  # shortest first, the longest alone at the end
    assert embedder.local_runs([]) == []


async def test_texts_embedded_in_runs_keep_their_order_and_vectors(app):
    """store.embed sends the texts to the model shortest first in bounded runs: each text gets its
    own vector back, in the caller's order, as one run of the engine gives it."""
    engine = embedder.embedding_engine()
    texts = [f"Claim {i}: " + "the supplier warned about cracked housings. " * (i % 7) for i in range(70)]
    assert len(embedder.local_runs(texts)) > 1
    mine = await app.store.embed(texts)
    theirs = await engine.embed_text(texts)
    assert len(mine) == len(texts)
    for a, b in zip(mine, theirs):
        assert list(a) == pytest.approx(list(b), abs=1e-5)
