"""Opening the index: load it when it matches the verified cards, else rebuild it.

:func:`open_index` is what discover, eval, Rift and the proxy call, with the store their caller
opened (:func:`cartograph.storage.open_store`; this module never asks which backend it is). It
trusts nothing stored: the cards are verified again (unless the caller hands in the ones it has
just verified: the proxy's catalog), and the store's index must match the
verified card set and pass a spot check (a few stored vectors are embedded again and compared).
Any mismatch is logged with its reason and the index is rebuilt. :func:`open_file_index` is the
file backend's side: ``<home>/index/``, its files checked against their recorded hashes.
"""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from cartograph.cards.model import Card
from cartograph.errors import IndexError_
from cartograph.index.adapt import adapted_dir, documents_digest, load_adapted, read_adapted
from cartograph.index.documents import card_documents
from cartograph.index.embedders import DEFAULT_SPEC, SPEC_ENV, Embedder, load_embedder
from cartograph.index.manifest import MANIFEST, card_set_digest, read_manifest
from cartograph.index.tool_index import ToolIndex
from cartograph.index.vector_cache import known_vectors
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace, read_settings

if TYPE_CHECKING:
    from cartograph.cards.codec import LoadedCards

logger = logging.getLogger(__name__)

IndexAction = Literal["loaded", "rebuilt", "updated"]
"""What opening the index did: loaded as stored, rebuilt whole, or (shared store) updated."""

SPOT_CHECKS = 4
SPOT_MIN_COSINE = 0.999


class IndexStore(Protocol):
    """What opening the index needs of the store (:class:`cartograph.storage.Store` is one)."""

    label: str
    cards_where: str

    def load_verified(
        self, trust: TrustStore | None = None, *, compact: bool = False
    ) -> LoadedCards: ...

    def open_index(
        self, cards: Mapping[str, Card], embedder: Embedder, *, rebuild: bool
    ) -> tuple[ToolIndex, IndexAction, str | None]: ...


@dataclass(frozen=True)
class IndexStatus:
    """What :func:`open_index` did (``loaded`` or ``rebuilt``, and why), and the verified cards."""

    action: IndexAction
    reason: str | None
    skipped_cards: int
    cards: Mapping[str, Card]


def workspace_embedder_spec(ws: Workspace) -> str | None:
    """The ``embedder`` setting of ``<home>/config.json``, if any."""
    return read_settings(ws).embedder or None


def open_index(
    ws: Workspace, store: IndexStore, embedder: Embedder | None = None, *, rebuild: bool = False
) -> ToolIndex:
    """The index over the verified cards of ``store`` (loaded if current, else rebuilt).

    ``ws`` is the home the store was opened from: its trust store verifies the cards, and its
    ``config.json`` names the embedder when none is given.
    """
    return open_index_with_status(ws, store, embedder, rebuild=rebuild)[0]


def open_index_with_status(
    ws: Workspace,
    store: IndexStore,
    embedder: Embedder | None = None,
    *,
    rebuild: bool = False,
    cards: Mapping[str, Card] | None = None,
) -> tuple[ToolIndex, IndexStatus]:
    """:func:`open_index` and what it did. ``cards``: the verified cards, when the caller has
    just verified them (the proxy's catalog); else they are loaded and verified here."""
    if cards is None:
        loaded = verified_cards(ws, store)
        cards, skipped = loaded.cards, len(loaded.failures)
    else:
        skipped = 0
    if not cards:
        raise IndexError_(
            f"{store.cards_where}: no card verifies, so there is nothing to index; run "
            "`cartograph bootstrap` (and check `cartograph cards verify`)"
        )
    embedder = embedder or workspace_embedder(ws.root, workspace_embedder_spec(ws), cards)
    index, action, reason = store.open_index(cards, embedder, rebuild=rebuild)
    return index, IndexStatus(action, reason, skipped, cards)


