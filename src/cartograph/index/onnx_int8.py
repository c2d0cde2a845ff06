"""Weight-only int8 for an exported encoder: int8 weights in the file, float activations.

Each large 2-D weight (a MatMul's constant right-hand side, a Gather's embedding table) is stored
as int8 with one float scale per output channel (MatMul: per column, Gather: per row) and
dequantised in the graph as ``Mul(Cast(q), scale)``, the layout of the stock int8 MiniLM that
``cartograph.index.onnx_lean`` reads. onnxruntime folds those constants at load, so the model
computes in float32 and a text's vector does not depend on which texts share its batch (dynamic
activation quantisation, ``quantize_dynamic``, gave batch-dependent vectors: cosine 0.993 between
a document embedded in the index build and the same document embedded alone).

Used by ``scripts/train_encoder.py export`` and ``cartograph index tune`` (needs the ``onnx``
package of the ``train`` extra).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

MIN_SIZE = 4096  # smaller tensors (token-type embeddings, biases) stay float


def _targets(graph) -> dict[str, int]:
    """Initializer name -> the axis its scales run along (0: per column, 1: per row)."""
    inits = {i.name: i for i in graph.initializer}
    out: dict[str, int] = {}
    for node in graph.node:
        if node.op_type == "MatMul" and node.input[1] in inits:
            out[node.input[1]] = 0
        elif node.op_type == "Gather" and node.input[0] in inits:
            out[node.input[0]] = 1
    return {
        n: a
        for n, a in out.items()
        if len(inits[n].dims) == 2 and math.prod(inits[n].dims) >= MIN_SIZE
    }


def quantize(weight: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 with one scale per slice along ``axis`` (keepdims)."""
    scale = np.abs(weight).max(axis=axis, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(weight / scale), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def weight_only_int8(source: Path, dest: Path) -> int:
    """Rewrite ``source`` into ``dest``; returns how many weights were quantised."""
    import onnx  # pyright: ignore[reportMissingImports]
    from onnx import TensorProto, helper, numpy_helper  # pyright: ignore[reportMissingImports]

    model = onnx.load(str(source))
    graph = model.graph
    targets = _targets(graph)
    kept, nodes = [], []
    for init in graph.initializer:
        axis = targets.get(init.name)
        if axis is None:
            kept.append(init)
            continue
        q, scale = quantize(numpy_helper.to_array(init).astype(np.float32), axis)
        name = init.name
        kept += [
            numpy_helper.from_array(q, f"{name}_q"),
            numpy_helper.from_array(scale, f"{name}_scale"),
        ]
        nodes += [
            helper.make_node(
                "Cast", [f"{name}_q"], [f"{name}_f"], f"{name}_cast", to=TensorProto.FLOAT
            ),
            helper.make_node("Mul", [f"{name}_f", f"{name}_scale"], [name], f"{name}_mul"),
        ]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    rest = list(graph.node)
    del graph.node[:]
    graph.node.extend([*nodes, *rest])
    onnx.checker.check_model(model)
    onnx.save(model, str(dest))
    return len(targets)
