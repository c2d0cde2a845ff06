"""Where cards, the index, the audit log and the quarantine live: one interface, two backends.

The backend is chosen by URL: none (the default) keeps everything in the workspace files as
before; ``postgresql://...`` (``--store`` or ``$CARTOGRAPH_STORE``) puts it in PostgreSQL with
pgvector, shared by every proxy replica pointed at it. Keys, trusted keys and ``config.json``
stay in each replica's home directory: the database is storage, not a trust root, and every
card read from it is verified as a file would be.

:class:`Store` is the interface; :func:`open_store` picks the backend. The file backend is the
code the workspace always had; the PostgreSQL one lives in ``pg_*`` modules that import psycopg,
and nothing imports them unless a ``postgresql://`` store is named.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cartograph.workspace import Workspace, file_stamps

if TYPE_CHECKING:
    from cartograph.cards.model import Card
    from cartograph.cards.store import LoadedCards
    from cartograph.gateway.drift import Ledger
    from cartograph.index.embedders import Embedder
    from cartograph.index.store import IndexAction
    from cartograph.index.tool_index import ToolIndex
    from cartograph.storage.pg_db import Database
    from cartograph.trust.store import TrustStore

__all__ = ["FileStore", "PgStore", "Store", "open_store", "pg_store"]


class Store(Protocol):
    """What the CLI, the index and the proxy ask of a backend."""

    label: str
    shared: bool

    def write_card(self, card: Card) -> Path: ...

    def load_verified(self, trust: TrustStore) -> LoadedCards: ...

    def cards_stamp(self) -> object:
        """Changes whenever a card was written or removed (cheap: polled once a second)."""
        ...

    def quarantine_ledger(self) -> Ledger: ...

    def audit_log(self) -> Any:
        """An object with ``write(event, **fields)``, ``read()`` and ``close()``."""
        ...

    def open_index(
        self, cards: dict[str, Card], embedder: Embedder, *, rebuild: bool
    ) -> tuple[ToolIndex, IndexAction, str | None]:
        """The index over ``cards`` (verified): (index, "loaded"|"rebuilt"|"updated", reason)."""
        ...


class FileStore:
    """The workspace files: ``cards/*.card.json``, ``index/``, ``logs/``, ``quarantine.json``."""

    shared = False

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.label = str(ws.root)

    def write_card(self, card: Card) -> Path:
        from cartograph.cards.store import write_card

        return write_card(self.ws, card)

    def load_verified(self, trust: TrustStore) -> LoadedCards:
        from cartograph.cards.store import load_verified

        return load_verified(self.ws, trust)

    def cards_stamp(self) -> object:
        from cartograph.cards.store import card_files

        return file_stamps([self.ws.cards_dir, *card_files(self.ws)])

    def quarantine_ledger(self) -> Ledger:
        from cartograph.gateway.drift import QUARANTINE_FILE, FileLedger

        return FileLedger(self.ws.root / QUARANTINE_FILE)

    def audit_log(self) -> Any:
        from cartograph.proxy.audit import AUDIT_FILE, AuditLog

        return AuditLog(self.ws.logs_dir / AUDIT_FILE)

    def open_index(
        self, cards: dict[str, Card], embedder: Embedder, *, rebuild: bool
    ) -> tuple[ToolIndex, IndexAction, str | None]:
        from cartograph.index.store import open_file_index

        return open_file_index(self.ws, cards, embedder, rebuild=rebuild)


class PgStore:
    """PostgreSQL + pgvector, shared by every replica that names the same URL."""

    shared = True

    def __init__(self, url: str) -> None:
        from cartograph.storage.pg_db import database

        self.db: Database = database(url)
        self.label = self.db.label

    def write_card(self, card: Card) -> Path:
        from cartograph.storage.pg_cards import write_card

        return write_card(self.db, card)

    def load_verified(self, trust: TrustStore) -> LoadedCards:
        from cartograph.storage.pg_cards import load_verified

        return load_verified(self.db, trust)

    def cards_stamp(self) -> object:
        return self.db.generation("cards")

    def quarantine_ledger(self) -> Ledger:
        from cartograph.storage.pg_state import PgQuarantineLedger

        return PgQuarantineLedger(self.db)

    def audit_log(self) -> Any:
        from cartograph.storage.pg_state import PgAuditLog

        return PgAuditLog(self.db)

    def open_index(
        self, cards: dict[str, Card], embedder: Embedder, *, rebuild: bool
    ) -> tuple[ToolIndex, IndexAction, str | None]:
        from cartograph.storage.pg_index import load_index
        from cartograph.storage.pg_index_sync import sync_index

        action, reason = sync_index(self.db, cards, embedder, rebuild=rebuild)
        index = load_index(self.db, cards, embedder)
        problem = index.spot_check()
        if problem is not None:
            action, reason = sync_index(self.db, cards, embedder, rebuild=True)
            reason = f"{problem}; rebuilt"
            index = load_index(self.db, cards, embedder)
        return index, action, reason


def pg_store(ws: Workspace) -> PgStore:
    """The PostgreSQL store ``ws`` names (it must name one)."""
    if ws.store is None:
        raise ValueError("the workspace names no shared store")
    return PgStore(ws.store)


def open_store(ws: Workspace) -> Store:
    """The backend of ``ws``: its files, or the shared store its URL names."""
    return FileStore(ws) if ws.store is None else pg_store(ws)
