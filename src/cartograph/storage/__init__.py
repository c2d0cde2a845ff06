"""Where cards, their history, the index, the audit log and the quarantine live: one interface.

The backend is chosen once, from the workspace, by :func:`open_store`: none (the default) keeps
everything in the workspace files (:class:`~cartograph.storage.files.FileStore`);
``postgresql://...`` (``--store`` or ``$CARTOGRAPH_STORE``) puts it in PostgreSQL with pgvector,
shared by every proxy replica pointed at it (:class:`~cartograph.storage.pg.PgStore`). The top
of the program (a CLI command, the proxy) opens the store and hands it down; nothing outside this
package asks which backend runs. Keys, trusted keys and ``config.json`` stay in each replica's
home directory: the database is storage, not a trust root, and every card read from it is
verified as a file would be. The PostgreSQL modules (``pg*``) import psycopg, and nothing
imports them unless a ``postgresql://`` store is named.

:func:`load_verified` and :func:`open_index` are the public API's one-call forms (they open the
store of a workspace themselves); code inside Cartograph takes the store from its caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cartograph.storage.base import CardVersion, ResignResult
from cartograph.storage.health import HealthBoard, ReplicaHealth, replica_name
from cartograph.storage.jobs import KINDS, Job, JobQueue
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cartograph.cards.codec import LoadedCards
    from cartograph.cards.federation import ImportTarget
    from cartograph.cards.model import Card
    from cartograph.gateway.drift import Ledger
    from cartograph.index.embedders import Embedder
    from cartograph.index.store import IndexAction
    from cartograph.index.tool_index import ToolIndex
    from cartograph.trust.keys import OperatorKey
    from cartograph.trust.store import TrustStore

__all__ = [
    "KINDS",
    "AuditTrail",
    "CardVersion",
    "HealthBoard",
    "Job",
    "JobQueue",
    "ReplicaHealth",
    "ResignResult",
    "Store",
    "load_verified",
    "open_index",
    "open_store",
    "replica_name",
]


class AuditTrail(Protocol):
    """The audit log: records appended from any thread, read back oldest first."""

    def write(self, event: str, **fields: Any) -> None: ...

    def read(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class Store(Protocol):
    """Everything Cartograph keeps, behind one interface (both backends implement all of it).

    Verifying methods take the trust store to verify with; without one they use the home's.
    """

    label: str
    """Where the store is: the home directory, or the database URL without its password."""
    shared: bool
    """True when other processes (proxy replicas, the CLI elsewhere) write to it too."""
    cards_where: str
    index_where: str

    def write_card(self, card: Card) -> CardVersion:
        """Store a signed card as its server's current one (a new version, unless the sealed
        bytes equal the newest version's); versions beyond the retention are pruned."""
        ...

    def remove_card(self, server: str) -> bool:
        """Delete ``server``'s current card (its history stays until pruned); False if none."""
        ...

    def load_verified(
        self, trust: TrustStore | None = None, *, compact: bool = False
    ) -> LoadedCards:
        """Every current card that verifies; the rest as failures with their reasons.
        ``compact``: the cards on a :class:`~cartograph.cards.shelf.CardShelf` (serving)."""
        ...

    def read_card(self, server: str, trust: TrustStore | None = None) -> Card:
        """One server's current card, verified (raises with the reason otherwise)."""
        ...

    def cards_stamp(self) -> object:
        """Changes whenever a card was written or removed (cheap: polled once a second)."""
        ...

    def resign(
        self, key: OperatorKey, trust: TrustStore | None = None, *, include_peers: bool = False
    ) -> ResignResult: ...

    def import_target(self) -> ImportTarget:
        """Where ``cards import`` writes (a usage error where the backend cannot hold imports)."""
        ...

    def card_history(self, server: str) -> list[CardVersion]:
        """The kept versions of ``server``'s card, oldest first (not verified)."""
        ...

    def read_version(self, server: str, version: int, trust: TrustStore | None = None) -> Card:
        """Version ``version`` of ``server``'s card, verified like the current one."""
        ...

    def card_version(self, server: str, card: Card) -> int | None:
        """The version number under which ``card`` (verified, current) is kept, if it is."""
        ...

    def open_index(
        self, cards: Mapping[str, Card], embedder: Embedder, *, rebuild: bool
    ) -> tuple[ToolIndex, IndexAction, str | None]:
        """The index over ``cards`` (verified): (index, "loaded"|"rebuilt"|"updated", reason)."""
        ...

    def index_info(self) -> dict[str, Any]:
        """What ``cartograph index info`` shows (without checking the index against cards)."""
        ...

    def quarantine_ledger(self) -> Ledger: ...

    def audit_log(self) -> AuditTrail: ...

    def health_board(self) -> HealthBoard:
        """Where serving replicas publish their health (:mod:`cartograph.storage.health`)."""
        ...

    def job_queue(self) -> JobQueue:
        """Console actions waiting for the operator's key (:mod:`cartograph.storage.jobs`)."""
        ...


def open_store(ws: Workspace) -> Store:
    """The store of ``ws``: its files, or the shared store its URL names (``ws.store``)."""
    from cartograph.storage.base import history_limit

    keep = history_limit(ws)
    if ws.store is None:
        from cartograph.storage.files import FileStore

        return FileStore(ws, history=keep)
    from cartograph.storage.pg import PgStore

    return PgStore(ws, ws.store, history=keep)


def load_verified(ws: Workspace, trust: TrustStore | None = None) -> LoadedCards:
    """Every card of ``ws``'s store that verifies (under ``trust``, else the home's trust store);
    the rest as failures with reasons."""
    return open_store(ws).load_verified(trust)


def open_index(
    ws: Workspace, embedder: Embedder | None = None, *, rebuild: bool = False
) -> ToolIndex:
    """The index over ``ws``'s verified cards (loaded if current, else rebuilt)."""
    from cartograph.index.store import open_index as open_with

    return open_with(ws, open_store(ws), embedder, rebuild=rebuild)
