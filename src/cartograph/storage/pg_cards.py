"""Signed cards in PostgreSQL: stored as their sealed bytes, verified on every load.

A row of ``cartograph_cards`` holds the exact bytes :func:`~cartograph.cards.seal.sealed_bytes`
wrote, keyed by server name; ``cartograph_card_history`` holds every kept version of it, numbered
per server (the current card is the newest). Loading runs the codec's checks
(:mod:`cartograph.cards.codec`, under the workspace's trust store), so a row changed in the
database by anyone without a trusted key is left out with its reason, exactly as a tampered file
is. The signed identity wins over the row's key: a card filed under another server's name is
refused. Every write that changes a card bumps the ``cards`` generation in the same transaction;
replicas poll that number to notice a bootstrap or a re-attestation without a restart.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cartograph import clock
from cartograph.cards.codec import (
    CARD_SUFFIX,
    CardFailure,
    LoadedCards,
    StoredCard,
    read_verified,
    stored_signature,
    verify_stored_cards,
)
from cartograph.cards.model import Card
from cartograph.errors import UsageError, VerificationError
from cartograph.storage.base import CardVersion, verified_version
from cartograph.storage.health import replica_name
from cartograph.storage.pg_db import Database
from cartograph.trust.store import TrustStore
from cartograph.workspace import safe_file_name

if TYPE_CHECKING:
    from datetime import datetime

    import psycopg

CARD_LOCK = 0x43415243  # advisory lock class for card writes ("CARC"), one lock per server


def card_location(server: str) -> Path:
    """The name a card row goes by in failures and status (like a card file's name)."""
    return Path(f"{safe_file_name(server)}{CARD_SUFFIX}")


def write_sealed(db: Database, server: str, raw: bytes, *, keep: int) -> CardVersion:
    """Make ``raw`` the current card of ``server``: a new version unless byte-identical to the
    newest, the current row replaced (and the generation bumped) unless unchanged, and versions
    older than the newest ``keep`` removed. Writers of one server take turns."""
    with db.error_context(f"write the card of {server!r}"):
        conn = db.conn()
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (CARD_LOCK, server))
            version, written = _record_version(conn, server, raw, keep)
            current = conn.execute(
                "SELECT sealed FROM cartograph_cards WHERE server = %s", (server,)
            ).fetchone()
            if current is None or bytes(current[0]) != raw:
                conn.execute(
                    "INSERT INTO cartograph_cards (server, sealed, written_by) VALUES (%s, %s, %s) "
                    "ON CONFLICT (server) DO UPDATE SET sealed = excluded.sealed, "
                    "written_at = now(), written_by = excluded.written_by",
                    (server, raw, replica_name()),
                )
                bump(conn, "cards")
    return _version(db, server, version, written, raw)


def _record_version(
    conn: psycopg.Connection[Any], server: str, raw: bytes, keep: int
) -> tuple[int, datetime]:
    """(number, written_at) of the history row holding ``raw``: the newest, or a new one."""
    newest = conn.execute(
        "SELECT version, sealed, written_at FROM cartograph_card_history "
        "WHERE server = %s ORDER BY version DESC LIMIT 1",
        (server,),
    ).fetchone()
    if newest is not None and bytes(newest[1]) == raw:
        return int(newest[0]), newest[2]
    version = int(newest[0]) + 1 if newest is not None else 1
    row = conn.execute(
        "INSERT INTO cartograph_card_history (server, version, sealed, signature, written_by) "
        "VALUES (%s, %s, %s, %s, %s) RETURNING written_at",
        (server, version, raw, stored_signature(raw), replica_name()),
    ).fetchone()
    conn.execute(
        "DELETE FROM cartograph_card_history WHERE server = %s AND version <= %s",
        (server, version - keep),
    )
    return version, row[0] if row else clock.now()


def delete_card(db: Database, server: str) -> bool:
    """Remove the current card of ``server`` (its history stays until pruned)."""
    with db.error_context(f"delete the card of {server!r}"):
        conn = db.conn()
        with conn.transaction():
            cur = conn.execute("DELETE FROM cartograph_cards WHERE server = %s", (server,))
            if cur.rowcount:
                bump(conn, "cards")
    return bool(cur.rowcount)


