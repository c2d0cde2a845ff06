"""The int8 MiniLM on int8 weight products, each text alone: a vector never depends on the
texts embedded beside it, stays near the float products' vector, and its model id says which
products made it; ``$CARTOGRAPH_INT8_PRODUCTS=0`` gives the float products in batches."""

from __future__ import annotations

import numpy as np
import pytest

from cartograph.errors import EmbedderError
from cartograph.index.embedders import embed_queries
from cartograph.index.minilm import MODEL_NAME
from cartograph.index.names import INT8_MARK, calibration_id
from cartograph.index.onnx_minilm import INT8_ENV, OnnxMiniLM

TEXTS = [
    "show the last commits of the git repository",
    "remember that Alice works at Acme as an engineer",
    "git_log: Show the commit logs. It needs repo_path (string). It only reads data. [git]",
    "get_current_time: Get the current time in a specific timezone. [time]",
]


@pytest.fixture(scope="module")
def int8() -> OnnxMiniLM:
    return OnnxMiniLM(threads=1)


@pytest.fixture(scope="module")
def floats() -> OnnxMiniLM:
    return OnnxMiniLM(threads=1, int8_products=False)


def test_a_vector_does_not_depend_on_the_texts_beside_it(int8):
    together = int8.embed(TEXTS)
    for i, text in enumerate(TEXTS):
        assert np.array_equal(int8.embed([text])[0], together[i])
        assert np.array_equal(embed_queries(int8, [text])[0], together[i])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_int8_products_are_near_the_float_ones_and_not_the_same(int8, floats):
    cosines = (int8.embed(TEXTS) * floats.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.98  # measured 0.988-0.999 on fleet documents and tasks
    assert cosines.max() < 1.0 - 1e-5


def test_the_model_id_says_which_products_made_the_vectors(int8, floats):
    assert int8.model == MODEL_NAME + INT8_MARK and floats.model == MODEL_NAME
    assert calibration_id(int8.model) == calibration_id(floats.model) == MODEL_NAME


def test_the_environment_turns_int8_products_off(monkeypatch, floats):
    monkeypatch.setenv(INT8_ENV, "0")
    plain = OnnxMiniLM(threads=1)
    assert not plain.int8_products and plain.model == MODEL_NAME
    assert np.array_equal(plain.embed(TEXTS), floats.embed(TEXTS))


def test_a_model_onnxruntime_cannot_load_names_its_file(tmp_path):
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not an onnx model")
    with pytest.raises(EmbedderError, match=r"model\.onnx: onnxruntime cannot load it"):
        OnnxMiniLM(threads=1, model_path=broken)
