"""The int8 MiniLM with its embedding tables gathered before dequantising: the same numbers as
the model as shipped, bit for bit, from a smaller session."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from cartograph.index.minilm import load_tokenizer, mean_pool_normalise
from cartograph.index.onnx_lean import (
    MICROSOFT,
    gather_before_dequantise,
    multiply_int8_weights,
    parse,
    serialise,
)
from cartograph.index.onnx_minilm import OnnxMiniLM, onnx_model_path
from cartograph.index.packaged import models_dir
from cartograph.index.rerank import RERANKER

TABLES = [
    "inner.embeddings.word_embeddings.weight",
    "inner.embeddings.position_embeddings.weight",
]


def _session(model: bytes | str) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def stock() -> bytes:
    return onnx_model_path().read_bytes()


def test_wire_format_round_trips_the_model_unchanged(stock):
    assert serialise(parse(stock)) == stock


def test_both_embedding_tables_are_gathered_first(stock):
    lean, tables = gather_before_dequantise(stock)
    assert tables == TABLES
    assert lean != stock
    again, none = gather_before_dequantise(lean)  # nothing left to rewrite
    assert none == [] and again == lean


def test_rewritten_model_computes_the_same_bits(stock):
    lean, _ = gather_before_dequantise(stock)
    rng = np.random.default_rng(7)
    a, b = _session(stock), _session(lean)
    for batch, tokens in ((1, 9), (3, 40), (2, 256)):
        ids = rng.integers(0, 30522, (batch, tokens), dtype=np.int64)
        mask = np.ones_like(ids)
        mask[-1, tokens // 2 :] = 0
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        assert np.array_equal(a.run(None, feeds)[0], b.run(None, feeds)[0])


def test_the_embedder_gives_the_stock_models_vectors(stock):
    texts = ["read a file from disk", "list open pull requests on a repository", "Wetter Berlin"]
    tok = load_tokenizer()
    encs = tok.encode_batch(texts)
    ids = np.asarray([e.ids for e in encs], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    want = mean_pool_normalise(_session(stock).run(None, feeds)[0], mask)
    assert np.array_equal(OnnxMiniLM(int8_products=False).embed(texts), want)


def test_a_model_that_is_not_protobuf_is_refused():
    with pytest.raises(ValueError):
        gather_before_dequantise(b"\x0f not a model")


def _op_types(model: bytes) -> list[str]:
    graph = next(v for n, w, v in parse(model) if n == 7)
    assert isinstance(graph, memoryview)
    return [
        bytes(next(v for n, _, v in parse(node) if n == 4)).decode()  # type: ignore[arg-type]
        for n, _, node in parse(graph)
        if n == 1 and isinstance(node, memoryview)
    ]


def test_every_weight_product_of_the_reranker_runs_on_int8():
    lean, _ = gather_before_dequantise((models_dir() / RERANKER / "model.onnx").read_bytes())
    fast, weights = multiply_int8_weights(lean)
    assert len(weights) == 36  # 6 layers: query, key, value, output, two feed-forward
    ops = _op_types(fast)
    assert ops.count("DynamicQuantizeMatMul") == 36
    assert ops.count("MatMul") == _op_types(lean).count("MatMul") - 36  # attention's stay float
    assert ops.count("Cast") == _op_types(lean).count("Cast") - 36
    domains = [bytes(v) for n, _, v in parse(fast) if n == 8]
    assert sum(MICROSOFT.encode() in d for d in domains) == 1
    again, none = multiply_int8_weights(fast)
    assert none == [] and again == fast
    ids = np.asarray([[101, 2265, 1996, 2197, 102, 21025, 2102, 8833, 102]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    feeds["token_type_ids"] = np.asarray([[0] * 5 + [1] * 4], dtype=np.int64)
    a, b = _session(lean).run(None, feeds)[0], _session(fast).run(None, feeds)[0]
    assert a.shape == b.shape == (1,) and abs(float(a[0] - b[0])) < 0.5


def test_int8_products_refuse_what_is_not_a_model_and_leave_float_models_alone(stock):
    with pytest.raises(ValueError):
        multiply_int8_weights(b"\x0f not a model")
    graph = serialise(
        [(1, 2, serialise([(1, 2, b"x"), (1, 2, b"w"), (2, 2, b"y"), (4, 2, b"MatMul")]))]
    )
    float_model = serialise([(1, 0, 8), (7, 2, graph)])  # MatMul over a float input, no Cast
    assert multiply_int8_weights(float_model) == (float_model, [])
    assert len(multiply_int8_weights(gather_before_dequantise(stock)[0])[1]) == 36
