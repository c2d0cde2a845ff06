"""The int8 MiniLM with its embedding tables gathered before dequantising: the same numbers as
the model as shipped, bit for bit, from a smaller session."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from cartograph.index.minilm import (
    OnnxMiniLM,
    load_tokenizer,
    mean_pool_normalise,
    onnx_model_path,
)
from cartograph.index.onnx_lean import gather_before_dequantise, parse, serialise

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
    assert np.array_equal(OnnxMiniLM().embed(texts), want)


def test_a_model_that_is_not_protobuf_is_refused():
    with pytest.raises(ValueError):
        gather_before_dequantise(b"\x0f not a model")
