"""The reorder stage's document vectors: ``<home>/index-reorder/`` (:mod:`.reorder`).

``vectors.npy`` holds the trained model's unit vectors of the index's tool and server documents
and ``manifest.json`` the model id, the file's sha256 and each row's text key
(:func:`~cartograph.index.vector_cache.text_key`). :func:`synced` reuses the rows whose text is
unchanged, embeds the rest and rewrites the file when anything changed; a file that does not
match its hash, or whose rows embedded again (a spot check) do not match, is embedded anew.
"""

from __future__ import annotations

import json
import logging
import random
from io import BytesIO
from pathlib import Path
from threading import Event
from typing import Any

import numpy as np

from cartograph.errors import CartographError, IndexError_
from cartograph.files import atomic_write
from cartograph.index.embedders import Embedder
from cartograph.index.manifest import sha256_file
from cartograph.index.vector_cache import text_key

logger = logging.getLogger(__name__)

FOLDER = "index-reorder"
FORMAT = 1
SPOT_CHECKS = 2
SPOT_MIN_COSINE = 0.999
CHUNK = 128
"""Documents embedded between two looks at the stop event (about a second on 2 cores)."""


class Stopped(CartographError):
    """The embedding was asked to stop; the vectors embedded so far were saved."""


def missing(folder: Path, embedder: Embedder, texts: list[str]) -> int:
    """How many of ``texts`` the folder's manifest holds no vector of (read without the
    vectors: whether opening the stage will embed much)."""
    try:
        manifest: dict[str, Any] = json.loads((folder / "manifest.json").read_text("utf-8"))
        held = set(manifest["keys"]) if manifest.get("model") == embedder.model else set()
    except (OSError, ValueError, KeyError, TypeError):
        held = set()
    return sum(text_key(embedder.model, t) not in held for t in texts)


def synced(
    folder: Path, embedder: Embedder, texts: list[str], stop: Event | None = None
) -> tuple[np.ndarray, int]:
    """The vectors of ``texts`` (rows in their order), those ``folder`` holds reused when a spot
    check passes, the rest embedded; the file rewritten when anything changed. When ``stop`` is
    set between two chunks, the vectors embedded so far are saved and :class:`Stopped` raised
    (the next call embeds only the rest)."""
    keys = [text_key(embedder.model, t) for t in texts]
    stored = _read(folder, embedder)
    if stored and (problem := _spot_check(stored, embedder, texts, keys)):
        logger.warning("re-embedding the reorder vectors in %s: %s", folder, problem)
        stored = None
    known = dict(stored or {})
    todo = [i for i, key in enumerate(keys) if key not in known]
    for start in range(0, len(todo), CHUNK):
        if stop is not None and stop.is_set():
            if start:
                _write(folder, embedder, list(known), np.stack(list(known.values())))
            raise Stopped(f"{folder}: stopped after embedding {start} of {len(todo)} documents")
        part = todo[start : start + CHUNK]
        embedded = embedder.embed([texts[i] for i in part])
        known.update(zip([keys[i] for i in part], embedded, strict=True))
    vectors = np.zeros((len(keys), embedder.dim), dtype=np.float32)
    for i, key in enumerate(keys):
        vectors[i] = known[key]
    if stored is None or todo or list(stored) != keys:
        _write(folder, embedder, keys, vectors)
    return vectors, len(todo)


def _read(folder: Path, embedder: Embedder) -> dict[str, np.ndarray] | None:
    """The stored ``{text key: vector}`` when the folder holds this model's intact file."""
    try:
        manifest: dict[str, Any] = json.loads((folder / "manifest.json").read_text("utf-8"))
        if manifest.get("format") != FORMAT or manifest.get("model") != embedder.model:
            return None
        path = folder / "vectors.npy"
        if sha256_file(path) != manifest.get("sha256"):
            raise IndexError_(f"{path}: content does not match its manifest")
        matrix = np.load(path, allow_pickle=False)
        keys = list(manifest["keys"])
        if matrix.shape != (len(keys), embedder.dim):
            raise IndexError_(f"{path}: shape {matrix.shape} does not match its manifest")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError_) as exc:
        logger.warning("re-embedding the reorder vectors in %s: %s", folder, exc)
        return None
    return dict(zip(keys, matrix, strict=True))


def _spot_check(
    stored: dict[str, np.ndarray], embedder: Embedder, texts: list[str], keys: list[str]
) -> str | None:
    """Embed a few of ``texts`` whose vectors ``stored`` holds again; the reason when one
    differs from its stored row (tampering), else None."""
    held = [i for i, key in enumerate(keys) if key in stored]
    if not held:
        return None
    picks = random.Random(len(held)).sample(held, min(SPOT_CHECKS, len(held)))
    fresh = embedder.embed([texts[i] for i in picks])
    cos = [float(fresh[j] @ stored[keys[i]]) for j, i in enumerate(picks)]
    if min(cos) < SPOT_MIN_COSINE:
        return f"stored vectors do not match their documents (cosine {min(cos):.4f})"
    return None


def _write(folder: Path, embedder: Embedder, keys: list[str], vectors: np.ndarray) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vectors.npy"
    buf = BytesIO()
    np.save(buf, vectors.astype(np.float32), allow_pickle=False)
    atomic_write(path, buf.getvalue())
    manifest = {
        "format": FORMAT,
        "model": embedder.model,
        "name": embedder.name,
        "sha256": sha256_file(path),
        "keys": keys,
    }
    atomic_write(folder / "manifest.json", json.dumps(manifest) + "\n")
