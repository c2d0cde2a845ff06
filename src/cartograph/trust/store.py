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
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cartograph import clock
from cartograph.errors import ConfigError, KeyError_, TrustError, VerificationError
from cartograph.files import atomic_write
from cartograph.trust.keys import (
    PublicKey,
    b64,
    key_id_of,
    load_public_key,
    public_from_b64,
    raw_public,
)
from cartograph.trust.revocation import Revocation, apply_revocations
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

TRUST_FORMAT = "cartograph.trust/1"
FUTURE_SKEW = timedelta(minutes=5)
"""A card may claim a signing time this far ahead of the local clock, no further."""


Origin = Literal["operator", "peer", "legacy"]
"""Whose key: this workspace's own, another operator's, or a bare ``keys/trusted/*.pub``."""
KeyState = Literal["revoked", "expired", "not-yet-valid", "valid", "unknown"]


def trust_file(ws: Workspace) -> Path:
    return ws.keys_dir / "trust.json"


class TrustKeyDoc(BaseModel):
    """One key as trust.json stores it (times as ISO 8601 text, the key as base64url)."""

    model_config = ConfigDict(extra="allow")

    key_id: str
    name: str | None = None
    public_key: str
    origin: Origin = "peer"
    not_before: str | None = None
    not_after: str | None = None
    added_at: str | None = None

    @field_validator("origin", mode="before")
    @classmethod
    def _peer_when_unset(cls, value: object) -> object:
        return "peer" if value is None or value == "" else value


class TrustDoc(BaseModel):
    """``keys/trust.json`` (``cartograph.trust/1``): the trusted keys and the serial of the
    newest revocation list issued here (the rollback anchor)."""

    model_config = ConfigDict(extra="allow")

    format: Literal["cartograph.trust/1"] = "cartograph.trust/1"
    revocation_serial: int = 0
    keys: list[TrustKeyDoc] = Field(default_factory=list)

    @field_validator("revocation_serial", mode="before")
    @classmethod
    def _zero_when_unset(cls, value: object) -> object:
        return 0 if value is None else value


@dataclass(frozen=True)
class TrustedKey:
    """One public key this workspace accepts signatures from, and when."""

    key_id: str
    name: str
    public_key: PublicKey
    origin: Origin = "peer"
    not_before: datetime | None = None
    not_after: datetime | None = None
    added_at: str | None = None

    def __post_init__(self) -> None:  # a signing side may hand over cryptography's key type
        object.__setattr__(self, "public_key", PublicKey.of(self.public_key))

    def verify(self, signature: bytes, message: bytes) -> None:
        """Raise ``SignatureMismatch`` unless ``signature`` is this key's over ``message``."""
        self.public_key.verify(signature, message)

    def window(self) -> str:
        start = clock.format_time(self.not_before) if self.not_before else "-inf"
        end = clock.format_time(self.not_after) if self.not_after else "+inf"
        return f"[{start}, {end}]"

    def to_doc(self) -> TrustKeyDoc:
        return TrustKeyDoc(
            key_id=self.key_id,
            name=self.name,
            public_key=b64(raw_public(self.public_key)),
            origin=self.origin,
            not_before=clock.format_time(self.not_before) if self.not_before else None,
            not_after=clock.format_time(self.not_after) if self.not_after else None,
            added_at=self.added_at,
        )

    def to_json(self) -> dict[str, Any]:
        return self.to_doc().model_dump(mode="json")

    @classmethod
    def from_doc(cls, doc: TrustKeyDoc, *, source: str) -> TrustedKey:
        public = public_from_b64(doc.public_key, source=source)
        times: dict[str, datetime | None] = {}
        for name in ("not_before", "not_after"):
            text = getattr(doc, name)
            try:
                times[name] = clock.parse(text) if text else None
            except ValueError as exc:
                raise ConfigError(
                    f"key {doc.key_id}: not an ISO 8601 time: {text!r}",
                    file=source,
                    field=f"keys.{name}",
                ) from exc
        entry = cls(
            key_id=doc.key_id,
            name=doc.name or doc.key_id,
            public_key=public,
            origin=doc.origin,
            not_before=times["not_before"],
            not_after=times["not_after"],
            added_at=doc.added_at,
        )
        if key_id_of(public) != entry.key_id:
            raise KeyError_(
                f"{source}: entry {entry.key_id} holds the public key of {key_id_of(public)}"
            )
        return entry


class TrustStore:
    """Trusted keys by id, the revocations that override them, and any fault that voids both.

    ``fault`` is set when the trust material itself cannot be relied on (a tampered, missing or
    rolled-back revocation list, an unreadable trust.json): then :meth:`check` refuses every key,
    so a store that cannot tell what is revoked trusts nothing rather than everything.
    """

    def __init__(self, keys: dict[str, PublicKey] | None = None) -> None:
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
        public_key: PublicKey | Any,
        *,
        name: str | None = None,
        origin: Origin = "peer",
        not_before: datetime | None = None,
        not_after: datetime | None = None,
    ) -> str:
        public = PublicKey.of(public_key)
        kid = public.key_id
        self.put(TrustedKey(kid, name or kid, public, origin, not_before, not_after))
        return kid

    def put(self, entry: TrustedKey) -> None:
        self._entries[entry.key_id] = entry

    def get(self, key_id: str) -> PublicKey | None:
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

    def state(self, key_id: str, at: datetime | None = None) -> KeyState:
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
        store = cls()
        try:
            doc = read_trust_doc(ws)
            for item in doc.keys:
                store.put(TrustedKey.from_doc(item, source=str(trust_file(ws))))
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
        except (KeyError_, ConfigError) as exc:
            store.fault = f"the trust store cannot be read: {exc}"
            logger.error("%s", store.fault)
            return store
        apply_revocations(ws, store, anchor=doc.revocation_serial)
        return store


def read_trust_doc(ws: Workspace) -> TrustDoc:
    """The parsed trust.json (an empty one when absent); :class:`KeyError_` when it cannot be
    read as JSON, :class:`ConfigError` naming the field when it is not a valid document."""
    path = trust_file(ws)
    if not path.is_file():
        return TrustDoc()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KeyError_(f"{path}: not readable JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != TRUST_FORMAT:
        raise ConfigError(f"not a {TRUST_FORMAT} document", file=str(path), field="format")
    try:
        return TrustDoc.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(first["msg"], file=str(path), field=where) from exc


def write_trust_doc(ws: Workspace, doc: TrustDoc) -> None:
    path = trust_file(ws)
    doc.keys.sort(key=lambda item: item.key_id)
    data = doc.model_dump(mode="json")
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def set_entry(doc: TrustDoc, entry: TrustedKey) -> None:
    """Put ``entry`` into a trust.json document, replacing any entry with its key id."""
    doc.keys = [k for k in doc.keys if k.key_id != entry.key_id]
    doc.keys.append(entry.to_doc())
