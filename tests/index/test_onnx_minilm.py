"""The int8 MiniLM's two sessions: documents on float weight products (the stored vectors),
queries on int8 ones, one query a run; the document session closes and opens again on demand."""

from __future__ import annotations

import numpy as np
import pytest

from cartograph.errors import EmbedderError
from cartograph.index.embedders import embed_queries
from cartograph.index.onnx_minilm import INT8_QUERIES_ENV, OnnxMiniLM, release_documents

TASKS = [
    "show the last commits of the git repository",
    "remember that Alice works at Acme as an engineer",
    "what time is it in Tokyo right now",
]


@pytest.fixture(scope="module")
def model() -> OnnxMiniLM:
    return OnnxMiniLM(threads=1)


def test_a_query_vector_does_not_depend_on_the_queries_beside_it(model):
    together = model.embed_query(TASKS)
    for i, task in enumerate(TASKS):
        assert np.array_equal(model.embed_query([task])[0], together[i])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_queries_run_on_int8_products_close_to_the_float_vectors(model):
    queries, documents = model.embed_query(TASKS), model.embed(TASKS)
    cosines = (queries * documents).sum(axis=1)
    assert cosines.min() > 0.98  # measured 0.989-0.999 on LiveMCPBench's tasks
    assert np.abs(queries - documents).max() > 1e-3  # not the float products


def test_without_int8_queries_a_query_is_embedded_as_a_document(monkeypatch):
    monkeypatch.setenv(INT8_QUERIES_ENV, "0")
    plain = OnnxMiniLM(threads=1)
    assert np.allclose(plain.embed_query(TASKS), plain.embed(TASKS), atol=1e-6)
    assert plain.document_session_open  # one session serves both


def test_queries_alone_never_open_the_document_session():
    fresh = OnnxMiniLM(threads=1)
    embed_queries(fresh, TASKS)
    fresh.embed_spans(TASKS[0], [(0, 4)])
    assert not fresh.document_session_open


def test_the_document_session_closes_and_opens_again_with_the_same_vectors():
    fresh = OnnxMiniLM(threads=1)
    before = fresh.embed(TASKS)
    assert fresh.document_session_open
    release_documents(fresh)
    assert not fresh.document_session_open
    assert np.array_equal(fresh.embed(TASKS), before)
    assert fresh.document_session_open


def test_int8_products_everywhere_is_one_session_that_stays_open():
    int8 = OnnxMiniLM(threads=1, int8_matmul=True)
    release_documents(int8)
    assert int8.document_session_open
    assert np.allclose(int8.embed_query(TASKS[:1]), int8.embed(TASKS[:1]), atol=1e-6)


def test_release_ignores_embedders_without_a_document_session():
    release_documents(object())  # a remote or exact backend has nothing to close


def test_a_model_onnxruntime_cannot_load_names_its_file_at_the_first_query(tmp_path):
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not an onnx model")
    model = OnnxMiniLM(threads=1, model_path=broken)  # its query session opens in the background
    with pytest.raises(EmbedderError, match=r"model\.onnx: onnxruntime cannot load it"):
        model.embed_query(TASKS[:1])
    with pytest.raises(EmbedderError, match=r"model\.onnx"):
        model.embed(TASKS[:1])
