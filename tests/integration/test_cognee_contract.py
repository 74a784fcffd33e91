"""Loud failures when cognee 1.6.5 / fastembed internals we lean on change.

FALSIFY relies on: fastembed's local cache layout (fast-<model>/ with model.onnx
and tokenizer files), cognee's FastembedEmbeddingEngine resolving its tokenizer
through a Hugging Face hub-style cache, cognee's identity-id normalisation, the
Ladybug adapter's truth-state/feedback API, get_neighborhood returning every
edge among the nodes it returns, and the add_data_points trap we work around.
"""

from __future__ import annotations


from pathlib import Path

import pytest

from conftest import BACKEND
from memory_core.store import embedder

# the tests of cognee's Ladybug and LanceDB adapters; their PostgreSQL counterparts are in
# tests/integration/test_postgres_store.py (run in the postgres session of `make test`)
ladybug_only = pytest.mark.skipif(BACKEND != "ladybug", reason="Ladybug/LanceDB adapter contract")
from memory_core.core.keys import normalise_key


def test_packaged_model_is_the_pinned_file():
    onnx = embedder.model_onnx()
    assert onnx.stat().st_size == 22_928_619
    import hashlib

    assert hashlib.sha256(onnx.read_bytes()).hexdigest() == embedder.MODEL_SHA256


def test_fastembed_loads_from_our_layout_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder.prepare(tmp_path)
    from fastembed import TextEmbedding

    model = TextEmbedding(model_name=embedder.MODEL, cache_dir=str(tmp_path))
    vec = list(model.embed(["hello world"]))[0]
    assert len(vec) == embedder.DIMENSIONS


def test_cognee_tokenizer_resolves_from_hub_layout(app):
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

    engine = get_embedding_engine()
    tok = engine.tokenizer
    assert type(tok).__name__ == "HuggingFaceTokenizer", (
        "token counting fell back (tiktoken would need the network)"
    )
    assert tok.count_tokens("the QA report was back-dated") < 20


def test_identity_normalisation_matches_cognee():
    from cognee.infrastructure.engine import DataPoint

    for key in ("E_qa", "E QA", "Alice's note", "MiXeD"):
        assert normalise_key(key) == DataPoint._normalize_identity_value(key)


@ladybug_only
async def test_ladybug_truth_state_and_neighborhood_contract(app, prefix):
    from conftest import seed_with_prefix
    from memory_core.store.models import node_id

    await app.load(seed_with_prefix(prefix))
    ge = app.store.graph
    e = node_id("evidence", prefix + "E_qa")
    stored = (await ge.get_node_truth_state([e]))[e]
    assert (await ge.set_node_truth_state({e: {"truth_alignment": ["refuted"], "truth_epoch": 9}}))[e] is True
    assert (await ge.get_node_truth_state([e]))[e] == {"truth_alignment": ["refuted"], "truth_epoch": 9}
    # put back what FALSIFY stored: the session's root is shared, and a node whose epoch runs ahead
    # of the revision log is "history lost" to every later check on it
    assert (await ge.set_node_truth_state({e: stored}))[e] is True
    nodes, edges = await ge.get_neighborhood([node_id("question", prefix + "Q")], depth=1)
    rels = {r for _, _, r, _ in edges}
    assert len(nodes) == 7 and {"depends_on", "supports", "part_of"} <= rels


async def test_add_data_points_still_wipes_state(app, prefix):
    """The trap the loader guards against. If cognee fixes it, this fails: then the
    guard in loader.py / writer.py can be simplified."""
    from memory_core.store.models import Evidence, node_id

    point = Evidence(key=prefix + "E", claim=f"{prefix} trap probe", question_key=prefix + "Q")
    await app.store.add_points([point])
    i = node_id("evidence", prefix + "E")
    await app.store.set_states({i: ("refuted", 4)})
    await app.store.add_points(
        [Evidence(key=prefix + "E", claim=f"{prefix} trap probe", question_key=prefix + "Q")]
    )
    assert (await app.store.truth_states([i]))[i]["truth_alignment"] == ["alive"]  # "refuted" was wiped


