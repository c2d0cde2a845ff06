"""Signed cards in PostgreSQL: stored as their sealed bytes, verified on every load.

A row holds the exact bytes :func:`~cartograph.cards.seal.sealed_bytes` wrote, keyed by server
name. Loading runs the same checks as the file store (:func:`~cartograph.cards.seal.verify_texts`
under the workspace's trust store, then model validation), so a row changed in the database by
anyone without a trusted key is left out with its reason, exactly as a tampered file is. The
signed identity wins over the row's key: a card filed under another server's name is refused.
Every write bumps the ``cards`` generation in the same transaction; replicas poll that number
to notice a bootstrap or a re-attestation without a restart.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cartograph.cards.model import Card
from cartograph.cards.seal import sealed_bytes, verify_texts
from cartograph.cards.store import CARD_SUFFIX, CardFailure, LoadedCards, validate_bytes
from cartograph.errors import CardError
from cartograph.storage.pg_db import Database, replica_name
from cartograph.trust.store import TrustStore
from cartograph.workspace import safe_file_name

if TYPE_CHECKING:
    import psycopg


def card_location(server: str) -> Path:
    """The name a card row goes by in failures and status (like a card file's name)."""
    return Path(f"{safe_file_name(server)}{CARD_SUFFIX}")


def write_card(db: Database, card: Card) -> Path:
    """Insert or replace the card of ``card``'s server and bump the cards generation."""
    server = card.identity.server
    with db.error_context(f"write the card of {server!r}"):
        conn = db.conn()
        with conn.transaction():
            conn.execute(
                "INSERT INTO cartograph_cards (server, sealed, written_by) VALUES (%s, %s, %s) "
                "ON CONFLICT (server) DO UPDATE SET sealed = excluded.sealed, "
                "written_at = now(), written_by = excluded.written_by",
                (server, sealed_bytes(card), replica_name()),
            )
            bump(conn, "cards")
    return card_location(server)


def delete_card(db: Database, server: str) -> bool:
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


def load_verified(db: Database, trust: TrustStore) -> LoadedCards:
    """Every card row that parses and verifies; the rest as failures with reasons."""
    with db.error_context("read the cards"):
        rows = db.conn().execute("SELECT server, sealed FROM cartograph_cards ORDER BY server")
        stored = [(str(server), bytes(raw)) for server, raw in rows.fetchall()]
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _verify(db, stored, trust)
    finally:
        if gc_was_enabled:
            gc.enable()


def _verify(db: Database, stored: list[tuple[str, bytes]], trust: TrustStore) -> LoadedCards:
    sources = [f"{db.label} card {server!r}" for server, _ in stored]
    texts = [raw for _, raw in stored]
    parsed: list[Card | CardError] = []

    def validate_all() -> None:
        for source, raw in zip(sources, texts, strict=True):
            try:
                parsed.append(validate_bytes(raw, source=source))
            except CardError as exc:
                parsed.append(exc)

    verdicts = verify_texts(texts, sources, trust, meanwhile=validate_all)
    cards: dict[str, Card] = {}
    paths: dict[str, Path] = {}
    failures: list[CardFailure] = []
    for (row, _), card, verdict in zip(stored, parsed, verdicts, strict=True):
        where = card_location(row)
        if isinstance(card, CardError):
            failures.append(CardFailure(where, None, str(card), "malformed"))
        elif verdict is not None:
            failures.append(CardFailure(where, card.identity.server, verdict[0], verdict[1]))
        elif card.identity.server != row:
            failures.append(
                CardFailure(
                    where,
                    card.identity.server,
                    f"{db.label}: the row of server {row!r} holds the signed card of "
                    f"{card.identity.server!r}; re-attest it with `cartograph bootstrap`",
                    "malformed",
                )
            )
        else:
            cards[row] = card
            paths[row] = where
    return LoadedCards(cards, failures, paths)
