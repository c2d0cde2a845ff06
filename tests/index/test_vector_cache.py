"""Embedding caches: a rebuild embeds only the texts that changed; a new model re-embeds all;
the query LRU answers a repeated query without the model."""

from __future__ import annotations

import numpy as np
import pytest
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cards.seal import sign_card
from cartograph.index import open_index_with_status
from cartograph.index.store import SPOT_CHECKS
from cartograph.index.vector_cache import QueryCache, embed_documents, known_vectors
from cartograph.storage import open_store
from cartograph.workspace import Workspace


class Counting:
    """A real embedder that counts the texts it is asked to embed."""

    def __init__(self, inner, model: str | None = None) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.model = model or inner.model
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture
def ws(tmp_path, cards) -> Workspace:
    ws = Workspace(tmp_path / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws


def test_rebuilding_after_one_card_changed_embeds_only_that_server(ws, embedder, cards):
    first, _ = open_index_with_status(ws, open_store(ws), Counting(embedder))
    card = cards["slack"]
    entry = card.tools[0].model_copy(update={"summary": "Post a note to a Slack channel now."})
    changed = card.model_copy(update={"tools": [entry, *card.tools[1:]]})
    open_store(ws).write_card(sign_card(changed, INDEX_KEY))
    counting = Counting(embedder)
    index, status = open_index_with_status(ws, open_store(ws), counting)
    assert status.action == "rebuilt"
    assert 1 <= index.embedded <= 2  # the changed tool (and slack's server text if it changed)
    assert counting.texts <= index.embedded + SPOT_CHECKS  # + the old index's spot check
    assert index.tool_ids == first.tool_ids
    fresh = embedder.embed([d.dense for d in index.documents])
    assert np.min(np.sum(fresh * index.tool_vectors, axis=1)) > 0.999


def test_a_new_model_id_reuses_nothing(ws, embedder):
    open_index_with_status(ws, open_store(ws), Counting(embedder))
    other = Counting(embedder, model="another-model@1")
    index, status = open_index_with_status(ws, open_store(ws), other)
    assert status.action == "rebuilt" and "embedder" in (status.reason or "")
    assert other.texts == len(index.tool_ids) + len(index.servers)


def test_document_cache_is_keyed_by_model_and_text(embedder):
    texts = ["send an email", "list the inbox"]
    known = known_vectors(embedder.model, texts[:1], embedder.embed(texts[:1]))
    counting = Counting(embedder)
    vecs, fresh = embed_documents(counting, texts, known)
    assert fresh == 1 and counting.texts == 1
    assert np.allclose(vecs, embedder.embed(texts), atol=1e-6)
    _, fresh = embed_documents(Counting(embedder, model="other"), texts, known)
    assert fresh == 2


def test_the_query_lru_answers_repeats_and_evicts_the_oldest():
    cache = QueryCache(size=2)
    calls = []

    def make(v):
        return lambda: calls.append(v) or np.full((1, 3), v, np.float32)

    cache.get("m", "a", False, make(1))
    assert cache.get("m", "a", False, make(9))[0, 0] == 1 and calls == [1]
    cache.get("m2", "a", False, make(2))  # another model: a miss
    cache.get("m", "b", False, make(3))  # evicts the oldest ("m", "a")
    cache.get("m", "a", False, make(4))
    assert calls == [1, 2, 3, 4] and cache.hits == 1


def test_a_first_build_is_no_warning_and_a_stale_index_is(ws, embedder, cards, caplog):
    import logging

    from cartograph.index.store import open_file_index

    with caplog.at_level(logging.INFO, logger="cartograph.index.store"):
        open_file_index(ws.index_dir, cards, embedder, rebuild=False)
    assert [r.levelno for r in caplog.records if "index at" in r.message] == [logging.INFO]
    caplog.clear()
    changed = dict(cards)
    changed.pop(next(iter(changed)))
    with caplog.at_level(logging.INFO, logger="cartograph.index.store"):
        open_file_index(ws.index_dir, changed, embedder, rebuild=False)
    assert [r.levelno for r in caplog.records if "index at" in r.message] == [logging.WARNING]
    assert "cards changed" in caplog.text