@ladybug_only
async def test_update_nodes_writes_where_cognee_reads(app, prefix):
    """store.update_nodes writes state, epoch, weight and confidence into the node's
    JSON blob in one query (cognee has one call + checkpoint per property kind). If
    cognee moves these properties, its own readers stop seeing our writes here."""
    from conftest import seed_with_prefix
    from memory_core.store.models import node_id

    await app.load(seed_with_prefix(prefix))
    ge = app.store.graph
    k = node_id("conclusion", prefix + "K")
    before = (await ge.get_nodes([k]))[0]
    await app.store.update_nodes(
        {
            k: {
                "truth_alignment": ["invalidated"],
                "truth_epoch": 11,
                "feedback_weight": 0.125,
                "confidence": 0.3,
            }
        }
    )
    await app.store.checkpoint()
    assert (await ge.get_node_truth_state([k]))[k] == {"truth_alignment": ["invalidated"], "truth_epoch": 11}
    after = (await ge.get_nodes([k]))[0]
    assert after["feedback_weight"] == 0.125 and after["confidence"] == 0.3
    untouched = {
        f
        for f in before
        if f not in ("truth_alignment", "truth_epoch", "feedback_weight", "confidence", "updated_at")
    }
    assert {f: after.get(f) for f in untouched} == {f: before[f] for f in untouched}
    # and cognee's own writer still agrees on the layout: its write is what we read back
    assert (await ge.set_node_feedback_weights({k: 0.75}))[k] is True
    assert (await app.store.raw_nodes([k]))[k]["feedback_weight"] == 0.75
    # put back what FALSIFY stored (the root is shared with later tests and their checks)
    await app.store.update_nodes(
        {k: {f: before[f] for f in ("truth_alignment", "truth_epoch", "feedback_weight", "confidence")}}
    )
    await app.store.checkpoint()


@ladybug_only
async def test_raw_edges_are_the_rows_cognee_writes(app, prefix):
    """store.add_raw_edges writes edges with cognee's own MERGE but without its CHECKPOINT (the
    writer checkpoints once, after its last raw write). The edge it writes is the row cognee's
    add_edges writes for the same input, every column but the times; writing it again changes
    no row count; cognee's own reader (get_edges) sees it."""
    from conftest import seed_with_prefix
    from memory_core.store.models import node_id

    await app.load(seed_with_prefix(prefix))
    ge = app.store.graph
    e, k, h = (
        node_id(kind, prefix + key)
        for kind, key in (("evidence", "E_qa"), ("conclusion", "K"), ("hypothesis", "A"))
    )
    props = {"note": "contract probe", "weight": 0.5}

    async def row(src, dst, rel):
        rows = await ge.query(
            "MATCH (a:Node)-[r:EDGE]->(b:Node) WHERE a.id = $s AND b.id = $d AND r.relationship_name = $r "
            "RETURN r",
            {"s": src, "d": dst, "r": rel},
        )
        assert len(rows) == 1, rows
        return {
            c: v
            for c, v in rows[0][0].items()
            if c not in ("created_at", "updated_at", "_ID", "_SRC", "_DST")  # the times, the row and its ends
        }

    await app.store.add_raw_edges([(e, k, "contract_probe_ours", props)])
    await app.store.add_raw_edges([(e, k, "contract_probe_ours", props)])  # MERGE: still one row
    await app.store.checkpoint()
    await ge.add_edges([(e, h, "contract_probe_cognee", props)])
    ours, theirs = await row(e, k, "contract_probe_ours"), await row(e, h, "contract_probe_cognee")
    assert ours.pop("relationship_name") == "contract_probe_ours"
    assert theirs.pop("relationship_name") == "contract_probe_cognee"
    assert ours == theirs, (ours, theirs)
    assert any(r == "contract_probe_ours" for _, r, _ in await ge.get_edges(e))
    # leave the shared root as it was
    await app.store.delete_edges([(e, k, "contract_probe_ours"), (e, h, "contract_probe_cognee")])
    await app.store.checkpoint()


