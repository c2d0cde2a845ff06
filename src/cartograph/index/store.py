"""The workspace's index: load it when it matches the verified cards, else rebuild and save.

:func:`open_index` is what discover, eval and the proxy call. It trusts nothing on disk: the
cards are verified again, the index files are checked against their recorded hashes, the
recorded card digest must match the verified card set, and a few stored vectors are embedded
again and compared. Any mismatch is logged with its reason and the index is rebuilt. With a
shared store (``ws.store``) the same happens in the database (:mod:`cartograph.storage`).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cartograph.cards.model import Card
from cartograph.cards.store import load_verified
from cartograph.errors import ConfigError, IndexError_
from cartograph.index.embedders import Embedder, load_embedder
from cartograph.index.tool_index import ToolIndex, card_digest, read_manifest
from cartograph.index.vector_cache import known_vectors
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

SPOT_CHECKS = 4
SPOT_MIN_COSINE = 0.999


@dataclass(frozen=True)
class IndexStatus:
    """What :func:`open_index` did (``loaded`` or ``rebuilt``, and why), and the verified cards."""

    action: str
    reason: str | None
    skipped_cards: int
    cards: dict[str, Card]


def workspace_embedder_spec(ws: Workspace) -> str | None:
    """The ``embedder`` setting of ``<home>/config.json``, if any."""
    if not ws.config_file.is_file():
        return None
    try:
        data = json.loads(ws.config_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid JSON: {exc}", file=str(ws.config_file)) from exc
    spec = data.get("embedder") if isinstance(data, dict) else None
    return str(spec) if spec else None


def open_index(
    ws: Workspace, embedder: Embedder | None = None, *, rebuild: bool = False
) -> ToolIndex:
    """The index over the workspace's verified cards (loaded if current, else rebuilt)."""
    return open_index_with_status(ws, embedder, rebuild=rebuild)[0]


def open_index_with_status(
    ws: Workspace, embedder: Embedder | None = None, *, rebuild: bool = False
) -> tuple[ToolIndex, IndexStatus]:
    loaded = load_verified(ws)
    for failure in loaded.failures:
        logger.warning("card left out of the index: %s: %s", failure.path.name, failure.reason)
    if not loaded.cards:
        where = ws.cards_dir if ws.store is None else "the shared store (--store)"
        raise IndexError_(
            f"{where}: no card verifies, so there is nothing to index; run "
            "`cartograph bootstrap` (and check `cartograph cards verify`)"
        )
    embedder = embedder or load_embedder(workspace_embedder_spec(ws))
    if ws.store is None:
        index, action, reason = open_file_index(ws, loaded.cards, embedder, rebuild=rebuild)
    else:
        from cartograph.storage import pg_store

        store = pg_store(ws)
        index, action, reason = store.open_index(loaded.cards, embedder, rebuild=rebuild)
        if action != "loaded":
            logger.warning("index %s in %s: %s", action, store.label, reason)
    return index, IndexStatus(action, reason, len(loaded.failures), loaded.cards)


def open_file_index(
    ws: Workspace, cards: dict[str, Card], embedder: Embedder, *, rebuild: bool
) -> tuple[ToolIndex, str, str | None]:
    """The file index in ``<home>/index/`` over ``cards``, loaded if current, else rebuilt."""
    digest = card_digest(cards)
    reason = "asked to rebuild" if rebuild else _why_stale(ws, embedder, digest)
    if reason is None:
        try:
            index = ToolIndex.load(ws.index_dir, embedder)
            reason = spot_check(index)
            if reason is None:
                return index, "loaded", None
        except IndexError_ as exc:
            reason = str(exc)
    logger.warning("rebuilding the index at %s: %s", ws.index_dir, reason)
    index = ToolIndex.build(cards, embedder, known=previous_vectors(ws, embedder))
    index.save(ws.index_dir)
    return index, "rebuilt", reason


def previous_vectors(ws: Workspace, embedder: Embedder) -> dict[str, np.ndarray] | None:
    """The vectors of the index on disk, keyed for reuse, if the same model built it and its
    files and a spot check hold (otherwise nothing is reused)."""
    try:
        old = ToolIndex.load(ws.index_dir, embedder)
    except IndexError_:
        return None
    if old.embedder.model != embedder.model or spot_check(old) is not None:
        return None
    known = known_vectors(embedder.model, [d.dense for d in old.documents], old.tool_vectors)
    known.update(known_vectors(embedder.model, old.server_documents, old.server_vectors))
    return known


def _why_stale(ws: Workspace, embedder: Embedder, digest: str) -> str | None:
    try:
        manifest = read_manifest(ws.index_dir)
    except IndexError_ as exc:
        return str(exc)
    if manifest["card_digest"] != digest:
        return "the verified cards changed since the index was built"
    rec = manifest["embedder"]
    if (rec.get("name"), rec.get("model")) != (embedder.name, embedder.model):
        return f"built with embedder {rec.get('name')} ({rec.get('model')}), now {embedder.name}"
    return None


def spot_check(
    index: ToolIndex, stored: Callable[[list[int]], dict[int, np.ndarray]] | None = None
) -> str | None:
    """Embed a few stored documents again; a stored vector that differs means tampering.

    ``stored`` gives the stored vectors of the picked tool positions (position -> vector; a
    missing one fails the check); by default they are read from ``index.tool_vectors``.
    """
    n = len(index.tool_ids)
    if n == 0:
        return None
    picks = random.Random(index.card_digest).sample(range(n), min(SPOT_CHECKS, n))
    vectors = stored(picks) if stored else {i: index.tool_vectors[i] for i in picks}
    fresh = index.embedder.embed([index.documents[i].dense for i in picks])
    cos = [float(fresh[j] @ vectors[i]) if i in vectors else -1.0 for j, i in enumerate(picks)]
    if min(cos) < SPOT_MIN_COSINE:
        return f"stored vectors do not match their documents (cosine {min(cos):.4f})"
    return None
