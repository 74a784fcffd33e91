"""memory_core/store/onnx_graph.py on the packaged offline model: each quantised embedding table
``Cast -> Mul(scale) -> Gather`` becomes ``Gather -> Cast -> Mul(gathered scale)``, once, with
every other byte of the model kept; a model without the pattern comes back unchanged. The
vectors are checked in tests/integration/test_embedder_memory.py."""

from __future__ import annotations

from memory_core.store import embedder
from memory_core.store.onnx_graph import _fields, _node, gather_first


def _nodes(model: bytes) -> list:
    graph = next(value for number, _w, value, _ in _fields(memoryview(model)) if number == 7)
    return [_node(value) for number, _w, value, _ in _fields(graph) if number == 1]


def test_the_packaged_models_two_tables_are_gathered_first():
    model = embedder.model_onnx().read_bytes()
    rewritten, tables = gather_first(model)
    assert tables == 2
    before, after = _nodes(model), _nodes(rewritten)
    assert len(after) == len(before) - 3 * tables + 4 * tables
    table = "inner.embeddings.word_embeddings.weight"
    assert [n.op for n in before if table in n.inputs or f"{table}_q" in n.inputs] == ["Cast", "Gather"]
    gathered = [(n.op, n.inputs) for n in after if f"{table}_q" in n.inputs or f"{table}_scale" in n.inputs]
    assert gathered == [
        ("Gather", [f"{table}_q", "input_ids"]),
        ("Gather", [f"{table}_scale", "input_ids"]),
    ]
    assert not any(table in n.inputs for n in after)  # the dequantised table is never made
    # what is not a node is kept byte for byte (the initializers: 22.9 MB)
    assert len(model) - len(rewritten) < 1000
    assert gather_first(rewritten) == (rewritten, 0)  # nothing left to do


def test_a_model_without_the_pattern_comes_back_unchanged():
    tiny = b"\x08\x0a"  # a ModelProto with only ir_version 10: no graph
    assert gather_first(tiny) == (tiny, 0)