async def test_edge_lookups_match_cognee(app, prefix):
    """The store's own read queries (planned as key seeks) return exactly what cognee's
    adapter reports: a node's edges (get_edges) and nodes by id (get_nodes)."""
    from conftest import seed_with_prefix
    from memory_core.store.models import node_id

    await app.load(seed_with_prefix(prefix))
    e = node_id("evidence", prefix + "E_qa")
    ours = {(d if s == e else s, r) for s, d, r, _ in await app.store.all_edges_of([e])}
    # Ladybug's get_edges puts e first; the postgres adapter returns (source, rel, target): take the other end
    theirs = {
        (str(m["id"]) if str(n["id"]) == e else str(n["id"]), r)
        for n, r, m in await app.store.graph.get_edges(e)
    }
    assert ours == theirs and len(ours) >= 3
    ids = sorted({e} | {other for other, _ in ours})
    assert await app.store.raw_nodes(ids) == {n["id"]: n for n in await app.store.graph.get_nodes(ids)}


async def test_neighborhood_reads_what_cognees_get_neighborhood_returns(app, prefix):
    """An investigation is read with cognee's own queries (memory_core.store.backends.neighborhood,
    the one module that leans on them), its rows decoded in a worker thread when they are many;
    cognee's ``get_neighborhood`` decodes them on the caller's event loop. The two return the same
    nodes and edges, both when the rows are decoded at once and when they go to a thread."""
    from conftest import seed_with_prefix
    from memory_core.store import off_loop
    from memory_core.store.models import node_id

    await app.load(seed_with_prefix(prefix))
    qid = node_id("question", prefix + "Q")
    by_id = lambda nodes: sorted(nodes, key=lambda n: n[0])  # noqa: E731
    by_ends = lambda edges: sorted(edges, key=lambda e: e[:3])  # noqa: E731
    theirs_nodes, theirs_edges = await app.store.graph.get_neighborhood([qid], depth=1)
    assert len(theirs_nodes) == 7 and theirs_edges
    rows = off_loop.ROWS
    try:
        for threshold in (rows, 0):  # decoded at once (7 nodes), then in a worker thread
            off_loop.ROWS = threshold
            nodes, edges = await app.store.backend.neighborhood([qid])
            assert by_id(nodes) == by_id(theirs_nodes)
            assert by_ends(edges) == by_ends(theirs_edges)
            mine, mine_edges = await app.store.investigation(prefix + "Q")
            assert sorted(mine, key=lambda n: n["id"]) == [dict(p, id=i) for i, p in by_id(theirs_nodes)]
            assert by_ends(mine_edges) == by_ends(theirs_edges)
    finally:
        off_loop.ROWS = rows
    assert await app.store.backend.neighborhood([node_id("question", prefix + "nothing")]) == ([], [])


@ladybug_only
async def test_vector_compaction_keeps_rows_and_answers(app, prefix):
    """LanceDB's optimize through cognee's connection: fewer fragments, same rows, same search."""
    from conftest import seed_with_prefix
    from memory_core.store.models import collection

    await app.load(seed_with_prefix(prefix))
    name = collection("evidence")
    conn = await app.store.vector.get_connection()
    rows = await app.store.vector_ids(name)
    hits = [(str(h.id), round(h.score, 5)) for h in await app.store.search(name, "the report was written", 5)]
    before = (await (await conn.open_table(name)).stats())["fragment_stats"]["num_fragments"]
    compacted = await app.store.compact_vectors(fragments=1)
    assert name in compacted
    after = (await (await conn.open_table(name)).stats())["fragment_stats"]["num_fragments"]
    # LanceDB compacts rows its full-text index covers apart from rows added since (gate 1's
    # lexical index): one fragment without the index, at most one per side with it
    indexed = bool(await (await conn.open_table(name)).list_indices())
    assert after == 1 or (indexed and after == 2 < before), (before, after, indexed)
    assert await app.store.vector_ids(name) == rows
    again = [
        (str(h.id), round(h.score, 5)) for h in await app.store.search(name, "the report was written", 5)
    ]
    # the same answers; rows of equal score (the same claim stored by other tests) come back in any
    # order, and of those tied at the cut, any may be the ones kept
    assert [score for _, score in again] == [score for _, score in hits]
    cut = hits[-1][1]
    assert sorted(h for h in again if h[1] < cut) == sorted(h for h in hits if h[1] < cut)


