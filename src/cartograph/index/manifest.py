"""What names an index on disk: the digest of the card set it was built from, the manifest's
format and its check, the embedder spec it records, and the file hashes it lists."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cartograph.canonical import canonical
from cartograph.cards.model import Card
from cartograph.errors import IndexError_
from cartograph.files import file_sha256
from cartograph.index.embedders import Embedder

INDEX_FORMAT = "cartograph.index/2"
DOCUMENTS_VERSION = 3  # bump when documents.py composes text differently
MANIFEST = "manifest.json"


def card_set_digest(cards: Mapping[str, Card]) -> str:
    """Names the card set an index is built from: every card's signed content and signature,
    plus the version of the document composition (stored as the manifest's ``card_digest``).

    The sha256 of the RFC 8785 form of ``{"cards": {name: card, ...}, "documents_version": V}``,
    hashed one card at a time, so a compact card shelf never holds more than one card parsed.
    Not :func:`cartograph.cards.seal.card_version_digest`, which names one card's content."""
    digest = hashlib.sha256(b'{"cards":{')
    for position, name in enumerate(sorted(cards, key=_utf16)):
        if position:
            digest.update(b",")
        digest.update(canonical(name) + b":" + canonical(cards[name].stored_payload()))
    digest.update(b'},"documents_version":' + canonical(DOCUMENTS_VERSION) + b"}")
    return "sha256:" + digest.hexdigest()


def _utf16(name: str) -> bytes:
    return name.encode("utf-16-be")  # RFC 8785 sorts keys by UTF-16 code units


def embedder_spec(embedder: Embedder) -> str:
    """The spec string :func:`load_embedder` needs to load this embedder again."""
    return str(getattr(embedder, "spec", None) or embedder.name)


def sha256_file(path: Path) -> str:
    """``sha256:`` and the file's hex digest, as manifests record it."""
    return "sha256:" + file_sha256(path)


def read_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.is_file():
        raise IndexError_(f"{root}: no index here; run `cartograph index build`")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexError_(f"{path}: unreadable manifest ({exc}); rebuild the index") from exc
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        raise IndexError_(f"{path}: not a {INDEX_FORMAT} manifest; rebuild the index")
    for key in ("files", "embedder", "tools", "servers", "card_digest", "server_documents"):
        if key not in data:
            raise IndexError_(f"{path}: field {key!r} is missing; rebuild the index")
    return data
