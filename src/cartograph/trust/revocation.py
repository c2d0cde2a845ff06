"""The revocation list: keys this workspace no longer trusts for anything, signed by its operator.

``<home>/keys/trusted/revocations.json`` (``cartograph.revocations/1``) holds a serial number,
the issue time and one entry per revoked key (id, time, reason), sealed like a card: Ed25519 over
the RFC 8785 canonical document without its ``signature`` block, by one of this workspace's own
(``operator``) keys that is not itself on the list.

A list that does not verify, is missing while trust.json says one was issued, or carries a lower
serial than trust.json records (a rollback to an older list) puts the trust store in *fault*: no
card verifies until the operator restores the list or issues a new one
(:func:`cartograph.trust.revoke.reset_revocations`). Trusting nothing is the safe failure;
trusting everything would silently bring revoked keys back. Issuing lists is
:mod:`cartograph.trust.revoke`; this module reads and checks them.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from cartograph import clock
from cartograph.canonical import canonical
from cartograph.errors import CartographError, ConfigError, KeyError_, TrustError
from cartograph.files import atomic_write
from cartograph.trust.keys import OperatorKey, b64, unb64
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cartograph.trust.store import TrustStore

logger = logging.getLogger(__name__)

REVOCATION_FORMAT = "cartograph.revocations/1"


@dataclass(frozen=True)
class Revocation:
    """A key that must not be trusted for anything, whatever its cards' signing times."""

    key_id: str
    revoked_at: str
    reason: str = ""


def revocations_file(ws: Workspace) -> Path:
    return ws.trusted_dir / "revocations.json"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class RevokedDoc(_Doc):
    """One revoked key as the list stores it."""

    key_id: str
    revoked_at: str
    reason: str = ""

    @field_validator("reason", mode="before")
    @classmethod
    def _empty_when_unset(cls, value: object) -> object:
        return "" if value is None else value


class ListSignature(_Doc):
    alg: Literal["Ed25519"] = "Ed25519"
    key_id: str
    value: str
    signed_at: str


class RevocationDoc(_Doc):
    """``revocations.json`` (``cartograph.revocations/1``). The signature covers the document
    as stored without ``signature`` (extra keys included), not this model's dump of it."""

    format: Literal["cartograph.revocations/1"]
    serial: int
    issued_at: str
    revoked: list[RevokedDoc]
    signature: ListSignature

    def entries(self) -> list[Revocation]:
        return [Revocation(r.key_id, r.revoked_at, r.reason) for r in self.revoked]


def unsigned_list(serial: int, entries: list[Revocation]) -> dict[str, Any]:
    return {
        "format": REVOCATION_FORMAT,
        "serial": serial,
        "issued_at": clock.format_time(clock.now()),
        "revoked": [
            RevokedDoc(key_id=r.key_id, revoked_at=r.revoked_at, reason=r.reason).model_dump()
            for r in sorted(entries, key=lambda r: r.key_id)
        ],
    }


def sign_list(payload: dict[str, Any], key: OperatorKey) -> RevocationDoc:
    value = key.private_key.sign(canonical(payload))
    signature = ListSignature(key_id=key.key_id, value=b64(value), signed_at=payload["issued_at"])
    return RevocationDoc.model_validate({**payload, "signature": signature})


def write_list(ws: Workspace, doc: RevocationDoc) -> None:
    path = revocations_file(ws)
    text = json.dumps(doc.model_dump(mode="json"), indent=2, ensure_ascii=False)
    atomic_write(path, text + "\n")


def parse_revocations(path: Path) -> tuple[RevocationDoc, dict[str, Any]]:
    """The list in ``path`` and the payload its signature covers (the JSON as stored, without
    ``signature``); :class:`KeyError_` when unreadable, :class:`ConfigError` naming the field
    when it is not a valid document."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise KeyError_(f"{path}: not a readable {REVOCATION_FORMAT} document: {exc!r}") from exc
    if not isinstance(raw, dict) or raw.get("format") != REVOCATION_FORMAT:
        raise ConfigError(f"not a {REVOCATION_FORMAT} document", file=str(path), field="format")
    try:
        doc = RevocationDoc.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(first["msg"], file=str(path), field=where) from exc
    return doc, {k: v for k, v in raw.items() if k != "signature"}


def read_revocations(
    path: Path, store: TrustStore, *, peer: bool = False
) -> tuple[int, list[Revocation], str]:
    """Serial, entries and signer of a revocation list that verifies under ``store``.

    The signer must be one of this workspace's operator keys, or with ``peer`` (another
    operator's list, read on import) any key trusted here. Raises :class:`CartographError`
    naming the file and what is wrong with it (:class:`TrustError` when the signer is unknown).
    """
    doc, payload = parse_revocations(path)
    serial, entries = doc.serial, doc.entries()
    signer, value, signed_at = doc.signature.key_id, doc.signature.value, doc.signature.signed_at
    entry = store.entry(signer)
    if peer and entry is None:
        raise TrustError(
            f"{path}: signed by {signer}, a key not trusted here", kind="unknown", key_id=signer
        )
    if entry is None or (entry.origin != "operator" and not peer):
        raise KeyError_(
            f"{path}: signed by {signer}, which is not one of this workspace's operator keys"
        )
    if any(r.key_id == signer for r in entries):
        raise KeyError_(f"{path}: signed by {signer}, a key the list itself revokes")
    key = store.check(f"revocation list {path.name}", signer, signed_at)
    try:
        key.verify(unb64(value), canonical(payload))
    except ValueError as exc:
        raise KeyError_(
            f"{path}: signature by {signer} does not match its content (the list was changed "
            "after signing)"
        ) from exc
    return serial, entries, signer


def apply_revocations(ws: Workspace, store: TrustStore, *, anchor: int) -> None:
    """Load the workspace's revocation list into ``store``, or put ``store`` in fault."""
    path = revocations_file(ws)
    if not path.is_file():
        if anchor > 0:
            store.fault = (
                f"{path} is missing although revocation list #{anchor} was issued here; restore "
                "it, or issue a new one with `cartograph keys reset-revocations`"
            )
            logger.error("%s", store.fault)
        return
    try:
        serial, entries, signer = read_revocations(path, store)
    except CartographError as exc:
        store.fault = (
            f"the revocation list is not valid: {exc}; restore it from a backup, or issue a "
            "new one with `cartograph keys reset-revocations` (then revoke each key again)"
        )
        logger.error("%s", store.fault)
        return
    if serial < anchor:
        store.fault = (
            f"{path} is revocation list #{serial} but #{anchor} was issued here (an older list "
            "was put back); restore the newest list or run `cartograph keys reset-revocations`"
        )
        logger.error("%s", store.fault)
        return
    for revocation in entries:
        store.revoke(revocation)
    store.revocation_serial = serial
    store.revocation_signer = signer
