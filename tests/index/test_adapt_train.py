"""`cartograph index tune` end to end: real training (torch, the `train` extra; skipped without
it), real int8 ONNX export, the held-out check, and the model a workspace's index then opens."""

from __future__ import annotations

import json

import pytest
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.index import open_index_with_status
from cartograph.index.adapt import adapted_dir, read_adapted
from cartograph.index.embedders import SPEC_ENV
from cartograph.storage import open_store
from cartograph.workspace import Workspace

pytest.importorskip("torch", reason="the train extra (torch CPU) is not installed")
pytest.importorskip("sentence_transformers", reason="the train extra is not installed")

from cartograph.index.adapt_train import TuneSettings, remove_adapted, tune


@pytest.fixture
def ws(tmp_path, monkeypatch) -> Workspace:
    monkeypatch.delenv(SPEC_ENV, raising=False)
    ws = Workspace(tmp_path / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws


def test_tune_trains_exports_judges_and_installs(ws, cards):
    result = tune(ws.root, cards, TuneSettings(batch=8, max_steps=2, force=True))
    assert result.kept and result.folder == adapted_dir(ws.root)
    manifest = json.loads((result.folder / "manifest.json").read_text())
    assert manifest["kept"] == "forced" and manifest["training"]["steps"] == 2
    held = manifest["held_out"]
    assert held["base"]["queries"] == held["adapted"]["queries"] > 0
    assert 0.0 <= held["adapted"]["r5"] <= 1.0
    model = read_adapted(result.folder)
    assert model is not None and model.digest == manifest["documents_digest"]
    index, _ = open_index_with_status(ws, open_store(ws))
    assert index.embedder.name == "adapted"
    assert index.search("post a message to the team channel", k=3)
    assert remove_adapted(ws.root) and not adapted_dir(ws.root).exists()


def test_a_model_that_is_not_better_is_not_installed(ws, cards):
    # a learning rate this high wrecks the weights: the held-out check must refuse it
    result = tune(ws.root, cards, TuneSettings(batch=8, max_steps=3, lr=5e-4))
    assert not result.kept and result.folder is None
    assert not adapted_dir(ws.root).exists()