@ladybug_only
def test_ladybug_gets_our_max_db_size(app):
    """ladybug 0.19 spends 8 MiB of max_db_size per CHECKPOINT (LadybugDB/ladybug#924):
    settings.configure raises it to 1 TiB, and the adapter must actually receive it."""
    import os

    assert os.environ["KUZU_MAX_DB_SIZE"] == str(1 << 40)
    assert app.store.graph.kuzu_max_db_size == 1 << 40


@ladybug_only
def test_ladybug_gets_our_buffer_pool_size(app):
    """cognee's 32 GiB buffer pool costs ~80 MB resident at open whatever the graph's size:
    settings.configure sets 4 GiB, and the adapter must actually receive it."""
    import os

    assert os.environ["KUZU_BUFFER_POOL_SIZE"] == str(1 << 32)
    assert app.store.graph.kuzu_buffer_pool_size == 1 << 32


def test_node_ids_and_collections_match_cognees_own():
    """memory_core.core.identity computes ids and collection names without cognee; they must
    equal what cognee's DataPoint.id_for and vector_collection give (a change in cognee's
    identity hashing or naming fails here)."""
    from memory_core.core.identity import collection, node_id
    from memory_core.store.models import MODEL_BY_KIND

    for kind, model in MODEL_BY_KIND.items():
        for key in ("E_qa", "Some Key's Name", "ÄÖ key 42"):
            assert node_id(kind, key) == str(model.id_for(key)), (kind, key)
            assert node_id(kind, key) == str(model(**_minimal(kind, key)).id), (kind, key)
        assert collection(kind) == model.vector_collection(), kind


def _minimal(kind: str, key: str) -> dict:
    text = {
        "question": "question",
        "hypothesis": "statement",
        "evidence": "claim",
        "conclusion": "statement",
    }[kind]
    fields = {"key": key, text: "t"}
    if kind != "question":
        fields["question_key"] = "Q"
    return fields


async def test_vector_adapter_embeds_through_its_embedding_engine(app):
    """store.embedder.reuse_vectors stands in for the adapter's ``embedding_engine``
    (a batch's facts are embedded for detection, then written without embedding them
    again): cognee's LanceDB and pgvector adapters must embed through that attribute."""
    adapter = embedder._real_adapter(app.store.vector)
    real = adapter.embedding_engine
    marker = [0.25] * embedder.DIMENSIONS
    with embedder.reuse_vectors(adapter, {"falsify contract probe text": marker}) as stand_in:
        got = await adapter.embed_data(["falsify contract probe text", "a text nobody embedded before"])
    assert [float(x) for x in got[0]] == marker
    assert len(got[1]) == embedder.DIMENSIONS and stand_in.reused == 1
    assert adapter.embedding_engine is real
    memo: dict = {}
    with embedder.reuse_vectors(app.store.vector, memo, learn=True) as stand_in:  # each distinct text once
        first = await adapter.embed_data(["a text embedded once", "a text embedded once"])
        again = await adapter.embed_data(["a text embedded once"])
    assert (stand_in.embedded, stand_in.reused) == (1, 2) and list(first[0]) == list(again[0]) == list(
        memo["a text embedded once"]
    )
    assert adapter.embedding_engine is real


