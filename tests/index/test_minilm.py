"""Parity of the torch-free MiniLM backends with sentence-transformers' own vectors.

The reference vectors were made once by ``fixtures/make_minilm_reference.py`` with the real
sentence-transformers in a throwaway venv.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cartograph.index.minilm import MAX_TOKENS, NumpyMiniLM, load_tokenizer
from cartograph.index.onnx_minilm import OnnxMiniLM

FIXTURES = Path(__file__).parent / "fixtures"
EXACT_TOL = 1e-5  # max abs difference per component, exact float32 NumPy path
# int8 model, float weight products: measured on these texts max abs diff 0.0230, min cosine
# 0.99634; int8 weight products (the default, each text alone): 0.0467 and 0.97373
FLOAT_PRODUCTS_MAX_ABS, FLOAT_PRODUCTS_MIN_COS = 0.04, 0.995
INT8_PRODUCTS_MAX_ABS, INT8_PRODUCTS_MIN_COS = 0.07, 0.96


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    meta = json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))
    return meta["texts"], np.load(FIXTURES / "minilm_reference.npy")


@pytest.fixture(scope="module")
def exact() -> NumpyMiniLM:
    return NumpyMiniLM()


@pytest.fixture(scope="module")
def int8() -> OnnxMiniLM:
    return OnnxMiniLM()


def test_numpy_forward_matches_sentence_transformers(exact, reference):
    texts, ref = reference
    vecs = exact.embed(texts)
    assert vecs.dtype == np.float32 and vecs.shape == ref.shape
    assert float(np.abs(vecs - ref).max()) <= EXACT_TOL


@pytest.mark.parametrize(
    ("int8_products", "max_abs", "min_cos"),
    [
        (False, FLOAT_PRODUCTS_MAX_ABS, FLOAT_PRODUCTS_MIN_COS),
        (True, INT8_PRODUCTS_MAX_ABS, INT8_PRODUCTS_MIN_COS),
    ],
)
def test_int8_onnx_stays_within_its_measured_tolerance(reference, int8_products, max_abs, min_cos):
    texts, ref = reference
    vecs = OnnxMiniLM(int8_products=int8_products).embed(texts)
    assert float(np.abs(vecs - ref).max()) <= max_abs
    assert float(np.sum(vecs * ref, axis=1).min()) >= min_cos


def test_batch_and_single_embeddings_agree(exact, reference):
    texts, _ = reference
    batch = exact.embed(texts[:6])
    single = np.stack([exact.embed([t])[0] for t in texts[:6]])
    assert float(np.abs(batch - single).max()) <= EXACT_TOL


def test_rows_are_unit_length_and_empty_input_is_empty(int8):
    vecs = int8.embed(["a", "send an email", "b" * 500])
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert int8.embed([]).shape == (0, 384)


def test_tokenizer_truncates_at_256_and_pads_to_the_longest():
    tok = load_tokenizer()
    long, short = tok.encode_batch(["word " * 1000, "hi"])
    assert len(long.ids) == MAX_TOKENS
    assert len(short.ids) == MAX_TOKENS and sum(short.attention_mask) == 3
    (alone,) = tok.encode_batch(["hi"])
    assert len(alone.ids) == 3


def test_late_chunked_steps_come_from_one_pass_and_match_their_own_text(int8):
    task = "Find the latest papers about graph neural networks, then email the list to my team"
    steps = ["Find the latest papers about graph neural networks", "email the list to my team"]
    spans = [(task.index(s), task.index(s) + len(s)) for s in steps]
    vecs = int8.embed_spans(task, spans)
    assert vecs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    alone = int8.embed([task, *steps])
    assert float(vecs[0] @ alone[0]) > 0.9999  # the whole task: the same vector
    own = vecs[1:] @ alone[1:].T  # each pooled step is nearest its own text
    assert own[0, 0] > own[0, 1] and own[1, 1] > own[1, 0]
    assert own[0, 0] > 0.6 and own[1, 1] > 0.6  # measured 0.91 and 0.70
