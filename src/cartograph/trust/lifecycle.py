"""The key life cycle: create the operator key, rotate it, trust another operator's key.

Each step writes the trust store (``keys/trust.json``, :mod:`cartograph.trust.store`) and, for
the operator key, the key files (:mod:`cartograph.trust.keys`); a rotation also re-signs the
revocation list (:mod:`cartograph.trust.revocation`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from cartograph import clock
from cartograph.errors import KeyError_
from cartograph.trust.keys import OperatorKey, key_id_of, load_key, load_public_key, write_key_pair
from cartograph.trust.store import (
    TrustedKey,
    TrustStore,
    read_trust_doc,
    set_entry,
    write_trust_doc,
)
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)


def init_key(ws: Workspace, *, force: bool = False) -> OperatorKey:
    """Write a new operator key pair (private key mode 0600), trusted from this moment on."""
    if ws.private_key.exists() and not force:
        raise KeyError_(
            f"{ws.private_key}: an operator key already exists; pass --force to replace it "
            "(cards signed by the old key stop verifying), or `cartograph keys rotate` to keep "
            "them valid"
        )
    doc = read_trust_doc(ws)
    if force and ws.public_key.is_file():
        replaced = key_id_of(load_public_key(ws.public_key))
        doc.keys = [k for k in doc.keys if k.key_id != replaced]
    key = OperatorKey.generate()
    now = clock.now()
    set_entry(
        doc,
        TrustedKey(
            key.key_id, "operator", key.public_key, "operator", now, None, clock.format_time(now)
        ),
    )
    write_trust_doc(ws, doc)
    write_key_pair(ws, key)
    logger.info("operator key %s created", key.key_id)
    return key


@dataclass(frozen=True)
class Rotation:
    """What ``keys rotate`` did."""

    old_key_id: str
    new_key: OperatorKey
    old_not_after: datetime
    revocation_list_resigned: bool


def rotate_key(ws: Workspace, *, grace: timedelta = timedelta(0)) -> Rotation:
    """Make a new operator key; the old one's window ends now (+ ``grace``).

    Cards the old key signed up to then stay valid; new cards are signed by the new key. The old
    private key is overwritten (only its public key stays, in trust.json). A valid revocation
    list is re-signed by the new key; a faulty one stops the rotation (fix it first).
    """
    from cartograph.trust.revoke import resign_revocations

    old = load_key(ws)
    store = TrustStore.for_workspace(ws)
    if store.fault is not None:
        raise KeyError_(f"cannot rotate: {store.fault}")
    if old.key_id in store.revoked:
        logger.warning("rotating away from revoked key %s", old.key_id)
    doc = read_trust_doc(ws)
    now = clock.now()
    old_entry = store.entry(old.key_id) or TrustedKey(
        old.key_id, "operator", old.public_key, "operator"
    )
    old_end = now + grace
    set_entry(doc, replace(old_entry, origin="operator", not_after=old_end))
    new = OperatorKey.generate()
    set_entry(
        doc,
        TrustedKey(
            new.key_id,
            old_entry.name,
            new.public_key,
            "operator",
            now,
            None,
            clock.format_time(now),
        ),
    )
    write_trust_doc(ws, doc)
    write_key_pair(ws, new)
    resigned = resign_revocations(ws, new)
    logger.info(
        "rotated operator key %s -> %s (old window ends %s)",
        old.key_id,
        new.key_id,
        clock.format_time(old_end),
    )
    return Rotation(old.key_id, new, old_end, resigned)


def trust_key(
    ws: Workspace,
    pem: Path,
    *,
    name: str | None = None,
    not_before: datetime | None = None,
    not_after: datetime | None = None,
) -> TrustedKey:
    """Trust another operator's public key (PEM file) for cards signed inside the window."""
    public = load_public_key(pem)
    kid = key_id_of(public)
    store = TrustStore.for_workspace(ws)
    if kid in store.revoked:
        raise KeyError_(
            f"{pem}: key {kid} is revoked here ({store.revoked[kid].reason or 'no reason given'}); "
            "a revoked key is not trusted again"
        )
    existing = store.entry(kid)
    if existing is not None and existing.origin == "operator":
        raise KeyError_(f"{pem}: key {kid} is this workspace's own operator key")
    if not_before and not_after and not_after < not_before:
        raise KeyError_(f"{pem}: --not-after is before --not-before")
    doc = read_trust_doc(ws)
    entry = TrustedKey(
        kid, name or pem.stem, public, "peer", not_before, not_after, clock.format_time(clock.now())
    )
    set_entry(doc, entry)
    write_trust_doc(ws, doc)
    return entry
