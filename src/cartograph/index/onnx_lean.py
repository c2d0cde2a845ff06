"""Rewrites of an int8 MiniLM's graph at load, on the ONNX bytes, for a smaller, faster session.

The int8 models store each weight as int8 plus a float scale and dequantise it in the graph
(``Mul(Cast(q), scale)``). onnxruntime folds those constants at load, so every weight is held as
float32, and while the session is made the int8 copies are held too (about 53 MB more than it
keeps: serve's peak RSS).

- :func:`gather_before_dequantise` rewrites every ``Gather(Mul(Cast(q), scale), ids)`` into
  ``Mul(Cast(Gather(q, ids)), Gather(scale, ids))``: the same products of the same numbers, so the
  same output bit for bit, with the 30,522 x 384 word table kept as int8 (12 MB, not 47).
- :func:`multiply_int8_weights` rewrites every ``MatMul(x, Mul(Cast(q), scale))`` into
  onnxruntime's ``com.microsoft.DynamicQuantizeMatMul(x, q, scale)``: the weights stay int8 and
  x is quantised to 8 bits on each run, so the numbers move a little (the reranker's choice,
  recorded as ``"matmul": "int8"`` in its manifest; the embedders keep exact products).

The model is edited on the protobuf wire format (ONNX ``ModelProto``: graph = field 7,
opset_import = 8; ``GraphProto``: node = 1, initializer = 5; ``NodeProto``: input = 1, output =
2, name = 3, op_type = 4, attribute = 5, domain = 7; ``TensorProto``: dims = 1, name = 8), so no
``onnx`` package is needed. A model without the pattern comes back unchanged; one that cannot be
parsed raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def _node_field(
    op_type: str,
    inputs: list[str],
    outputs: list[str],
    name: str,
    attrs: tuple[bytes, ...] = (),
    domain: str = "",
) -> Field:
    """A graph's node field (number 1) holding this NodeProto."""
    fields: list[Field] = [(1, 2, s.encode()) for s in inputs]
    fields += [(2, 2, s.encode()) for s in outputs]
    fields += [(3, 2, name.encode()), (4, 2, op_type.encode())]
    fields += [(5, 2, a) for a in attrs]
    fields += [(7, 2, domain.encode())] if domain else []
    return (1, 2, serialise(fields))


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


@dataclass
class _Graph:
    """One model's graph, parsed once for a rewrite."""

    top: list[Field]
    at: int  # where the graph is among the model's fields
    fields: list[Field]
    nodes: dict[int, _Node]  # by position among the graph's fields
    shapes: dict[str, tuple[int, ...]]  # initializers
    tensors: dict[str, int]  # initializers' positions among the graph's fields
    producer: dict[str, int]
    uses: dict[str, int]


def _open(model: bytes) -> _Graph:
    top = parse(model)
    at = next((i for i, (n, w, _) in enumerate(top) if n == 7 and w == 2), None)
    payload = top[at][2] if at is not None else None
    if at is None or not isinstance(payload, memoryview):
        raise ValueError("no graph in the model")
    graph = parse(payload)
    nodes = {
        i: _node(v) for i, (n, w, v) in enumerate(graph) if n == 1 and isinstance(v, memoryview)
    }
    uses: dict[str, int] = {}
    for node in nodes.values():
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1
    tensors = {
        i: _shape(v) for i, (n, w, v) in enumerate(graph) if n == 5 and isinstance(v, memoryview)
    }
    return _Graph(
        top,
        at,
        graph,
        nodes,
        dict(tensors.values()),
        {name: i for i, (name, _) in tensors.items()},
        {out: i for i, node in nodes.items() for out in node.outputs},
        uses,
    )


def _rebuilt(g: _Graph, replace: dict[int, list[Field]], extra: Sequence[Field] = ()) -> bytes:
    """The model with graph field i replaced by the fields ``replace[i]`` and model-level
    ``extra`` fields appended."""
    new_graph: list[Field] = []
    for i, field in enumerate(g.fields):
        new_graph += replace.get(i, [field])
    top = list(g.top)
    top[g.at] = (7, 2, serialise(new_graph))
    return serialise(top + list(extra))