async def test_run_history_prune_keeps_the_newest_own_runs(app):
    """cognee's ``pipeline_runs`` table as ``store.run_history`` deletes from it: two rows per
    run under its ``pipeline_name`` and ``pipeline_run_id``; pruning to ``keep`` leaves the
    newest runs of that pipeline and never touches another pipeline's runs."""
    from sqlalchemy import func, select

    from cognee.infrastructure.databases.relational import get_relational_engine
    from cognee.modules.pipelines.models import PipelineRun
    from memory_core.store.pipeline import noop_tasks, run_pipeline
    from memory_core.store.run_history import prune_run_history, run_counts

    names = ("falsify_warm_up", "host_pipeline_contract")
    for i in range(3):
        await run_pipeline(noop_tasks(), [{"i": i}], "falsify_warm_up")
    await run_pipeline(noop_tasks(), [{}], "host_pipeline_contract")
    before = await run_counts(names)
    assert before["falsify_warm_up"] >= 3 and before["host_pipeline_contract"] >= 1

    async def newest_runs(name, n):
        async with get_relational_engine().get_async_session() as session:
            rows = await session.execute(
                select(PipelineRun.pipeline_run_id)
                .where(PipelineRun.pipeline_name == name)
                .group_by(PipelineRun.pipeline_run_id)
                .order_by(func.max(PipelineRun.created_at).desc())
                .limit(n)
            )
            return [r[0] for r in rows]

    newest = await newest_runs("falsify_warm_up", 2)
    removed = await prune_run_history(2, ("falsify_warm_up",))
    assert removed == 2 * (before["falsify_warm_up"] - 2)  # a STARTED and a COMPLETED row per run
    assert await run_counts(names) == {
        "falsify_warm_up": 2,
        "host_pipeline_contract": before["host_pipeline_contract"],
    }
    assert await newest_runs("falsify_warm_up", 5) == newest
    assert await prune_run_history(0, ("falsify_warm_up",)) == 0  # 0 keeps everything


async def test_a_revision_builds_no_record_cognees_handlers_would_drop(app, prefix, monkeypatch):
    """cognee's handlers drop what is below ``LOG_LEVEL``, but only after the record is built (and
    its secrets masked: 0.1-0.2 ms each, two per pipeline task); FALSIFY sets the level on cognee's
    loggers (``data_root.LEVELLED_LOGGERS``, its pipeline runner's among them, which log outside
    ``cognee.``) so that none is built. Fails, naming it, when cognee logs on a revision's path under
    a name of its own that is not levelled."""
    import logging
    import os

    from conftest import seed_with_prefix

    level = logging.getLevelName(os.environ.get("LOG_LEVEL", "ERROR").upper())
    built = []
    make = logging.Logger.makeRecord

    def counted(self, name, lvl, fn, *args, **kwargs):
        if lvl < level and f"{os.sep}cognee{os.sep}" in fn:
            built.append((name, logging.getLevelName(lvl), Path(fn).name))
        return make(self, name, lvl, fn, *args, **kwargs)

    await app.load(seed_with_prefix(prefix))
    monkeypatch.setattr(logging.Logger, "makeRecord", counted)
    await app.revise(
        f"Forensic audit: the March QA report was back-dated ({prefix}).", target=prefix + "E_qa"
    )
    await app.revise_many(
        [{"fact": f"The brake-valve recall was extended ({prefix}).", "key": prefix + "F2"}]
    )
    await app.recall("brake-valve defect")
    await app.undo()
    await app.undo()
    assert built == [], sorted(set(built))


async def _fails(items, ctx=None):
    raise RuntimeError("a task failed on purpose")


async def test_an_error_in_falsifys_own_run_is_left_to_falsify_a_hosts_is_logged(app):
    """cognee's pipeline runner logs a failing task and data item at ERROR with its traceback (about
    100 lines on standard error per record); in FALSIFY's own runs the error is raised to the caller,
    which reports it, so those records are dropped; a host's own run is logged as cognee logs it."""
    import logging

    import cognee

    from memory_core.store.pipeline import RUNNER_LOGGERS, run_pipeline, task

    app.stores  # the root is open: cognee imported and set up
    seen = []

    class Seen(logging.Handler):
        def emit(self, record):
            seen.append(record.name)

    catch = Seen(logging.ERROR)
    for name in RUNNER_LOGGERS:
        logging.getLogger(name).addHandler(catch)
    try:
        with pytest.raises(Exception, match="failed on purpose"):
            await run_pipeline([task(_fails)], [{}], "falsify_failing_task")
        assert seen == []
        with pytest.raises(Exception):
            await cognee.run_custom_pipeline(
                tasks=[task(_fails)], data=[{}], dataset="host_contract", pipeline_name="host_failing_task"
            )
        assert seen, "cognee logs a failing task of a host's run no more: the filter is not needed"
    finally:
        for name in RUNNER_LOGGERS:
            logging.getLogger(name).removeHandler(catch)
