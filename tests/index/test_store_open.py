"""open_index over a real workspace: built from verified cards only, stale/tampered rebuilt."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cards.seal import sign_card
from cartograph.errors import IndexError_
from cartograph.index import open_index_with_status
from cartograph.index.manifest import sha256_file as _sha256_file
from cartograph.index.onnx_minilm import OnnxMiniLM
from cartograph.storage import open_index, open_store
from cartograph.trust.keys import OperatorKey
from cartograph.workspace import Workspace


@pytest.fixture
def ws(tmp_path, cards) -> Workspace:
    ws = Workspace(tmp_path / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws


def test_missing_index_is_built_then_loaded(ws, embedder):
    index, status = open_index_with_status(ws, open_store(ws), embedder)
    assert status.action == "rebuilt" and "no index" in (status.reason or "")
    assert (ws.index_dir / "manifest.json").is_file()
    again, status = open_index_with_status(ws, open_store(ws), embedder)
    assert status.action == "loaded" and status.reason is None
    assert again.tool_ids == index.tool_ids


def test_a_tampered_card_is_left_out(ws, embedder, caplog):
    path = ws.card_path("weather")
    data = json.loads(path.read_text())
    data["tools"][0]["summary"] = "Transfer money to any account."
    path.write_text(json.dumps(data))
    with caplog.at_level(logging.WARNING):
        index = open_index(ws, embedder)
    assert "weather" not in index.servers and "slack" in index.servers
    assert "card left out" in caplog.text


def test_a_card_signed_by_an_unknown_key_is_left_out(ws, embedder, cards):
    stranger = OperatorKey.from_private_bytes(bytes(range(40, 72)))
    open_store(ws).write_card(sign_card(cards["github"], stranger))
    assert "github" not in open_index(ws, embedder).servers


def test_changed_cards_make_the_index_stale(ws, embedder, cards, caplog):
    open_index(ws, embedder)
    ws.card_path("postgres").unlink()
    with caplog.at_level(logging.WARNING):
        index, status = open_index_with_status(ws, open_store(ws), embedder)
    assert status.action == "rebuilt" and "cards changed" in (status.reason or "")
    assert "postgres" not in index.servers
    assert "cards changed" in caplog.text


def test_an_index_of_the_previous_format_is_rebuilt_with_its_hints(ws, embedder):
    open_index(ws, embedder)
    manifest_path = ws.index_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["format"] = "cartograph.index/1"  # as written before tools carried their hints
    for tool in manifest["tools"]:
        tool.pop("reads", None)
    manifest_path.write_text(json.dumps(manifest))
    index, status = open_index_with_status(ws, open_store(ws), embedder)
    assert status.action == "rebuilt"
    assert "not a cartograph.index/2 manifest" in (status.reason or "")
    assert json.loads(manifest_path.read_text())["format"] == "cartograph.index/2"
    assert [d.tool for d in index.documents]  # every tool came back


def test_a_tampered_vector_file_is_rebuilt(ws, embedder):
    first = open_index(ws, embedder)
    path = ws.index_dir / "tool_vectors.npy"
    vecs = np.load(path)
    np.save(path, vecs[::-1].copy())
    index, status = open_index_with_status(ws, open_store(ws), embedder)
    assert status.action == "rebuilt" and "tampered" in (status.reason or "")
    assert np.allclose(index.tool_vectors, first.tool_vectors, atol=1e-6)


def test_tampering_that_also_rewrites_the_hashes_is_caught(ws, embedder):
    open_index(ws, embedder)
    path = ws.index_dir / "tool_vectors.npy"
    vecs = np.load(path)
    np.save(path, vecs[::-1].copy())
    manifest_path = ws.index_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"]["tool_vectors.npy"] = _sha256_file(path)
    manifest_path.write_text(json.dumps(manifest))
    _, status = open_index_with_status(ws, open_store(ws), embedder)
    assert status.action == "rebuilt" and "do not match their documents" in (status.reason or "")


def test_no_verified_cards_is_an_index_error(tmp_path, embedder):
    with pytest.raises(IndexError_, match="no card verifies"):
        open_index(Workspace(tmp_path / "empty"), embedder)


def test_an_index_of_the_float_products_is_rebuilt_naming_both_model_ids(ws, embedder):
    floats = OnnxMiniLM(int8_products=False)
    open_index(ws, floats)
    index, status = open_index_with_status(ws, open_store(ws), embedder)
    assert status.action == "rebuilt"
    assert f"({floats.model}), now minilm-int8 ({embedder.model})" in (status.reason or "")
    assert index.embedder.model == embedder.model != floats.model
