"""Ed25519 key material: key ids, the operator key pair on disk, PEM and base64url helpers.

The key id is derived from the raw public key (``ed25519:`` + first 16 hex digits of its
sha256), so anyone holding the public key can recompute it. This module knows files and bytes
only; which keys are trusted, and when, is :mod:`cartograph.trust.store`.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from cartograph.errors import KeyError_
from cartograph.files import atomic_write
from cartograph.workspace import Workspace

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

try:  # libsodium (PyNaCl) verifies Ed25519 in about half the time OpenSSL takes here
    from nacl.bindings import crypto_sign_open as _sodium_open
    from nacl.exceptions import BadSignatureError as _SodiumBadSignature
except ImportError:  # pragma: no cover - PyNaCl is a dependency; OpenSSL is the fallback
    _sodium_open = None
    _SodiumBadSignature = InvalidSignature


def key_id_of(public_key: Ed25519PublicKey) -> str:
    return "ed25519:" + hashlib.sha256(raw_public(public_key)).hexdigest()[:16]


def raw_public(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


class Verifier:
    """Ed25519 verification for one public key: libsodium when PyNaCl is there, else OpenSSL.

    Both follow RFC 8032; libsodium also refuses small-order keys and non-canonical encodings,
    which no honest signer produces. :meth:`verify` raises ``InvalidSignature``, as
    cryptography's does.
    """

    __slots__ = ("public_key", "raw")

    def __init__(self, public_key: Ed25519PublicKey, *, backend: str = "auto") -> None:
        self.public_key = public_key
        use_sodium = backend == "sodium" or (backend == "auto" and _sodium_open is not None)
        self.raw = raw_public(public_key) if use_sodium else None

    def verify(self, signature: bytes, message: bytes) -> None:
        if self.raw is None or _sodium_open is None or len(signature) != 64:
            self.public_key.verify(signature, message)
            return
        try:
            _sodium_open(signature + message, self.raw)
        except _SodiumBadSignature:
            raise InvalidSignature from None


def public_pem(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def b64(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_from_b64(text: str, *, source: str) -> Ed25519PublicKey:
    """An Ed25519 public key from its raw 32 bytes in base64url (as the trust store keeps it)."""
    try:
        return Ed25519PublicKey.from_public_bytes(unb64(text))
    except ValueError as exc:
        raise KeyError_(f"{source}: not a raw Ed25519 public key: {exc}") from exc


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


def write_key_pair(ws: Workspace, key: OperatorKey) -> None:
    """Install ``key`` as the operator key: private key (mode 0600, atomic) then public key."""
    ws.keys_dir.mkdir(parents=True, exist_ok=True)
    pem = key.private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    atomic_write(ws.private_key, pem, mode=0o600)
    atomic_write(ws.public_key, public_pem(key.public_key))


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
