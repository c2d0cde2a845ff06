"""Seal and verify cards: Ed25519 over the RFC 8785 canonical card without its signature.

The key id is derived from the raw public key (``ed25519:`` + first 16 hex digits of its
sha256), so anyone holding the public key can recompute it. :func:`verify_card` raises
:class:`~cartograph.errors.VerificationError` and never returns False.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from cartograph.cards.canonical import canonical
from cartograph.cards.model import Card, Signature
from cartograph.errors import KeyError_, VerificationError
from cartograph.upstream.snapshot import utc_now
from cartograph.workspace import Workspace


def key_id_of(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True)
class OperatorKey:
    """The operator's signing key and its id."""

    private_key: Ed25519PrivateKey
    key_id: str

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    @classmethod
    def generate(cls) -> OperatorKey:
        key = Ed25519PrivateKey.generate()
        return cls(key, key_id_of(key.public_key()))

    @classmethod
    def from_private_bytes(cls, raw: bytes) -> OperatorKey:
        key = Ed25519PrivateKey.from_private_bytes(raw)
        return cls(key, key_id_of(key.public_key()))


class TrustStore:
    """Public keys whose signatures are accepted, by key id."""

    def __init__(self, keys: dict[str, Ed25519PublicKey] | None = None) -> None:
        self._keys: dict[str, Ed25519PublicKey] = dict(keys or {})

    def add(self, public_key: Ed25519PublicKey) -> str:
        kid = key_id_of(public_key)
        self._keys[kid] = public_key
        return kid

    def get(self, key_id: str) -> Ed25519PublicKey | None:
        return self._keys.get(key_id)

    def key_ids(self) -> list[str]:
        return sorted(self._keys)

    @classmethod
    def for_workspace(cls, ws: Workspace) -> TrustStore:
        """The operator's own public key plus every ``keys/trusted/*.pub``."""
        store = cls()
        paths = [ws.public_key] if ws.public_key.is_file() else []
        if ws.trusted_dir.is_dir():
            paths += sorted(ws.trusted_dir.glob("*.pub"))
        for path in paths:
            store.add(load_public_key(path))
        return store


def init_key(ws: Workspace, *, force: bool = False) -> OperatorKey:
    """Write a new operator key pair into the workspace (private key mode 0600)."""
    if ws.private_key.exists() and not force:
        raise KeyError_(
            f"{ws.private_key}: an operator key already exists; pass --force to replace it "
            "(cards signed by the old key will stop verifying unless its .pub is in keys/trusted/)"
        )
    ws.keys_dir.mkdir(parents=True, exist_ok=True)
    key = OperatorKey.generate()
    pem = key.private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    tmp = ws.private_key.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    os.chmod(tmp, 0o600)
    tmp.replace(ws.private_key)
    ws.public_key.write_bytes(
        key.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return key


def load_key(ws: Workspace) -> OperatorKey:
    """Load the operator's private key, or explain how to make one."""
    path = ws.private_key
    if not path.is_file():
        raise KeyError_(f"{path}: no operator key; run `cartograph keys init` first")
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise KeyError_(f"{path}: not a readable PEM private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyError_(f"{path}: not an Ed25519 private key")
    return OperatorKey(key, key_id_of(key.public_key()))


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (ValueError, TypeError, OSError) as exc:
        raise KeyError_(f"{path}: not a readable PEM public key: {exc}") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise KeyError_(f"{path}: not an Ed25519 public key")
    return key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_card(card: Card, key: OperatorKey, *, signed_at: str | None = None) -> Card:
    """Return ``card`` with a fresh signature block by ``key``."""
    unsigned = card.model_copy(update={"signature": None})
    value = key.private_key.sign(canonical(unsigned.unsigned_payload()))
    sig = Signature(key_id=key.key_id, value=_b64(value), signed_at=signed_at or utc_now())
    return unsigned.model_copy(update={"signature": sig})


def verify_card(card: Card, trust: TrustStore) -> None:
    """Raise :class:`VerificationError` unless ``card`` carries a valid trusted signature."""
    verify_payload(card.identity.server, card.unsigned_payload(), card.signature, trust)


def verify_payload(
    name: str, payload: dict[str, Any], sig: Signature | None, trust: TrustStore
) -> None:
    """Verify ``sig`` over the JSON object ``payload`` (a card without its signature block).

    The store calls this on the parsed file itself, so what is verified is exactly what is on
    disk, and no model round trip is paid for.
    """
    if sig is None:
        raise VerificationError(f"card {name!r} is unsigned; run `cartograph bootstrap` to seal it")
    public = trust.get(sig.key_id)
    if public is None:
        raise VerificationError(
            f"card {name!r} is signed by unknown key {sig.key_id}; trusted keys: "
            f"{', '.join(trust.key_ids()) or 'none'}"
        )
    try:
        raw = _unb64(sig.value)
        public.verify(raw, canonical(payload))
    except (InvalidSignature, ValueError) as exc:
        raise VerificationError(
            f"card {name!r}: signature by {sig.key_id} does not match its content "
            "(the card was changed after signing)"
        ) from exc