def gather_before_dequantise(model: bytes) -> tuple[bytes, list[str]]:
    """``model`` with each dequantised-then-gathered table gathered first; and their names."""
    g = _open(model)
    replace: dict[int, list[Field]] = {}
    done: list[str] = []
    for i, node in g.nodes.items():
        found = _match(node, g)
        if found is None:
            continue
        mul_at, cast_at, q, scale = found
        table, ids = node.inputs
        rows, scales = f"{q}__rows", f"{scale}__rows"
        cast_attrs = g.nodes[cast_at].attributes
        replace[mul_at] = replace[cast_at] = []
        replace[i] = [
            _node_field("Gather", [q, ids], [rows], f"{table}__gather_q"),
            _node_field("Gather", [scale, ids], [scales], f"{table}__gather_scale"),
            _node_field("Cast", [rows], [f"{rows}_f"], f"{table}__cast", cast_attrs),
            _node_field("Mul", [f"{rows}_f", scales], list(node.outputs), f"{table}__dequantise"),
        ]
        done.append(table)
    return (_rebuilt(g, replace), done) if done else (model, [])


MICROSOFT = "com.microsoft"


def multiply_int8_weights(model: bytes) -> tuple[bytes, list[str]]:
    """``model`` with each ``MatMul(x, Mul(Cast(q), scale))`` over int8 weights q (K, N) and one
    scale a column made ``com.microsoft.DynamicQuantizeMatMul(x, q, scale)``; and the weights'
    names. Not the same numbers: x is quantised to 8 bits on each run (docs/models.md)."""
    g = _open(model)
    replace: dict[int, list[Field]] = {}
    done: list[str] = []
    for i, node in g.nodes.items():
        if node.op_type != "MatMul" or len(node.inputs) != 2:
            continue
        found = _dequantised(g, node.inputs[1])
        if found is None:
            continue
        mul_at, cast_at, q, scale = found
        q_shape, s_shape = g.shapes[q], g.shapes[scale]
        if len(q_shape) != 2 or s_shape not in ((q_shape[1],), (1, q_shape[1])):
            continue
        replace[mul_at] = replace[cast_at] = []
        replace[i] = [
            _node_field(
                "DynamicQuantizeMatMul",
                [node.inputs[0], q, scale],
                list(node.outputs),
                f"{node.inputs[1]}__int8_matmul",
                domain=MICROSOFT,
            )
        ]
        at = g.tensors[scale]
        replace[at] = [(5, 2, _with_dims(g.fields[at][2], (q_shape[1],)))]
        done.append(node.inputs[1])
    if not done:
        return model, []
    return _rebuilt(g, replace, _opset_import(g.top, MICROSOFT)), done


def _with_dims(raw: bytes | memoryview | int, dims: tuple[int, ...]) -> bytes:
    """A TensorProto's bytes with ``dims`` for its shape (the data unchanged)."""
    if isinstance(raw, int):
        raise ValueError("an initializer is not a message")
    return serialise([(1, 0, d) for d in dims] + [f for f in parse(raw) if f[0] != 1])


def _opset_import(top: list[Field], domain: str) -> list[Field]:
    """The ``opset_import`` field (number 8) that adds ``domain`` version 1 to a model that
    lacks it, else none."""
    have = {_strings(parse(v), 1) for v in _messages(top, 8)}
    return [] if (domain,) in have else [(8, 2, serialise([(1, 2, domain.encode()), (2, 0, 1)]))]


def _dequantised(g: _Graph, name: str) -> tuple[int, int, str, str] | None:
    """(Mul's position, Cast's position, q, scale) when ``name`` is the output of
    ``Mul(Cast(q), scale)`` over initializers q and scale, read by one node, as is each step."""
    mul_at = g.producer.get(name)
    if mul_at is None or g.uses.get(name) != 1:
        return None
    mul = g.nodes[mul_at]
    if mul.op_type != "Mul" or len(mul.inputs) != 2:
        return None
    for cast_out, scale in (mul.inputs, mul.inputs[::-1]):
        cast_at = g.producer.get(cast_out)
        if cast_at is None or g.uses.get(cast_out) != 1 or g.nodes[cast_at].op_type != "Cast":
            continue
        q = g.nodes[cast_at].inputs[0] if g.nodes[cast_at].inputs else ""
        if q in g.shapes and scale in g.shapes and g.uses.get(q) == g.uses.get(scale) == 1:
            return mul_at, cast_at, q, scale
    return None


def _match(gather: _Node, g: _Graph) -> tuple[int, int, str, str] | None:
    """:func:`_dequantised`'s answer for the table ``gather`` reads, when it is a table q
    (N, D) with one scale a row (N, 1)."""
    if gather.op_type != "Gather" or len(gather.inputs) != 2 or not _axis_is_zero(gather):
        return None
    found = _dequantised(g, gather.inputs[0])
    if found is None:
        return None
    q_shape, s_shape = g.shapes[found[2]], g.shapes[found[3]]
    return found if len(q_shape) == 2 and s_shape == (q_shape[0], 1) else None