def verified_cards(ws: Workspace, store: IndexStore) -> LoadedCards:
    """The store's cards verified against ``ws``'s trust store; each failure logged."""
    loaded = store.load_verified(TrustStore.for_workspace(ws))
    for failure in loaded.failures:
        logger.warning("card left out of the index: %s: %s", failure.path.name, failure.reason)
    return loaded


def open_file_index(
    root: Path, cards: Mapping[str, Card], embedder: Embedder, *, rebuild: bool
) -> tuple[ToolIndex, IndexAction, str | None]:
    """The file index in ``root`` over ``cards``, loaded if current, else rebuilt and saved."""
    digest = card_set_digest(cards)
    reason = "asked to rebuild" if rebuild else _why_stale(root, embedder, digest)
    if reason is None:
        try:
            index = ToolIndex.load(root, embedder)
            reason = spot_check(index)
            if reason is None:
                return index, "loaded", None
        except IndexError_ as exc:
            reason = str(exc)
    if rebuild or not (root / MANIFEST).is_file():  # asked for, or the first build: no news
        logger.info("building the index at %s: %s", root, reason)
    else:
        logger.warning("rebuilding the index at %s: %s", root, reason)
    index = ToolIndex.build(cards, embedder, known=previous_vectors(root, embedder))
    index.save(root)
    return index, "rebuilt", reason


def previous_vectors(root: Path, embedder: Embedder) -> dict[str, np.ndarray] | None:
    """The vectors of the index in ``root``, keyed for reuse, if the same model built it and its
    files and a spot check hold (otherwise nothing is reused)."""
    try:
        old = ToolIndex.load(root, embedder)
    except IndexError_:
        return None
    if old.embedder.model != embedder.model or spot_check(old) is not None:
        return None
    known = known_vectors(embedder.model, [d.dense for d in old.documents], old.tool_vectors)
    known.update(known_vectors(embedder.model, old.server_documents, old.server_vectors))
    return known


def _why_stale(root: Path, embedder: Embedder, digest: str) -> str | None:
    try:
        manifest = read_manifest(root)
    except IndexError_ as exc:
        return str(exc)
    if manifest["card_digest"] != digest:
        return "the verified cards changed since the index was built"
    rec = manifest["embedder"]
    if (rec.get("name"), rec.get("model")) != (embedder.name, embedder.model):
        return (
            f"built with embedder {rec.get('name')} ({rec.get('model')}), now {embedder.name} "
            f"({embedder.model})"
        )
    return None


def spot_check(index: ToolIndex) -> str | None:
    """Embed a few stored documents again; a stored vector that differs means tampering.

    The stored vectors of the picked tool positions come from the index's vector source (a
    missing one fails the check).
    """
    n = len(index.tool_ids)
    if n == 0:
        return None
    picks = random.Random(index.card_set_digest).sample(range(n), min(SPOT_CHECKS, n))
    vectors = index.vectors.stored(picks)
    fresh = index.embedder.embed([index.documents[i].dense for i in picks])
    cos = [float(fresh[j] @ vectors[i]) if i in vectors else -1.0 for j, i in enumerate(picks)]
    if min(cos) < SPOT_MIN_COSINE:
        return f"stored vectors do not match their documents (cosine {min(cos):.4f})"
    return None


def workspace_embedder(home: Path, spec: str | None, cards: Mapping[str, Card]):
    """The embedder an index over ``cards`` opens with: ``spec`` when the operator named one
    (config.json or ``$CARTOGRAPH_EMBEDDER``), else the adapted model while it was tuned on these
    cards' documents, else the shipped default; a stale adapted model is left with a warning."""
    if spec or os.environ.get(SPEC_ENV):
        return load_embedder(spec)
    adapted = read_adapted(adapted_dir(home))
    if adapted is None:
        return load_embedder()
    if adapted.digest != documents_digest(card_documents(cards)):
        logger.warning(
            "the catalog-adapted encoder in %s was tuned on other cards; discover uses the "
            "shipped model %s until you run `cartograph index tune` again",
            adapted.folder,
            DEFAULT_SPEC,
        )
        return load_embedder()
    return load_adapted(adapted)
