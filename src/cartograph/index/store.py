"""The workspace's index: load it when it matches the verified cards, else rebuild and save.

:func:`open_index` is what discover, eval and the proxy call. It trusts nothing on disk: the
cards are verified again (unless the caller hands in the ones it has just verified), the index
files are checked against their recorded hashes, the recorded card digest must match the
verified card set, and a few stored vectors are embedded again and compared. Any mismatch is
logged with its reason and the index is rebuilt. With a shared store (``ws.store``) the same
happens in the database (:mod:`cartograph.storage`).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from cartograph.cards.model import Card
from cartograph.cards.store import load_verified
from cartograph.errors import IndexError_
from cartograph.index.embedders import Embedder, load_embedder
from cartograph.index.tool_index import ToolIndex, card_set_digest, read_manifest
from cartograph.workspace import Workspace, read_settings

logger = logging.getLogger(__name__)

IndexAction = Literal["loaded", "rebuilt", "updated"]
"""What opening the index did: loaded as stored, rebuilt whole, or (shared store) updated."""

SPOT_CHECKS = 4
SPOT_MIN_COSINE = 0.999


@dataclass(frozen=True)
class IndexStatus:
    """What :func:`open_index` did (``loaded`` or ``rebuilt``, and why), and the verified cards."""

    action: IndexAction
    reason: str | None
    skipped_cards: int
    cards: dict[str, Card]


def workspace_embedder_spec(ws: Workspace) -> str | None:
    """The ``embedder`` setting of ``<home>/config.json``, if any."""
    return read_settings(ws).embedder or None


def open_index(
    ws: Workspace, embedder: Embedder | None = None, *, rebuild: bool = False
) -> ToolIndex:
    """The index over the workspace's verified cards (loaded if current, else rebuilt)."""
    return open_index_with_status(ws, embedder, rebuild=rebuild)[0]


def open_index_with_status(
    ws: Workspace,
    embedder: Embedder | None = None,
    *,
    rebuild: bool = False,
    cards: dict[str, Card] | None = None,
) -> tuple[ToolIndex, IndexStatus]:
    """:func:`open_index` and what it did. ``cards``: the verified cards, when the caller
    has just verified them (the proxy's catalog); else they are loaded and verified here."""
    if cards is None:
        loaded = load_verified(ws)
        for failure in loaded.failures:
            logger.warning("card left out of the index: %s: %s", failure.path.name, failure.reason)
        cards, skipped = loaded.cards, len(loaded.failures)
    else:
        skipped = 0
    if not cards:
        where = ws.cards_dir if ws.store is None else "the shared store (--store)"
        raise IndexError_(
            f"{where}: no card verifies, so there is nothing to index; run "
            "`cartograph bootstrap` (and check `cartograph cards verify`)"
        )
    embedder = embedder or load_embedder(workspace_embedder_spec(ws))
    if ws.store is None:
        index, action, reason = open_file_index(ws, cards, embedder, rebuild=rebuild)
    else:
        from cartograph.storage import pg_store

        store = pg_store(ws)
        index, action, reason = store.open_index(cards, embedder, rebuild=rebuild)
        if action != "loaded":
            logger.warning("index %s in %s: %s", action, store.label, reason)
    return index, IndexStatus(action, reason, skipped, cards)


def open_file_index(
    ws: Workspace, cards: dict[str, Card], embedder: Embedder, *, rebuild: bool
) -> tuple[ToolIndex, IndexAction, str | None]:
    """The file index in ``<home>/index/`` over ``cards``, loaded if current, else rebuilt."""
    digest = card_set_digest(cards)
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
    index = ToolIndex.build(cards, embedder)
    index.save(ws.index_dir)
    return index, "rebuilt", reason


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
    picks = random.Random(index.card_set_digest).sample(range(n), min(SPOT_CHECKS, n))
    vectors = stored(picks) if stored else {i: index.tool_vectors[i] for i in picks}
    fresh = index.embedder.embed([index.documents[i].dense for i in picks])
    cos = [float(fresh[j] @ vectors[i]) if i in vectors else -1.0 for j, i in enumerate(picks)]
    if min(cos) < SPOT_MIN_COSINE:
        return f"stored vectors do not match their documents (cosine {min(cos):.4f})"
    return None
