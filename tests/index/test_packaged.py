"""The trained model shipped as package data: files match the manifest and the model card
(docs/models.md), vectors for fixed texts match the recorded ones, and a damaged file is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from cartograph.errors import EmbedderError
from cartograph.index import load_embedder
from cartograph.index.names import INT8_MARK
from cartograph.index.packaged import TRAINED, checked_model, file_sha256, load_packaged, models_dir

REPO = Path(__file__).resolve().parents[2]
MODEL_CARD = REPO / "docs" / "models.md"


def test_shipped_files_match_the_manifest_and_the_model_card() -> None:
    model = checked_model(TRAINED)
    card = MODEL_CARD.read_text(encoding="utf-8")
    for name, digest in model.manifest["files"].items():
        path = model.folder / name
        assert file_sha256(path) == digest
        assert path.stat().st_size <= 25 * 1024 * 1024, f"{name} is over 25 MB"
        assert digest in card, f"docs/models.md does not record {name}'s sha256 {digest}"
    assert model.manifest["training"]["pairs_sha256"] in card


def test_the_shipped_model_gives_the_recorded_vectors() -> None:
    model = checked_model(TRAINED)
    fixtures = model.manifest["fixtures"]
    embedder = load_packaged(TRAINED, int8_products=False)  # recorded on float products
    vecs = embedder.embed([f["text"] for f in fixtures])
    for fixture, vec in zip(fixtures, vecs, strict=True):
        assert np.allclose(vec[:8], fixture["head"], atol=2e-4), fixture["text"]
    assert embedder.model == model.model_id
    assert load_embedder(TRAINED).model == model.model_id + INT8_MARK  # as shipped: int8


def test_the_trained_model_differs_from_the_stock_one() -> None:
    text = ["show the last commits of the git repository"]
    trained = load_embedder(TRAINED).embed(text)[0]
    stock = load_embedder("minilm-int8").embed(text)[0]
    assert float(trained @ stock) < 0.999
    assert load_embedder(TRAINED).model != load_embedder("minilm-int8").model


def test_a_damaged_model_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / TRAINED
    shutil.copytree(models_dir() / TRAINED, folder)
    data = bytearray((folder / "tokenizer.json").read_bytes())
    data[100] ^= 1
    (folder / "tokenizer.json").write_bytes(bytes(data))
    with pytest.raises(EmbedderError, match="does not match the manifest"):
        load_packaged(TRAINED, folder=folder)


def test_the_shipped_model_has_its_own_fusion_weights_and_abstain_threshold() -> None:
    """A new model file changes the id: its weights and threshold must be chosen again."""
    from cartograph.index.abstain import THRESHOLDS
    from cartograph.index.methods import HYBRID_BY_MODEL, HybridParams, hybrid_params_for

    model_id = checked_model(TRAINED).model_id
    assert model_id in HYBRID_BY_MODEL, "choose hybrid weights for it: benchmarks/fusion_fit.py"
    assert model_id in THRESHOLDS, "calibrate its abstain threshold: benchmarks/abstain.py"
    # chosen on the fleet's tune sets: the stock model's fitted weights, action term included
    assert hybrid_params_for(model_id) == HybridParams() and HybridParams().w_action > 0
    assert hybrid_params_for("some/other-model") == HybridParams()
    assert THRESHOLDS[model_id] != THRESHOLDS["sentence-transformers/all-MiniLM-L6-v2"]


def test_a_texts_vector_does_not_depend_on_its_batch_mates() -> None:
    """Weight-only int8 (cartograph.index.onnx_int8): activations stay float, so the index build
    (batches sorted by length) and the spot check (a few texts) embed a document alike."""
    texts = [
        "git log: Show the commit history of the repository. [git]",
        "read_file: Read the complete contents of a file from the file system. [filesystem]",
        "create_entities: Create new entities in the knowledge graph, each with a name, a type "
        "and observations. [memory]",
        "get_current_time: Get the current time in a given IANA time zone. [time]",
    ] * 3
    embedder = load_embedder(TRAINED)
    together = embedder.embed(texts)
    for text, vec in zip(texts[:4], together[:4], strict=True):
        alone = embedder.embed([text])[0]
        assert float(alone @ vec) > 0.9999, text
