"""RFC 8785 canonical JSON and the content hashes built on it."""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

from cartograph.errors import CardError


def canonical(obj: Any) -> bytes:
    """RFC 8785 (JCS) canonical bytes of a JSON value."""
    try:
        return rfc8785.dumps(obj)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise CardError(f"value cannot be canonicalised as JSON: {exc}") from exc


def sha256_json(obj: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``obj``."""
    return "sha256:" + hashlib.sha256(canonical(obj)).hexdigest()


def sha256_text(text: str | None) -> str:
    """``sha256:<hex>`` of a UTF-8 string (the empty string for ``None``)."""
    return "sha256:" + hashlib.sha256((text or "").encode("utf-8")).hexdigest()
