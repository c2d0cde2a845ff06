"""Issuing the revocation list: revoke a key, re-sign the list after a rotation, or start a new
empty one (a recovery step). Each writes the signed list (:mod:`cartograph.trust.revocation`)
and records its serial in trust.json as the rollback anchor (:mod:`cartograph.trust.store`).
"""

from __future__ import annotations

import logging
import re

from cartograph import clock
from cartograph.errors import KeyError_, UsageError
from cartograph.trust.keys import OperatorKey, load_key
from cartograph.trust.revocation import (
    Revocation,
    revocations_file,
    sign_list,
    unsigned_list,
    write_list,
)
from cartograph.trust.store import TrustStore, read_trust_doc, write_trust_doc
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

_KEY_ID = re.compile(r"^ed25519:[0-9a-f]{16}$")


def _set_anchor(ws: Workspace, serial: int) -> None:
    doc = read_trust_doc(ws)
    doc.revocation_serial = serial
    write_trust_doc(ws, doc)


def revoke_key(ws: Workspace, key_id: str, *, reason: str = "") -> Revocation:
    """Add ``key_id`` to the revocation list, signed by the current operator key."""
    if not _KEY_ID.match(key_id):
        raise UsageError(
            f"{key_id!r} is not a key id (expected ed25519: and 16 hex digits; "
            "`cartograph keys list` shows them)"
        )
    key = load_key(ws)
    if key_id == key.key_id:
        raise UsageError(
            f"{key_id} is the current operator key; run `cartograph keys rotate` first, then "
            "revoke the old key (and `cartograph cards resign` to re-sign its cards)"
        )
    store = TrustStore.for_workspace(ws)
    if store.fault is not None:
        raise KeyError_(f"cannot revoke: {store.fault}")
    existing = store.revoked.get(key_id)
    if existing is not None:
        return existing
    if store.entry(key_id) is None:
        logger.warning("revoking %s, which is not in the trust store", key_id)
    revocation = Revocation(key_id, clock.format_time(clock.now()), reason)
    serial = store.revocation_serial + 1
    write_list(ws, sign_list(unsigned_list(serial, [*store.revoked.values(), revocation]), key))
    _set_anchor(ws, serial)
    logger.info("revoked %s (list #%d)", key_id, serial)
    return revocation


def resign_revocations(ws: Workspace, key: OperatorKey) -> bool:
    """Re-sign a valid revocation list with ``key`` (after a rotation); False when none."""
    store = TrustStore.for_workspace(ws)
    if store.fault is not None:
        raise KeyError_(f"cannot re-sign the revocation list: {store.fault}")
    if not revocations_file(ws).is_file():
        return False
    serial = store.revocation_serial + 1
    write_list(ws, sign_list(unsigned_list(serial, list(store.revoked.values())), key))
    _set_anchor(ws, serial)
    return True


def reset_revocations(ws: Workspace) -> int:
    """Issue a new, empty revocation list (a recovery step); returns its serial.

    Every key revoked before must be revoked again: the old list could not be trusted.
    """
    key = load_key(ws)
    serial = read_trust_doc(ws).revocation_serial + 1
    write_list(ws, sign_list(unsigned_list(serial, []), key))
    _set_anchor(ws, serial)
    logger.warning("issued an empty revocation list #%d; revoke each key again", serial)
    return serial
