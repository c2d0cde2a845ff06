"""Catalog adaptation without torch: pseudo-queries, the held-out split, the stored model's
checks, and which embedder an index opens with (the adapted one only while it is current)."""

from __future__ import annotations

import json
import logging
import shutil

import pytest
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cards.seal import sign_card
from cartograph.errors import EmbedderError
from cartograph.index import open_index_with_status
from cartograph.index.abstain import threshold_for
from cartograph.index.adapt import (
    adapted_dir,
    catalog_pairs,
    documents_digest,
    holdout_tools,
    pseudo_queries,
    read_adapted,
)
from cartograph.index.documents import card_documents
from cartograph.index.embedders import SPEC_ENV, load_embedder
from cartograph.index.methods import hybrid_params_for
from cartograph.index.packaged import TRAINED, file_sha256, models_dir
from cartograph.index.store import workspace_embedder
from cartograph.storage import open_store
from cartograph.workspace import Workspace

STOCK_ID = "sentence-transformers/all-MiniLM-L6-v2"


def test_pseudo_queries_are_the_example_tasks_and_the_summarys_first_sentence(cards):
    entry = cards["github"].tools[0]
    queries = pseudo_queries(entry)
    assert [ex.task for ex in entry.examples] == queries[: len(entry.examples)]
    assert entry.summary.startswith(queries[-1])
    assert len(queries) == len(set(queries))


def test_held_out_tools_never_train(cards):
    docs = card_documents(cards)
    held = holdout_tools(docs)
    assert 0 < len(held) < len(docs)
    assert held == holdout_tools(docs)  # seeded
    train, judge = catalog_pairs(cards, held)
    assert {p.tool for p in judge} == held
    assert not {p.tool for p in train} & held
    by_tool = {f"{d.server}.{d.tool}": d for d in docs}
    for pair in train:
        doc = by_tool[pair.tool]
        assert pair.positive == doc.dense and pair.negative != pair.positive
        server = pair.tool.split(".", 1)[0]
        if len(cards[server].tools) > 1:  # a sibling on the same server
            assert pair.negative in {d.dense for d in docs if d.server == server}


def test_the_digest_follows_the_text_not_the_signature(cards):
    digest = documents_digest(card_documents(cards))
    resigned = {
        n: sign_card(c, INDEX_KEY, signed_at="2026-12-01T00:00:00Z") for n, c in cards.items()
    }
    assert documents_digest(card_documents(resigned)) == digest
    card = cards["slack"]
    first = card.tools[0].model_copy(update={"summary": "Post a message to a Slack channel now."})
    changed = dict(cards, slack=card.model_copy(update={"tools": [first, *card.tools[1:]]}))
    assert documents_digest(card_documents(changed)) != digest


def write_adapted(ws: Workspace, digest: str) -> None:
    """A model folder laid out as `index tune` writes it (real ONNX weights: the shipped
    trained model's, standing in for a tuned one)."""
    folder = adapted_dir(ws.root)
    folder.mkdir(parents=True)
    for name in ("model.onnx", "tokenizer.json"):
        shutil.copyfile(models_dir() / TRAINED / name, folder / name)
    manifest = {
        "name": "adapted",
        "base_model": STOCK_ID,
        "files": {n: file_sha256(folder / n) for n in ("model.onnx", "tokenizer.json")},
        "documents_digest": digest,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def ws(tmp_path, monkeypatch) -> Workspace:
    monkeypatch.delenv(SPEC_ENV, raising=False)
    ws = Workspace(tmp_path / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws


def test_a_current_adapted_model_is_what_the_index_opens_with(ws, cards):
    write_adapted(ws, documents_digest(card_documents(cards)))
    index, status = open_index_with_status(ws, open_store(ws))
    assert index.embedder.name == "adapted"
    model = index.embedder.model
    assert model.startswith(STOCK_ID + "+tuned@") and model != STOCK_ID
    # calibrated as its base: the same fusion weights and abstain threshold
    assert hybrid_params_for(model) == hybrid_params_for(STOCK_ID)
    assert threshold_for(model) == threshold_for(STOCK_ID) is not None
    # the saved index names the folder, so it loads again without a rebuild
    again, status = open_index_with_status(ws, open_store(ws))
    assert status.action == "loaded" and again.embedder.model == model


def test_changed_cards_fall_back_to_the_shipped_model_with_a_warning(ws, cards, caplog):
    write_adapted(ws, "sha256:" + "0" * 64)
    with caplog.at_level(logging.WARNING):
        embedder = workspace_embedder(ws.root, None, cards)
    assert embedder.name == load_embedder().name == "minilm-int8"
    assert "tuned on other cards" in caplog.text and "cartograph index tune" in caplog.text


def test_an_operator_named_embedder_wins_over_the_adapted_model(ws, cards):
    write_adapted(ws, documents_digest(card_documents(cards)))
    assert workspace_embedder(ws.root, "minilm-tools", cards).name == "minilm-tools"


def test_a_damaged_adapted_model_is_refused_with_its_file_named(ws, cards):
    write_adapted(ws, documents_digest(card_documents(cards)))
    onnx = adapted_dir(ws.root) / "model.onnx"
    onnx.write_bytes(onnx.read_bytes()[:1000])
    with pytest.raises(EmbedderError, match=r"model\.onnx: sha256"):
        read_adapted(adapted_dir(ws.root))


def test_no_adapted_model_means_the_shipped_default(ws, cards):
    assert read_adapted(adapted_dir(ws.root)) is None
    assert workspace_embedder(ws.root, None, cards).name == "minilm-int8"


def test_too_small_a_catalog_is_refused_with_a_reason(ws, cards):
    from cartograph.index.adapt_train import TuneSettings, tune

    with pytest.raises(EmbedderError, match="too few"):
        tune(ws.root, {"slack": cards["slack"]}, TuneSettings())


def test_without_the_train_extra_tune_says_what_to_install(ws, cards):
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed here: test_adapt_train.py trains for real")
    from cartograph.index.adapt_train import TuneSettings, tune

    with pytest.raises(EmbedderError, match=r"cartograph\[train\]"):
        tune(ws.root, cards, TuneSettings(batch=8))
