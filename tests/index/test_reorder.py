"""The reorder stage over real cards and both real models: the trained encoder orders hybrid's
top 5 and nothing else, scores as an index built with it would, and keeps its vectors in the
home (reused when the documents are unchanged, re-embedded when they change or were altered)."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cards.model import Card
from cartograph.errors import EmbedderError
from cartograph.index import Embedder, ToolIndex, load_embedder, reorder, reorder_vectors
from cartograph.index.documents import card_documents, server_document
from cartograph.index.methods import hybrid_scores
from cartograph.index.names import INT8_MARK
from cartograph.index.reorder import (
    FOLDER,
    REORDER_DEPTH,
    REORDER_ENV,
    REORDER_MODEL,
    Reorderer,
    attach_reorderer,
    open_index_and_stage,
    open_reorderer,
    prepare_vectors,
    reorder_embedder,
    reorder_wanted,
    workspace_reorderer,
)
from cartograph.index.reorder_vectors import Stopped, missing
from cartograph.index.rerank import load_reranker
from cartograph.index.vector_cache import QUERIES
from cartograph.storage import open_store
from cartograph.workspace import Workspace


def verified_cards_of(ws: Workspace) -> dict[str, Card]:
    from cartograph.index.store import verified_cards

    return dict(verified_cards(ws, open_store(ws)).cards)


TASKS = [
    "post a message in the #general Slack channel",
    "show the tables in the postgres database",
    "find code that parses dates in our repositories",
    "read the notes file in my home folder",
]


@pytest.fixture(scope="module")
def trained() -> Embedder:
    return reorder_embedder()


@pytest.fixture
def reordered(index: ToolIndex, trained: Embedder, tmp_path: Path) -> ToolIndex:
    reorderer = open_reorderer(tmp_path, index, trained)
    assert reorderer is not None
    return replace(index, reorderer=reorderer)


@pytest.mark.parametrize("task", TASKS)
def test_the_top_five_keep_stage_ones_set_in_the_trained_models_order(reordered, index, task):
    plain = [(h.server, h.tool) for h in index.search(task, k=8)]
    hits = reordered.search(task, k=8)
    got = [(h.server, h.tool) for h in hits]
    assert set(got[:REORDER_DEPTH]) == set(plain[:REORDER_DEPTH])
    assert got[REORDER_DEPTH:] == plain[REORDER_DEPTH:]
    evidence = index.evidence(task)
    trained = reordered.reorderer.scores(task, evidence)
    order = [trained[index.position(s, t)] for s, t in got[:REORDER_DEPTH]]
    assert order == sorted(order, reverse=True)
    stage_one = index.scores(task)
    assert [h.score for h in hits] == pytest.approx(
        [stage_one[index.position(s, t)] for s, t in got]
    )


@pytest.mark.parametrize("task", TASKS)
def test_the_full_scores_rank_as_discover_does(reordered, task):
    scores = reordered.scores(task)
    ranked = [reordered.tool_ids[i] for i in np.argsort(-scores, kind="stable")[:8]]
    assert ranked == [(h.server, h.tool) for h in reordered.search(task, k=8)]


def test_fewer_than_five_asked_are_the_head_of_the_reordered_five(reordered):
    five = [(h.server, h.tool) for h in reordered.search(TASKS[2], k=5)]
    two = [(h.server, h.tool) for h in reordered.search(TASKS[2], k=2)]
    assert two == five[:2]


def test_the_float_product_variant_has_its_own_model_id(trained):
    shipped = load_embedder(REORDER_MODEL)
    assert trained.model == shipped.model and shipped.model.endswith(INT8_MARK)  # int8 products
    floats = reorder_embedder(int8_products=False)
    assert floats.name == REORDER_MODEL and floats.model + INT8_MARK == shipped.model
    texts = ["list the open pull requests", "send an email to the finance team"]
    cos = np.sum(floats.embed(texts) * shipped.embed(texts), axis=1)
    assert cos.min() > 0.95 and cos.max() < 1.0 - 1e-6  # near, not the same numbers


def test_the_trained_score_is_the_hybrid_of_an_index_built_with_the_trained_model(
    reordered, index, cards: dict[str, Card], trained: Embedder
):
    trained_index = ToolIndex.build(cards, trained)
    assert trained_index.tool_ids == index.tool_ids
    for task in TASKS:
        expected = hybrid_scores(trained_index.evidence(task))
        got = reordered.reorderer.scores(task, index.evidence(task))
        assert np.allclose(got, expected, atol=1e-4)


def test_other_methods_are_not_reordered(reordered, index):
    for method in ("flat", "bm25", "two-stage"):
        got = reordered.search(TASKS[0], k=5, method=method)
        assert got == index.search(TASKS[0], k=5, method=method)


def test_vectors_are_reused_when_the_documents_are_unchanged(index, trained, tmp_path):
    first = open_reorderer(tmp_path, index, trained)
    again = open_reorderer(tmp_path, index, trained)
    assert first is not None and again is not None
    assert first.embedded == len(index.documents) + len(index.server_documents)
    assert again.embedded == 0
    assert np.array_equal(first.tool_vectors, again.tool_vectors)
    assert np.allclose(np.linalg.norm(again.tool_vectors, axis=1), 1.0, atol=1e-5)


def test_a_changed_document_is_the_only_one_embedded_again(index, trained, tmp_path):
    open_reorderer(tmp_path, index, trained)
    docs = list(index.documents)
    docs[0] = replace(docs[0], dense=docs[0].dense + " It also paginates.")
    changed = open_reorderer(tmp_path, replace(index, documents=docs), trained)
    assert changed is not None and changed.embedded == 1
    manifest = json.loads((tmp_path / FOLDER / "manifest.json").read_text())
    assert len(manifest["keys"]) == len(docs) + len(index.server_documents)


def test_an_altered_file_is_embedded_again_with_a_warning(index, trained, tmp_path, caplog):
    first = open_reorderer(tmp_path, index, trained)
    assert first is not None
    path = tmp_path / FOLDER / "vectors.npy"
    path.write_bytes(path.read_bytes()[:-8] + b"\0" * 8)
    with caplog.at_level(logging.WARNING):
        again = open_reorderer(tmp_path, index, trained)
    assert again is not None and again.embedded == first.embedded
    assert "does not match its manifest" in caplog.text and str(path) in caplog.text


def test_vectors_swapped_with_a_matching_hash_fail_the_spot_check(index, trained, tmp_path, caplog):
    first = open_reorderer(tmp_path, index, trained)
    assert first is not None
    folder = tmp_path / FOLDER
    stored = np.load(folder / "vectors.npy")
    rng = np.random.default_rng(0)
    fake = rng.normal(size=stored.shape).astype(np.float32)
    np.save(folder / "vectors.npy", fake / np.linalg.norm(fake, axis=1, keepdims=True))
    manifest = json.loads((folder / "manifest.json").read_text())
    from cartograph.index.manifest import sha256_file

    manifest["sha256"] = sha256_file(folder / "vectors.npy")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with caplog.at_level(logging.WARNING):
        again = open_reorderer(tmp_path, index, trained)
    assert again is not None and again.embedded == first.embedded
    assert np.allclose(again.tool_vectors, first.tool_vectors, atol=1e-5)
    assert "do not match their documents" in caplog.text


def test_an_index_of_the_trained_model_has_nothing_to_reorder(cards, trained, tmp_path):
    assert open_reorderer(tmp_path, ToolIndex.build(cards, trained), trained) is None


def test_the_flag_wins_then_the_environment_then_the_setting_then_on(monkeypatch):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    assert reorder_wanted(None) is True
    assert reorder_wanted(False) is False
    monkeypatch.setenv(REORDER_ENV, "0")
    assert reorder_wanted(True) is False
    assert reorder_wanted(True, flag=True) is True
    monkeypatch.setenv(REORDER_ENV, "1")
    assert reorder_wanted(False) is True and reorder_wanted(None, flag=False) is False


def test_the_reranker_takes_the_reorders_place(index, tmp_path, monkeypatch):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    assert isinstance(workspace_reorderer(tmp_path, index, None), Reorderer)
    with_reranker = replace(index, reranker=load_reranker(workers=1))
    assert workspace_reorderer(tmp_path, with_reranker, None) is None
    assert workspace_reorderer(tmp_path, index, False) is None


def test_an_unwritable_home_costs_the_reorder_only(index, tmp_path, monkeypatch, caplog):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.WARNING):
        assert workspace_reorderer(blocker, index, None) is None
    assert "does not reorder" in caplog.text


def test_the_trained_query_is_embedded_beside_stage_one_and_then_cached(reordered, index):
    stage = reordered.reorderer
    task = "rename the branch I am working on in the repository"
    QUERIES._items.clear()
    pending = stage.prefetch(task)
    assert pending is not None
    evidence = index.evidence(task)
    with_pending = stage.scores(task, evidence, pending)
    assert QUERIES.peek(stage.embedder.model, task, False) is not None
    assert stage.prefetch(task) is None  # cached now: nothing to start
    QUERIES._items.clear()
    assert np.allclose(with_pending, stage.scores(task, evidence))


def test_vectors_prepared_from_the_cards_are_what_the_stage_opens_with(index, cards, tmp_path):
    embedded = prepare_vectors(tmp_path, cards)
    assert embedded == len(index.documents) + len(index.server_documents)
    stage = open_reorderer(tmp_path, index)
    assert stage is not None and stage.embedded == 0


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Workspace:
    monkeypatch.delenv(REORDER_ENV, raising=False)
    ws = Workspace(tmp_path / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws


def test_the_index_and_the_stage_open_together(workspace):
    index, status, stage = open_index_and_stage(workspace, open_store(workspace))
    assert status.action == "rebuilt" and len(index) == 14
    assert stage is not None and stage.embedded == 0  # embedded beside the build, then reused
    assert (workspace.root / FOLDER / "vectors.npy").is_file()
    _, again, off = open_index_and_stage(workspace, open_store(workspace), flag=False)
    assert again.action == "loaded" and off is None


def test_a_failing_stage_leaves_the_index(workspace, monkeypatch, caplog):
    def broken(*_args):
        raise EmbedderError("model.onnx: onnxruntime cannot load it")

    monkeypatch.setattr(reorder, "prepare_vectors", broken)
    with caplog.at_level(logging.WARNING):
        index, _, stage = open_index_and_stage(workspace, open_store(workspace))
    assert stage is None and len(index) == 14
    assert "does not reorder" in caplog.text and "model.onnx" in caplog.text


def test_an_interrupted_build_stops_the_stage_and_keeps_what_it_embedded(workspace, monkeypatch):
    from cartograph.index import store

    monkeypatch.delenv(REORDER_ENV, raising=False)
    monkeypatch.setattr(reorder_vectors, "CHUNK", 1)
    started = threading.Event()
    counting = StopsAfterOneChunk(reorder_embedder(), started)  # "stop" here: it has begun
    monkeypatch.setattr(reorder, "reorder_embedder", lambda: counting)

    def interrupted(*_args, **_kwargs):
        started.wait(timeout=60)  # Ctrl-C once the stage has embedded a document
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "open_index_with_status", interrupted)
    with pytest.raises(KeyboardInterrupt):
        open_index_and_stage(workspace, open_store(workspace))
    cards = verified_cards_of(workspace)
    texts = [d.dense for d in card_documents(cards)] + [server_document(c) for c in cards.values()]
    left = missing(workspace.root / FOLDER, counting, texts)  # type: ignore[arg-type]
    assert 0 < left < len(set(texts)) and counting.texts < len(set(texts))


def test_the_proxy_waits_for_a_few_vectors_and_embeds_many_in_the_background(
    index, cards, tmp_path, monkeypatch, caplog
):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    texts = [d.dense for d in index.documents] + list(index.server_documents)
    assert missing(tmp_path / FOLDER, reorder_embedder(), texts) == len(texts)
    monkeypatch.setattr(reorder, "WAIT_BELOW", 3)
    fresh = replace(index, reorderer=None)
    with caplog.at_level(logging.WARNING):
        worker = attach_reorderer(tmp_path, fresh, None)
    assert worker is not None and "in the background" in caplog.text
    worker.join(timeout=120)
    assert isinstance(fresh.reorderer, Reorderer) and fresh.reorderer.embedded == len(texts)
    assert missing(tmp_path / FOLDER, reorder_embedder(), texts) == 0
    again = replace(index, reorderer=None)
    assert attach_reorderer(tmp_path, again, None) is None  # all stored: opened at once
    assert isinstance(again.reorderer, Reorderer) and again.reorderer.embedded == 0


def test_a_catalog_above_the_cap_is_not_reordered(index, tmp_path, monkeypatch, caplog):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    monkeypatch.setattr(reorder, "REORDER_MAX_TOOLS", len(index) - 1)
    fresh = replace(index, reorderer=None)
    with caplog.at_level(logging.INFO, logger="cartograph.index.reorder"):
        assert attach_reorderer(tmp_path, fresh, None) is None
    assert fresh.reorderer is None and "above" in caplog.text
    assert not (tmp_path / FOLDER).exists()


class StopsAfterOneChunk:
    """The real trained model; sets ``stop`` once it has embedded one chunk."""

    def __init__(self, inner: Embedder, stop: threading.Event) -> None:
        self.inner, self.stop = inner, stop
        self.name, self.model, self.dim = inner.name, inner.model, inner.dim
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        self.stop.set()
        return self.inner.embed(texts)


def test_a_stop_keeps_what_was_embedded_and_the_next_open_embeds_the_rest(
    index, trained, tmp_path, monkeypatch
):
    monkeypatch.setattr(reorder_vectors, "CHUNK", 4)
    stop = threading.Event()
    stopping = StopsAfterOneChunk(trained, stop)
    with pytest.raises(Stopped, match="after embedding 4 of"):
        open_reorderer(tmp_path, index, stopping, stop)  # type: ignore[arg-type]
    assert stopping.texts == 4
    texts = [d.dense for d in index.documents] + list(index.server_documents)
    assert missing(tmp_path / FOLDER, trained, texts) == len(texts) - 4
    resumed = open_reorderer(tmp_path, index, trained)
    assert resumed is not None and resumed.embedded == len(texts) - 4
    whole = open_reorderer(tmp_path / "whole", index, trained)
    assert whole is not None
    assert np.allclose(resumed.tool_vectors, whole.tool_vectors, atol=1e-5)


def test_a_stopped_background_open_leaves_stage_one_and_nothing_starts_after_it(
    index, tmp_path, monkeypatch, caplog
):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    monkeypatch.setattr(reorder, "WAIT_BELOW", 3)
    monkeypatch.setattr(reorder_vectors, "CHUNK", 4)
    stop = threading.Event()
    stop.set()
    fresh = replace(index, reorderer=None)
    assert attach_reorderer(tmp_path, fresh, None, stop) is None  # closing: nothing starts
    stop.clear()
    with caplog.at_level(logging.INFO, logger="cartograph.index.reorder"):
        worker = attach_reorderer(tmp_path, fresh, None, stop)
        assert worker is not None and not worker.daemon  # the process exits after it
        stop.set()
        worker.join(timeout=60)
    assert not worker.is_alive()
    assert fresh.reorderer is None and "did not open" in caplog.text
