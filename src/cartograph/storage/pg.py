"""The PostgreSQL backend: one store shared by every proxy replica that names the same URL.

:class:`PgStore` is the :class:`~cartograph.storage.Store` over the ``pg_*`` modules: cards and
their history (:mod:`~cartograph.storage.pg_cards`), the index (:mod:`~cartograph.storage.pg_index`,
kept up to date by :mod:`~cartograph.storage.pg_index_sync`), the quarantine, the audit log and
the replicas' health (:mod:`~cartograph.storage.pg_state`), the console's job queue
(:mod:`~cartograph.storage.pg_jobs`). Keys, trusted keys and
``config.json`` stay in the home directory it was opened from: the database is storage, not a
trust root.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cartograph.cards.codec import LoadedCards
from cartograph.cards.model import Card
from cartograph.cards.seal import sealed_bytes
from cartograph.errors import UsageError
from cartograph.storage import pg_cards
from cartograph.storage.base import CardVersion, ResignResult, resign_cards
from cartograph.storage.pg_db import Database, database
from cartograph.storage.pg_jobs import PgJobQueue
from cartograph.storage.pg_state import PgAuditLog, PgHealthBoard, PgQuarantineLedger
from cartograph.trust.keys import OperatorKey
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cartograph.cards.federation import ImportTarget
    from cartograph.index.embedders import Embedder
    from cartograph.index.store import IndexAction
    from cartograph.index.tool_index import ToolIndex

logger = logging.getLogger(__name__)


class PgStore:
    """PostgreSQL + pgvector, shared by every replica that names the same URL."""

    shared = True
    cards_where = "the shared store (--store)"

    def __init__(self, ws: Workspace, url: str, *, history: int) -> None:
        self.ws = ws
        self.db: Database = database(url)
        self.label = self.db.label
        self.index_where = self.db.label
        self.keep = history

    def _trust(self, trust: TrustStore | None) -> TrustStore:
        return trust or TrustStore.for_workspace(self.ws)

    # ------------------------------------------------------------------ cards

    def write_card(self, card: Card) -> CardVersion:
        server = card.identity.server
        return pg_cards.write_sealed(self.db, server, sealed_bytes(card), keep=self.keep)

    def remove_card(self, server: str) -> bool:
        return pg_cards.delete_card(self.db, server)

    def load_verified(
        self, trust: TrustStore | None = None, *, compact: bool = False
    ) -> LoadedCards:
        return pg_cards.load_verified(self.db, self._trust(trust), compact=compact)

    def read_card(self, server: str, trust: TrustStore | None = None) -> Card:
        return pg_cards.read_card(self.db, server, self._trust(trust))

    def cards_stamp(self) -> object:
        return self.db.generation("cards")

    def resign(
        self, key: OperatorKey, trust: TrustStore | None = None, *, include_peers: bool = False
    ) -> ResignResult:
        trust = self._trust(trust)
        loaded = self.load_verified(trust)
        return resign_cards(
            loaded, trust, key, lambda _, card: self.write_card(card), include_peers=include_peers
        )

    def import_target(self) -> ImportTarget:
        raise UsageError(
            "`cards import` writes card files and alias records, which a shared store does not "
            "hold yet: import into a workspace without --store / $CARTOGRAPH_STORE"
        )

    # ------------------------------------------------------------------ history

    def card_history(self, server: str) -> list[CardVersion]:
        return pg_cards.history(self.db, server)

    def read_version(self, server: str, version: int, trust: TrustStore | None = None) -> Card:
        return pg_cards.read_version(self.db, server, version, self._trust(trust))

    def card_version(self, server: str, card: Card) -> int | None:
        sig = card.signature
        return pg_cards.find_version(self.db, server, sig.value) if sig else None

    # ------------------------------------------------------------------ index and state

    def open_index(
        self, cards: Mapping[str, Card], embedder: Embedder, *, rebuild: bool
    ) -> tuple[ToolIndex, IndexAction, str | None]:
        from cartograph.index.store import spot_check
        from cartograph.storage.pg_index import load_index
        from cartograph.storage.pg_index_sync import sync_index

        action, reason = sync_index(self.db, cards, embedder, rebuild=rebuild)
        index = load_index(self.db, cards, embedder)
        problem = spot_check(index)
        if problem is not None:
            action, reason = sync_index(self.db, cards, embedder, rebuild=True)
            reason = f"{problem}; rebuilt"
            index = load_index(self.db, cards, embedder)
        if action != "loaded":
            logger.warning("index %s in %s: %s", action, self.label, reason)
        return index, action, reason

    def index_info(self) -> dict[str, Any]:
        from cartograph.storage.pg_index import index_info

        return index_info(self.db)

    def quarantine_ledger(self) -> PgQuarantineLedger:
        return PgQuarantineLedger(self.db)

    def audit_log(self) -> PgAuditLog:
        return PgAuditLog(self.db)

    def health_board(self) -> PgHealthBoard:
        return PgHealthBoard(self.db)

    def job_queue(self) -> PgJobQueue:
        return PgJobQueue(self.db)
