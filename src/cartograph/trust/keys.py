"""Ed25519 key material: key ids, the operator key pair on disk, PEM and base64url helpers.

The key id is derived from the raw public key (``ed25519:`` + first 16 hex digits of its
sha256), so anyone holding the public key can recompute it. This module knows files and bytes
only; which keys are trusted, and when, is :mod:`cartograph.trust.store`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cartograph.errors import KeyError_
from cartograph.files import atomic_write
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

# An Ed25519 SubjectPublicKeyInfo is this fixed DER prefix and the raw 32-byte key (RFC 8410).
_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
_PEM_BEGIN, _PEM_END = b"-----BEGIN PUBLIC KEY-----", b"-----END PUBLIC KEY-----"

try:  # libsodium (PyNaCl) verifies Ed25519 in about half the time OpenSSL takes here, and
    # loads without the ``cryptography`` package (about 8 MB resident that `serve` never needs)
    from nacl.bindings import crypto_sign_open as _sodium_open
    from nacl.exceptions import BadSignatureError as _SodiumBadSignature
except ImportError:  # pragma: no cover - PyNaCl is a dependency; OpenSSL is the fallback
    _sodium_open = None
    _SodiumBadSignature = ValueError


class SignatureMismatch(ValueError):
    """An Ed25519 signature that does not verify (both backends raise this one)."""


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An Ed25519 public key as its raw 32 bytes: what verification and the trust store need.

    Verifying, key ids, PEM and base64url never import ``cryptography``, so a serving proxy
    (which only verifies) does not load it; signing and private keys do.
    """

    raw: bytes

    def __post_init__(self) -> None:
        if len(self.raw) != 32:
            raise ValueError(f"an Ed25519 public key is 32 bytes, not {len(self.raw)}")

    @classmethod
    def of(cls, key: PublicKey | Any) -> PublicKey:
        """``key`` as a :class:`PublicKey` (also from a ``cryptography`` Ed25519PublicKey)."""
        if isinstance(key, PublicKey):
            return key
        from cryptography.hazmat.primitives import serialization

        return cls(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))

    @property
    def key_id(self) -> str:
        return "ed25519:" + hashlib.sha256(self.raw).hexdigest()[:16]

    def pem(self) -> bytes:
        body = base64.encodebytes(_SPKI_PREFIX + self.raw).strip()
        return _PEM_BEGIN + b"\n" + body + b"\n" + _PEM_END + b"\n"

    def verify(self, signature: bytes, message: bytes, *, backend: str = "auto") -> None:
        """Raise :class:`SignatureMismatch` unless ``signature`` is this key's over ``message``.

        libsodium when PyNaCl is there (``backend="auto"``), else OpenSSL; both follow RFC
        8032, and libsodium also refuses small-order keys and non-canonical encodings, which no
        honest signer produces."""
        if backend == "openssl" or _sodium_open is None:
            return _openssl_verify(self.raw, signature, message)
        if len(signature) != 64:
            raise SignatureMismatch("an Ed25519 signature is 64 bytes")
        try:
            _sodium_open(signature + message, self.raw)
        except _SodiumBadSignature:
            raise SignatureMismatch("signature does not verify") from None


def _openssl_verify(raw: bytes, signature: bytes, message: bytes) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
    except InvalidSignature:
        raise SignatureMismatch("signature does not verify") from None


def key_id_of(public_key: PublicKey | Any) -> str:
    return PublicKey.of(public_key).key_id


def raw_public(public_key: PublicKey | Any) -> bytes:
    return PublicKey.of(public_key).raw


def public_pem(public_key: PublicKey | Any) -> bytes:
    return PublicKey.of(public_key).pem()


def b64(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_from_b64(text: str, *, source: str) -> PublicKey:
    """An Ed25519 public key from its raw 32 bytes in base64url (as the trust store keeps it)."""
    try:
        return PublicKey(unb64(text))
    except (ValueError, binascii.Error) as exc:
        raise KeyError_(f"{source}: not a raw Ed25519 public key: {exc}") from exc


@dataclass(frozen=True)
class OperatorKey:
    """The operator's signing key and its id."""

    private_key: Ed25519PrivateKey
    key_id: str

    @property
    def public_key(self) -> PublicKey:
        return PublicKey.of(self.private_key.public_key())

    @classmethod
    def generate(cls) -> OperatorKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.generate()
        return cls(key, key_id_of(key.public_key()))

    @classmethod
    def from_private_bytes(cls, raw: bytes) -> OperatorKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.from_private_bytes(raw)
        return cls(key, key_id_of(key.public_key()))


def write_key_pair(ws: Workspace, key: OperatorKey) -> None:
    """Install ``key`` as the operator key: private key (mode 0600, atomic) then public key."""
    from cryptography.hazmat.primitives import serialization

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
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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


def load_public_key(path: Path) -> PublicKey:
    """The Ed25519 public key of a PEM file: ours (SubjectPublicKeyInfo) read directly, any other
    PEM through ``cryptography``, which names what is wrong with it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KeyError_(f"{path}: not a readable PEM public key: {exc}") from exc
    quick = _spki_key(data)
    if quick is not None:
        return quick
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise KeyError_(f"{path}: not a readable PEM public key: {exc}") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise KeyError_(f"{path}: not an Ed25519 public key")
    return PublicKey.of(key)


def _spki_key(data: bytes) -> PublicKey | None:
    """The key of a PEM holding exactly one Ed25519 SubjectPublicKeyInfo, else None."""
    text = data.strip()
    if not (text.startswith(_PEM_BEGIN) and text.endswith(_PEM_END)):
        return None
    body = text[len(_PEM_BEGIN) : -len(_PEM_END)]
    try:
        der = base64.b64decode(b"".join(body.split()), validate=True)
    except (ValueError, binascii.Error):
        return None
    if len(der) != len(_SPKI_PREFIX) + 32 or not der.startswith(_SPKI_PREFIX):
        return None
    return PublicKey(der[len(_SPKI_PREFIX) :])
