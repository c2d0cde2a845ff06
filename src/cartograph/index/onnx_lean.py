"""Look up quantised embedding rows before dequantising them, in an ONNX model's bytes.

The stock int8 MiniLM stores each weight as int8 plus a float scale and dequantises it in the
graph (``Mul(Cast(q), scale)``). onnxruntime folds those constants at load, so the word
embedding table is held as 30,522 x 384 float32 (47 MB) although a query reads a few rows of it.
:func:`gather_before_dequantise` rewrites every ``Gather(Mul(Cast(q), scale), ids)`` into
``Mul(Cast(Gather(q, ids)), Gather(scale, ids))``: the same products of the same numbers, so the
same output bit for bit, with the table kept as int8 (12 MB).

The model is edited on the protobuf wire format (ONNX ``ModelProto``: graph = field 7;
``GraphProto``: node = 1, initializer = 5; ``NodeProto``: input = 1, output = 2, name = 3,
op_type = 4, attribute = 5; ``TensorProto``: dims = 1, name = 8), so no ``onnx`` package is
needed. A model without the pattern comes back unchanged; one that cannot be parsed raises
``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass

Field = tuple[int, int, "bytes | memoryview | int"]  # (field number, wire type, payload)


def _varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def parse(data: bytes | memoryview) -> list[Field]:
    """The top-level fields of one protobuf message, in order (payloads are views of ``data``)."""
    data = memoryview(data)
    fields: list[Field] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            fields.append((number, wire, value))
            continue
        size = {1: 8, 5: 4}.get(wire)
        if size is None:
            if wire != 2:
                raise ValueError(f"unsupported wire type {wire}")
            size, pos = _varint(data, pos)
        if pos + size > len(data):
            raise ValueError("truncated field")
        fields.append((number, wire, data[pos : pos + size]))
        pos += size
    return fields


def serialise(fields: list[Field]) -> bytes:
    parts: list[bytes | memoryview] = []
    for number, wire, value in fields:
        parts.append(_put_varint(number << 3 | wire))
        if isinstance(value, int):
            parts.append(_put_varint(value))
            continue
        if wire == 2:
            parts.append(_put_varint(len(value)))
        parts.append(value)
    return b"".join(parts)


def _messages(fields: list[Field], number: int) -> list[memoryview]:
    """The length-delimited payloads of field ``number``."""
    return [v for n, w, v in fields if n == number and w == 2 and isinstance(v, memoryview)]


def _strings(fields: list[Field], number: int) -> tuple[str, ...]:
    return tuple(bytes(v).decode() for v in _messages(fields, number))


@dataclass(frozen=True)
class _Node:
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attributes: tuple[bytes, ...]


def _node(raw: memoryview) -> _Node:
    fields = parse(raw)
    op = _strings(fields, 4)
    attrs = tuple(bytes(v) for v in _messages(fields, 5))
    return _Node(op[0] if op else "", _strings(fields, 1), _strings(fields, 2), attrs)


def _node_bytes(
    op_type: str, inputs: list[str], outputs: list[str], name: str, attrs: tuple[bytes, ...] = ()
) -> bytes:
    fields: list[Field] = [(1, 2, s.encode()) for s in inputs]
    fields += [(2, 2, s.encode()) for s in outputs]
    fields += [(3, 2, name.encode()), (4, 2, op_type.encode())]
    fields += [(5, 2, a) for a in attrs]
    return serialise(fields)


def _axis_is_zero(node: _Node) -> bool:
    for raw in node.attributes:
        attr = parse(raw)
        if _strings(attr, 1) == ("axis",):
            return next((v for n, w, v in attr if n == 3 and w == 0), 0) == 0
    return True


def _shape(raw: memoryview) -> tuple[str, tuple[int, ...]]:
    """A TensorProto's name and dims (without touching its data)."""
    fields = parse(raw)
    name = _strings(fields, 8)
    dims: list[int] = [v for n, w, v in fields if n == 1 and w == 0 and isinstance(v, int)]
    for packed in _messages(fields, 1):
        pos = 0
        while pos < len(packed):
            d, pos = _varint(packed, pos)
            dims.append(d)
    return (name[0] if name else ""), tuple(dims)


def gather_before_dequantise(model: bytes) -> tuple[bytes, list[str]]:
    """``model`` with each dequantised-then-gathered table gathered first; and their names."""
    top = parse(model)
    at = next((i for i, (n, w, _) in enumerate(top) if n == 7 and w == 2), None)
    payload = top[at][2] if at is not None else None
    if at is None or not isinstance(payload, memoryview):
        raise ValueError("no graph in the model")
    graph = parse(payload)
    nodes = {
        i: _node(v) for i, (n, w, v) in enumerate(graph) if n == 1 and isinstance(v, memoryview)
    }
    shapes = dict(_shape(v) for v in _messages(graph, 5))
    producer = {out: i for i, node in nodes.items() for out in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes.values():
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1
    replace: dict[int, list[bytes]] = {}
    done: list[str] = []
    for i, node in nodes.items():
        found = _match(node, nodes, producer, uses, shapes)
        if found is None:
            continue
        mul_at, cast_at, q, scale = found
        table, ids = node.inputs
        rows, scales = f"{q}__rows", f"{scale}__rows"
        replace[mul_at] = replace[cast_at] = []
        replace[i] = [
            _node_bytes("Gather", [q, ids], [rows], f"{table}__gather_q"),
            _node_bytes("Gather", [scale, ids], [scales], f"{table}__gather_scale"),
            _node_bytes("Cast", [rows], [f"{rows}_f"], f"{table}__cast", nodes[cast_at].attributes),
            _node_bytes("Mul", [f"{rows}_f", scales], list(node.outputs), f"{table}__dequantise"),
        ]
        done.append(table)
    if not done:
        return model, []
    new_graph: list[Field] = []
    for i, field in enumerate(graph):
        if i in replace:
            new_graph += [(1, 2, raw) for raw in replace[i]]
        else:
            new_graph.append(field)
    top[at] = (7, 2, serialise(new_graph))
    return serialise(top), done


def _match(
    gather: _Node,
    nodes: dict[int, _Node],
    producer: dict[str, int],
    uses: dict[str, int],
    shapes: dict[str, tuple[int, ...]],
) -> tuple[int, int, str, str] | None:
    """(Mul's position, Cast's position, q, scale) when ``gather`` reads ``Mul(Cast(q), scale)``
    of initializers q (N, D) and scale (N, 1) that nothing else reads."""
    if gather.op_type != "Gather" or len(gather.inputs) != 2 or not _axis_is_zero(gather):
        return None
    table = gather.inputs[0]
    mul_at = producer.get(table)
    if mul_at is None or uses.get(table) != 1:
        return None
    mul = nodes[mul_at]
    if mul.op_type != "Mul" or len(mul.inputs) != 2:
        return None
    for cast_out, scale in (mul.inputs, mul.inputs[::-1]):
        cast_at = producer.get(cast_out)
        if cast_at is None or uses.get(cast_out) != 1 or nodes[cast_at].op_type != "Cast":
            continue
        q = nodes[cast_at].inputs[0] if nodes[cast_at].inputs else ""
        q_shape, s_shape = shapes.get(q), shapes.get(scale)
        if q_shape is None or s_shape is None or uses.get(q) != 1 or uses.get(scale) != 1:
            continue
        if len(q_shape) == 2 and s_shape == (q_shape[0], 1):
            return mul_at, cast_at, q, scale
    return None
