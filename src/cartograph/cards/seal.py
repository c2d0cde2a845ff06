"""Seal and verify cards: Ed25519 over the RFC 8785 canonical card without its signature.

Signing is ``Ed25519(sk, canonical(card without "signature"))``; whether the key may sign that
card (trusted, not revoked, inside its window at ``signed_at``) is asked of
:class:`~cartograph.trust.store.TrustStore`. Verification raises
:class:`~cartograph.errors.VerificationError` (:class:`~cartograph.errors.TrustError` for key
trust) and never returns False.

Stored layout: :func:`sealed_bytes` writes the canonical payload and then the signature block as
its last member, so the bytes that were signed are a prefix of the file. :func:`verify_stored`
checks the signature over those bytes as they are (no re-encoding), and falls back to
canonicalising the parsed file when the file was re-formatted by hand; either way what is
verified is exactly what is loaded. :func:`verify_texts` spreads that work over a forked helper
process on large stores (see :mod:`cartograph.cards.verify_pool`).

Key material lives in :mod:`cartograph.trust.keys`, the trust store in
:mod:`cartograph.trust.store`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from cartograph import clock
from cartograph.canonical import canonical, sha256_json
from cartograph.cards.model import Card, Signature
from cartograph.errors import CardError, TrustError, TrustKind, VerificationError
from cartograph.trust.keys import OperatorKey, b64, unb64
from cartograph.trust.store import TrustStore

__all__ = [
    "card_version_digest",
    "sealed_bytes",
    "sign_card",
    "verify_card",
    "verify_payload",
    "verify_stored",
    "verify_texts",
]

_MARK = b',"signature":'
_SIG_FIELDS = frozenset({"alg", "key_id", "value", "signed_at"})


def card_version_digest(card: Card) -> str:
    """Names one version of one card: sha256 of its canonical JSON without the signature (what
    the signature covers). The drift guard, the audit log and stubs record it as ``card_digest``.

    Not :func:`cartograph.index.tool_index.card_set_digest`, which names a whole card set."""
    return sha256_json(card.unsigned_payload())


def sign_card(card: Card, key: OperatorKey, *, signed_at: str | None = None) -> Card:
    """Return ``card`` with a fresh signature block by ``key``."""
    unsigned = card.model_copy(update={"signature": None})
    value = key.private_key.sign(canonical(unsigned.unsigned_payload()))
    sig = Signature(key_id=key.key_id, value=b64(value), signed_at=signed_at or clock.stamp())
    return unsigned.model_copy(update={"signature": sig})


def sealed_bytes(card: Card) -> bytes:
    """The stored form of a signed card: its canonical payload, then ``"signature"`` last."""
    payload = canonical(card.unsigned_payload())
    if card.signature is None:
        return payload + b"\n"
    sig = canonical(card.signature.model_dump(mode="json"))
    return payload[:-1] + _MARK + sig + b"}\n"


def verify_card(card: Card, trust: TrustStore) -> None:
    """Raise :class:`VerificationError` unless ``card`` carries a valid trusted signature."""
    verify_payload(card.identity.server, card.unsigned_payload(), card.signature, trust)


def verify_payload(
    name: str, payload: dict[str, Any], sig: Signature | None, trust: TrustStore
) -> None:
    """Verify ``sig`` over the JSON object ``payload`` (a card without its signature block)."""
    if sig is None:
        raise VerificationError(f"card {name!r} is unsigned; run `cartograph bootstrap` to seal it")
    key = trust.check(f"card {name!r}", sig.key_id, sig.signed_at)
    try:
        key.verify(unb64(sig.value), canonical(payload))
    except ValueError as exc:
        raise VerificationError(
            f"card {name!r}: signature by {sig.key_id} does not match its content "
            "(the card was changed after signing)"
        ) from exc


def _split_sealed(text: bytes) -> tuple[bytes, dict[str, str]] | None:
    """The signed prefix and the signature block of a card in the sealed layout, else None."""
    at = text.rfind(_MARK)
    if at <= 0 or text[:1] != b"{":
        return None
    tail = text[at + len(_MARK) :].rstrip()
    if not tail.endswith(b"}"):
        return None
    try:
        sig = json.loads(tail[:-1])  # exactly one object: trailing members fail here
    except ValueError:
        return None
    if (
        not isinstance(sig, dict)
        or sig.keys() != _SIG_FIELDS
        or sig["alg"] != "Ed25519"
        or not all(isinstance(v, str) for v in sig.values())
    ):
        return None
    return text[:at] + b"}", sig


def verify_stored(text: bytes, trust: TrustStore, *, source: str) -> None:
    """Raise unless the stored card ``text`` carries a valid signature by a key trusted for it.

    Fast path: the sealed layout, verified over the signed prefix as stored. Otherwise (or when
    that fails, to name the reason) the parsed file is canonicalised and verified.
    """
    sealed = _split_sealed(text)
    if sealed is not None:
        signed, sig = sealed
        try:
            key = trust.check(source, sig["key_id"], sig["signed_at"])
            key.verify(unb64(sig["value"]), signed)
            return
        except (TrustError, ValueError):
            pass  # the slow path below names the card and the reason
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CardError(f"{source}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise CardError(f"{source}: not a JSON object")
    identity = data.get("identity")
    name = identity.get("server") if isinstance(identity, dict) else None
    raw_sig = data.get("signature")
    try:
        sig_model = Signature.model_validate(raw_sig) if raw_sig is not None else None
    except ValueError as exc:
        raise VerificationError(f"{source}: the signature block is malformed") from exc
    payload = {k: v for k, v in data.items() if k != "signature"}
    verify_payload(str(name or source), payload, sig_model, trust)


FailureKind = (
    TrustKind | Literal["signature", "malformed", "duplicate", "alias", "clash", "older", "invalid"]
)
"""Why a card was left out or refused: its key (a :class:`TrustError` kind), a bad signature, a
malformed file, a second card for a server, a bad alias record; on import also a name clash or
an older card by the same signer."""

Verdict = tuple[str, FailureKind] | None
"""None when a card verified, else (reason, kind)."""


def verdict_of(text: bytes, trust: TrustStore, source: str) -> Verdict:
    try:
        verify_stored(text, trust, source=source)
    except TrustError as exc:
        return str(exc), exc.kind
    except VerificationError as exc:
        return str(exc), "signature"
    except CardError as exc:
        return str(exc), "malformed"
    return None


def verify_texts(
    texts: Sequence[bytes],
    sources: Sequence[str],
    trust: TrustStore,
    *,
    meanwhile: Callable[[], None] | None = None,
) -> list[Verdict]:
    """A verdict for each stored card text, in order; ``meanwhile`` runs alongside.

    Large stores are split with a forked helper process (see :mod:`cartograph.cards.verify_pool`);
    the parent runs ``meanwhile`` (e.g. model validation) first, then verifies from the end.
    """
    from cartograph.cards.verify_pool import verify_in_parallel

    return verify_in_parallel(texts, sources, trust, verdict_of, meanwhile)
