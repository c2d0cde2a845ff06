"""Models that ship inside the package: a folder per model under ``index/models/``.

A model folder holds ``model.onnx`` (int8), ``tokenizer.json`` and ``manifest.json``; the manifest
records each file's sha256 and how the model was trained (docs/models.md is its model card).
:func:`load_packaged` checks every file against the manifest before onnxruntime sees it, so a
truncated or swapped file fails loudly instead of ranking with the wrong weights.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cartograph.errors import EmbedderError
from cartograph.files import file_sha256

TRAINED = "minilm-tools"
REQUIRED = ("model.onnx", "tokenizer.json")


def models_dir() -> Path:
    return Path(str(resources.files("cartograph.index"))) / "models"


@dataclass(frozen=True)
class PackagedModel:
    """A checked model folder: its files and its manifest."""

    name: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def model_id(self) -> str:
        """Names the exact weights: a new model file means a new id (and a rebuilt index)."""
        return f"cartograph/{self.name}@{self.manifest['files']['model.onnx'][:12]}"


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / "manifest.json"
    if not path.is_file():
        raise EmbedderError(f"{path}: missing; the packaged model {folder.name!r} is incomplete")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EmbedderError(f"{path}: not valid JSON: {exc}") from exc
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or any(not isinstance(files.get(n), str) for n in REQUIRED):
        raise EmbedderError(f"{path}: field 'files' must give the sha256 of {', '.join(REQUIRED)}")
    return manifest


def checked_model(name: str, folder: Path | None = None) -> PackagedModel:
    """The model folder ``name``, every file checked against its manifest's sha256."""
    folder = folder or models_dir() / name
    if not folder.is_dir():
        raise EmbedderError(f"{folder}: no packaged model {name!r}; reinstall cartograph")
    manifest = read_manifest(folder)
    for file, want in manifest["files"].items():
        path = folder / file
        if not path.is_file():
            raise EmbedderError(f"{path}: missing; reinstall cartograph")
        got = file_sha256(path)
        if got != want:
            raise EmbedderError(
                f"{path}: sha256 {got[:16]}... does not match the manifest's {want[:16]}...; "
                "the file is damaged or was replaced: reinstall cartograph"
            )
    return PackagedModel(name, folder, manifest)


def load_packaged(
    name: str = TRAINED,
    threads: int | None = None,
    folder: Path | None = None,
    *,
    int8_products: bool | None = None,
):
    """An :class:`~cartograph.index.onnx_minilm.OnnxMiniLM` over the checked packaged model;
    ``int8_products`` as that class takes it (default: int8 unless the environment says not)."""
    from cartograph.index.onnx_minilm import OnnxMiniLM

    model = checked_model(name, folder)
    embedder = OnnxMiniLM(
        threads,
        model_path=model.folder / "model.onnx",
        tokenizer=model.folder / "tokenizer.json",
        model_id=model.model_id,
        int8_products=int8_products,
    )
    embedder.name = name
    embedder.spec = name  # type: ignore[attr-defined]
    return embedder
