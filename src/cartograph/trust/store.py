"""The trust store: which public keys may sign cards here, and over which window of time.

Each trusted key has an id, a name, an origin (``operator`` for this workspace's own keys,
``peer`` for another operator's, ``legacy`` for a bare ``keys/trusted/*.pub``) and a validity
window ``[not_before, not_after]`` judged against the card's ``signature.signed_at``. Revoked
keys (the signed list of :mod:`cartograph.trust.revocation`) are trusted for nothing.

On disk, under ``<home>/keys/``::

    trust.json                 cartograph.trust/1: the keys with names and windows, and the
                               serial of the newest revocation list issued here (rollback anchor)
    trusted/revocations.json   cartograph.revocations/1, signed by an operator key
    trusted/*.pub              legacy PEM public keys: trusted with an open window
    operator.pub               a key that trust.json does not list (a workspace made before it)
                               is trusted as the operator's with an open window
The operator key's life cycle (init, rotate) and trusting a peer's key are in
:mod:`cartograph.trust.lifecycle`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cartograph import clock
from cartograph.errors import KeyError_, TrustError, VerificationError
from cartograph.files import atomic_write
from cartograph.trust.keys import (
    Verifier,
    b64,
    key_id_of,
    load_public_key,
    public_from_b64,
    raw_public,
)
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

TRUST_FORMAT = "cartograph.trust/1"
FUTURE_SKEW = timedelta(minutes=5)
"""A card may claim a signing time this far ahead of the local clock, no further."""


def trust_file(ws: Workspace) -> Path:
    return ws.keys_dir / "trust.json"


@dataclass(frozen=True)
class TrustedKey:
    """One public key this workspace accepts signatures from, and when."""

    key_id: str
    name: str
    public_key: Ed25519PublicKey
    origin: str = "peer"
    not_before: datetime | None = None
    not_after: datetime | None = None
    added_at: str | None = None

    @cached_property
    def _verifier(self) -> Verifier:
        return Verifier(self.public_key)

    def verify(self, signature: bytes, message: bytes) -> None:
        """Raise ``InvalidSignature`` unless ``signature`` is this key's over ``message``."""
        self._verifier.verify(signature, message)

    def window(self) -> str:
        start = clock.format_time(self.not_before) if self.not_before else "-inf"
        end = clock.format_time(self.not_after) if self.not_after else "+inf"
        return f"[{start}, {end}]"

    def to_json(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "name": self.name,
            "public_key": b64(raw_public(self.public_key)),
            "origin": self.origin,
            "not_before": clock.format_time(self.not_before) if self.not_before else None,
            "not_after": clock.format_time(self.not_after) if self.not_after else None,
            "added_at": self.added_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str) -> TrustedKey:
        try:
            public = public_from_b64(str(data["public_key"]), source=source)
            entry = cls(
                key_id=str(data["key_id"]),
                name=str(data.get("name") or data["key_id"]),
                public_key=public,
                origin=str(data.get("origin") or "peer"),
                not_before=clock.parse(data["not_before"]) if data.get("not_before") else None,
                not_after=clock.parse(data["not_after"]) if data.get("not_after") else None,
                added_at=data.get("added_at"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise KeyError_(f"{source}: a key entry is malformed: {exc!r}") from exc
        if key_id_of(public) != entry.key_id:
            raise KeyError_(
                f"{source}: entry {entry.key_id} holds the public key of {key_id_of(public)}"
            )
        return entry


@dataclass(frozen=True)
class Revocation:
    """A key that must not be trusted for anything, whatever its cards' signing times."""

    key_id: str
    revoked_at: str
    reason: str = ""


class TrustStore:
    """Trusted keys by id, the revocations that override them, and any fault that voids both.

    ``fault`` is set when the trust material itself cannot be relied on (a tampered, missing or
    rolled-back revocation list, an unreadable trust.json): then :meth:`check` refuses every key,
    so a store that cannot tell what is revoked trusts nothing rather than everything.
    """

    def __init__(self, keys: dict[str, Ed25519PublicKey] | None = None) -> None:
        self._entries: dict[str, TrustedKey] = {}
        self.revoked: dict[str, Revocation] = {}
        self.fault: str | None = None
        self.revocation_serial = 0
        self.revocation_signer: str | None = None
        self._times: dict[str, float] = {}
        for public in (keys or {}).values():
            self.add(public)

    def add(
        self,
        public_key: Ed25519PublicKey,
        *,
        name: str | None = None,
        origin: str = "peer",
        not_before: datetime | None = None,
        not_after: datetime | None = None,
    ) -> str:
        kid = key_id_of(public_key)
        self.put(TrustedKey(kid, name or kid, public_key, origin, not_before, not_after))
        return kid

    def put(self, entry: TrustedKey) -> None:
        self._entries[entry.key_id] = entry

    def get(self, key_id: str) -> Ed25519PublicKey | None:
        """The public key with that id, trusted or not at any given time (see :meth:`check`)."""
        entry = self._entries.get(key_id)
        return entry.public_key if entry else None

    def entry(self, key_id: str) -> TrustedKey | None:
        return self._entries.get(key_id)

    def entries(self) -> list[TrustedKey]:
        return [self._entries[k] for k in sorted(self._entries)]

    def key_ids(self) -> list[str]:
        return sorted(self._entries)

    def revoke(self, revocation: Revocation) -> None:
        self.revoked[revocation.key_id] = revocation

    def state(self, key_id: str, at: datetime | None = None) -> str:
        """``revoked``, ``expired``, ``not-yet-valid``, ``valid`` or ``unknown`` at ``at``."""
        entry = self._entries.get(key_id)
        if key_id in self.revoked:
            return "revoked"
        if entry is None:
            return "unknown"
        at = at or clock.now()
        if entry.not_after is not None and at > entry.not_after:
            return "expired"
        if entry.not_before is not None and at < entry.not_before:
            return "not-yet-valid"
        return "valid"

    def check(self, name: str, key_id: str, signed_at: str) -> TrustedKey:
        """The trusted key for a signature by ``key_id`` at ``signed_at``, or :class:`TrustError`.

        ``name`` is what was signed (a card's server), for the message.
        """
        if self.fault is not None:
            raise TrustError(
                f"{name}: no key is trusted because {self.fault}", kind="revocation-list"
            )
        revocation = self.revoked.get(key_id)
        if revocation is not None:
            why = f" ({revocation.reason})" if revocation.reason else ""
            raise TrustError(
                f"{name} is signed by key {key_id}, revoked at {revocation.revoked_at}{why}; "
                "regenerate it (`cartograph bootstrap`) or get it again from a trusted signer",
                kind="revoked",
                key_id=key_id,
            )
        entry = self._entries.get(key_id)
        if entry is None:
            raise TrustError(
                f"{name} is signed by unknown key {key_id}; trusted keys: "
                f"{', '.join(self.key_ids()) or 'none'} (add the signer's public key with "
                "`cartograph keys trust FILE` if you trust it)",
                kind="unknown",
                key_id=key_id,
            )
        when = self._epoch(name, signed_at)
        if when > time.time() + FUTURE_SKEW.total_seconds():
            raise TrustError(
                f"{name} claims to be signed at {signed_at}, in the future; check the clocks "
                f"of this machine and of the signer ({key_id})",
                kind="future",
                key_id=key_id,
            )
        if entry.not_after is not None and when > entry.not_after.timestamp():
            raise TrustError(
                f"{name} was signed at {signed_at} by key {key_id} ({entry.name}), after the "
                f"key's window {entry.window()} ended; re-sign it with the current key "
                "(`cartograph cards resign`)",
                kind="expired",
                key_id=key_id,
            )
        if entry.not_before is not None and when < entry.not_before.timestamp():
            raise TrustError(
                f"{name} claims to be signed at {signed_at} by key {key_id} ({entry.name}), "
                f"before the key's window {entry.window()} began",
                kind="not-yet-valid",
                key_id=key_id,
            )
        return entry

    def _epoch(self, name: str, signed_at: str) -> float:
        """``signed_at`` as a POSIX time (cached: a store's cards often share one)."""
        when = self._times.get(signed_at)
        if when is None:
            try:
                when = clock.parse(signed_at).timestamp()
            except ValueError:
                raise VerificationError(
                    f"{name}: signing time {signed_at!r} is not an ISO 8601 time"
                ) from None
            self._times[signed_at] = when
        return when

    @classmethod
    def for_workspace(cls, ws: Workspace) -> TrustStore:
        """trust.json, the legacy ``keys/trusted/*.pub`` and operator.pub, then revocations."""
        from cartograph.trust.revocation import apply_revocations

        store = cls()
        try:
            doc = read_trust_doc(ws)
            for item in doc["keys"]:
                store.put(TrustedKey.from_json(item, source=str(trust_file(ws))))
            legacy = [ws.public_key] if ws.public_key.is_file() else []
            if ws.trusted_dir.is_dir():
                legacy += sorted(ws.trusted_dir.glob("*.pub"))
            for path in legacy:
                public = load_public_key(path)
                kid = key_id_of(public)
                if store.entry(kid) is None:
                    own = path == ws.public_key
                    store.put(
                        TrustedKey(
                            kid,
                            "operator" if own else path.stem,
                            public,
                            "operator" if own else "legacy",
                        )
                    )
        except KeyError_ as exc:
            store.fault = f"the trust store cannot be read: {exc}"
            logger.error("%s", store.fault)
            return store
        apply_revocations(ws, store, anchor=int(doc.get("revocation_serial") or 0))
        return store


def read_trust_doc(ws: Workspace) -> dict[str, Any]:
    """The parsed trust.json (an empty one when absent); :class:`KeyError_` when unreadable."""
    path = trust_file(ws)
    if not path.is_file():
        return {"format": TRUST_FORMAT, "revocation_serial": 0, "keys": []}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KeyError_(f"{path}: not readable JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != TRUST_FORMAT:
        raise KeyError_(f"{path}: not a {TRUST_FORMAT} document")
    if not isinstance(doc.get("keys"), list):
        raise KeyError_(f"{path}: 'keys' must be a list")
    return doc


def write_trust_doc(ws: Workspace, doc: dict[str, Any]) -> None:
    path = trust_file(ws)
    doc["keys"] = sorted(doc["keys"], key=lambda item: item["key_id"])
    atomic_write(path, json.dumps(doc, indent=2, sort_keys=True) + "\n")


def set_entry(doc: dict[str, Any], entry: TrustedKey) -> None:
    """Put ``entry`` into a trust.json document, replacing any entry with its key id."""
    doc["keys"] = [k for k in doc["keys"] if k.get("key_id") != entry.key_id]
    doc["keys"].append(entry.to_json())
