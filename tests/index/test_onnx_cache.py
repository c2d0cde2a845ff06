"""The folded-model cache with the real int8 models and onnxruntime: the folded copy embeds
exactly as the model opened directly does, is saved once and reused, is built again when its
files are damaged, and a cache that is off or unwritable costs only the saving."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from cartograph.index import onnx_cache
from cartograph.index.onnx_cache import CACHE_ENV, DATA, MODEL, cache_key, cache_root, prune
from cartograph.index.onnx_minilm import OnnxMiniLM, onnx_model_path

TEXTS = ["show the last commits of the git repository", "remember that Alice works at Acme"]


def embed() -> np.ndarray:
    return OnnxMiniLM(threads=1).embed(TEXTS)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "models"))
    return tmp_path / "models"


@pytest.fixture(scope="module")
def direct() -> np.ndarray:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, "off")
        return embed()


def folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def test_the_folded_copy_embeds_exactly_as_the_model_itself(cache, direct):
    got = embed()
    (folder,) = folders(cache)
    assert np.array_equal(got, direct)
    assert {p.name for p in folder.iterdir()} == {MODEL, DATA, "manifest.json"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["files"]) == {MODEL, DATA}
    assert (folder / DATA).stat().st_size > 20_000_000  # the folded float weights


def test_a_saved_copy_is_opened_without_building_it_again(cache, direct, monkeypatch):
    embed()

    def refuse(*_args):
        raise AssertionError("built again")

    monkeypatch.setattr(onnx_cache, "_build", refuse)
    assert np.array_equal(embed(), direct)


def test_a_damaged_copy_is_built_again_with_a_warning(cache, direct, caplog):
    embed()
    (folder,) = folders(cache)
    with open(folder / DATA, "r+b") as f:
        f.seek(4096)
        f.write(b"\xff" * 64)
    with caplog.at_level(logging.WARNING, logger="cartograph.index.onnx_cache"):
        got = embed()
    assert np.array_equal(got, direct)
    assert "does not match its sha256" in caplog.text and folder.name in caplog.text
    assert folders(cache) == [folder]  # rebuilt in place


def test_off_saves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_root() is None
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    OnnxMiniLM(threads=1).embed(TEXTS)  # both sessions
    assert not (tmp_path / ".cache").exists()


def test_the_default_place_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "cartograph" / "models"


def test_an_unwritable_cache_costs_only_the_saving(tmp_path, direct, monkeypatch, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "models"))
    with caplog.at_level(logging.INFO, logger="cartograph.index.onnx_cache"):
        got = embed()
    assert np.array_equal(got, direct)
    assert "not caching" in caplog.text


def test_the_key_names_the_content_the_rewrite_and_the_runtime():
    path = onnx_model_path()
    key = cache_key(path, "lean", ort.__version__)
    assert key == cache_key(path, "lean", ort.__version__)
    assert key != cache_key(path, "lean+int8-matmul", ort.__version__)
    assert key != cache_key(path, "lean", "0.0.1")


def test_prune_keeps_the_most_recently_opened(tmp_path):
    for i in range(5):
        (tmp_path / f"m{i}").mkdir()
        (tmp_path / f"m{i}" / "manifest.json").write_text("{}")
        os.utime(tmp_path / f"m{i}" / "manifest.json", (1000 + i, 1000 + i))
    removed = prune(tmp_path, keep=2)
    assert sorted(p.name for p in removed) == ["m0", "m1", "m2"]
    assert sorted(p.name for p in folders(tmp_path)) == ["m3", "m4"]


def test_a_process_that_saves_second_keeps_the_first_copy(cache, direct):
    embed()
    (folder,) = folders(cache)
    saved = (folder / "manifest.json").read_text()
    onnx_cache._build(ort, onnx_model_path(), folder, lambda: None)  # loses the race
    assert (folder / "manifest.json").read_text() == saved
    assert [p.name for p in cache.iterdir()] == [folder.name]  # no staging folder left
    assert np.array_equal(embed(), direct)