def bump(conn: psycopg.Connection[Any], name: str) -> None:
    """Count one change of ``name`` (``cards`` or ``quarantine``) in the caller's transaction."""
    conn.execute("UPDATE cartograph_state SET generation = generation + 1 WHERE name = %s", (name,))


def load_verified(db: Database, trust: TrustStore, *, compact: bool = False) -> LoadedCards:
    """Every card row that parses and verifies; the rest as failures with reasons."""
    with db.error_context("read the cards"):
        rows = db.conn().execute("SELECT server, sealed FROM cartograph_cards ORDER BY server")
        fetched = [(str(server), bytes(raw)) for server, raw in rows.fetchall()]
    row_of = {_source(db, server): server for server, _ in fetched}
    stored = [StoredCard(card_location(s), _source(db, s), raw) for s, raw in fetched]

    def check(record: StoredCard, card: Card) -> Card | CardFailure:
        row = row_of[record.source]
        if card.identity.server == row:
            return card
        return CardFailure(record.path, card.identity.server, _misfiled(db, row, card), "malformed")

    return verify_stored_cards(stored, trust, check=check, compact=compact)


def read_card(db: Database, server: str, trust: TrustStore) -> Card:
    """The current card of ``server``, verified (raises with the reason otherwise)."""
    with db.error_context(f"read the card of {server!r}"):
        row = (
            db.conn()
            .execute("SELECT sealed FROM cartograph_cards WHERE server = %s", (server,))
            .fetchone()
        )
    if row is None:
        raise UsageError(
            f"no card for server {server!r} in the shared store; "
            "`cartograph cards list` shows what there is"
        )
    return _checked(db, server, read_verified(bytes(row[0]), trust, source=_source(db, server)))


def history(db: Database, server: str) -> list[CardVersion]:
    """The kept versions of ``server``'s card, oldest first."""
    with db.error_context(f"read the history of {server!r}"):
        rows = db.conn().execute(
            "SELECT version, written_at, sealed FROM cartograph_card_history "
            "WHERE server = %s ORDER BY version",
            (server,),
        )
        return [_version(db, server, int(v), w, bytes(raw)) for v, w, raw in rows.fetchall()]


def read_version(db: Database, server: str, version: int, trust: TrustStore) -> Card:
    """Version ``version`` of ``server``'s card, verified like the current one."""
    with db.error_context(f"read version {version} of the card of {server!r}"):
        conn = db.conn()
        row = conn.execute(
            "SELECT sealed FROM cartograph_card_history WHERE server = %s AND version = %s",
            (server, version),
        ).fetchone()
        kept = conn.execute(
            "SELECT min(version), max(version) FROM cartograph_card_history WHERE server = %s",
            (server,),
        ).fetchone()
    if row is None:
        have = f"versions kept: {kept[0]}..{kept[1]}" if kept and kept[0] else "none kept"
        raise UsageError(
            f"no version {version} of the card of server {server!r} in the shared store "
            f"({have}; `cartograph cards history {server}` lists them)"
        )
    where = f"{db.label} (cartograph_card_history)"
    card = verified_version(bytes(row[0]), trust, server=server, version=version, where=where)
    return _checked(db, server, card)


def find_version(db: Database, server: str, signature: str) -> int | None:
    """The newest kept version of ``server``'s card that carries ``signature``."""
    with db.error_context(f"read the history of {server!r}"):
        row = (
            db.conn()
            .execute(
                "SELECT max(version) FROM cartograph_card_history "
                "WHERE server = %s AND signature = %s",
                (server, signature),
            )
            .fetchone()
        )
    return int(row[0]) if row and row[0] is not None else None


def _source(db: Database, server: str) -> str:
    return f"{db.label} card {server!r}"


def _misfiled(db: Database, row: str, card: Card) -> str:
    return (
        f"{db.label}: the row of server {row!r} holds the signed card of "
        f"{card.identity.server!r}; re-attest it with `cartograph bootstrap`"
    )


def _checked(db: Database, server: str, card: Card) -> Card:
    if card.identity.server != server:
        raise VerificationError(_misfiled(db, server, card))
    return card


def _version(db: Database, server: str, version: int, written: datetime, raw: bytes) -> CardVersion:
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    where = f"{db.label} (cartograph_card_history {server!r} v{version})"
    return CardVersion(server, version, clock.format_time(written), digest, where)
