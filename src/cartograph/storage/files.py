"""The file backend: everything in the workspace directory, one proxy per home.

::

    <home>/cards/<server>.card.json           the current signed card of each server (sealed)
    <home>/cards/<server>.alias.json          an alias record of a renamed import
    <home>/history/<server>/<N>.card.json     every kept version (storage.file_history)
    <home>/index/                             the retrieval index (cartograph.index.store)
    <home>/quarantine.json, <home>/logs/      the drift guard's ledger, the audit log
    <home>/replicas/<host>_<pid>.json         each serving replica's health (storage.health)
    <home>/jobs/<id>.json                     console actions for the operator (storage.jobs)

Cards are written atomically (temp file + rename) in the sealed layout and never rewritten on
load. :meth:`FileStore.load_verified` reads every card file and hands the bytes to the codec
(:mod:`cartograph.cards.codec`), which verifies them; a card with an alias record is then
renamed by it (:func:`cartograph.cards.federation.apply_alias`). The store is also the target
of ``cards import`` (:class:`cartograph.cards.federation.ImportTarget`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cartograph.cards.codec import (
    ALIAS_SUFFIX,
    CARD_SUFFIX,
    CardFailure,
    LoadedCards,
    StoredCard,
    read_verified,
    verify_stored_cards,
)
from cartograph.cards.model import Card
from cartograph.cards.seal import sealed_bytes
from cartograph.errors import CardError, CartographError, UsageError
from cartograph.files import atomic_write
from cartograph.storage.base import CardVersion, ResignResult, resign_cards, verified_version
from cartograph.storage.file_history import FileHistory, read_bytes
from cartograph.storage.file_state import AUDIT_FILE, QUARANTINE_FILE, FileAuditLog, FileLedger
from cartograph.storage.health import REPLICAS_DIR, FileHealthBoard
from cartograph.storage.jobs import JOBS_DIR, FileJobQueue
from cartograph.trust.keys import OperatorKey
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace, file_stamps, safe_file_name

if TYPE_CHECKING:
    from cartograph.index.embedders import Embedder
    from cartograph.index.store import IndexAction
    from cartograph.index.tool_index import ToolIndex


class FileStore:
    """The workspace files: cards, their history, the index, the quarantine and the audit log."""

    shared = False

    def __init__(self, ws: Workspace, *, history: int) -> None:
        self.ws = ws
        self.label = str(ws.root)
        self.cards_dir = ws.cards_dir
        self.cards_where = str(ws.cards_dir)
        self.index_where = str(ws.index_dir)
        self.history = FileHistory(ws.history_dir, history)

    # ------------------------------------------------------------------ cards

    def location(self, name: str) -> Path:
        return self.ws.card_path(name)

    def holds(self, name: str) -> bool:
        return self.location(name).exists()

    def write_card(self, card: Card) -> CardVersion:
        """Store ``card`` as its server's current card (a new version unless byte-identical)."""
        server = card.identity.server
        return self._write(self.location(server), sealed_bytes(card), server)

    def write_sealed(self, name: str, raw: bytes) -> CardVersion:
        return self._write(self.location(name), raw, name)

    def _write(self, path: Path, raw: bytes, server: str) -> CardVersion:
        """History first, then the current file: the current card is never newer than the
        newest version."""
        name = path.name[: -len(CARD_SUFFIX)]
        version = self.history.record(name, server, raw, path)
        try:
            unchanged = read_bytes(path) == raw
        except CardError:
            unchanged = False
        if not unchanged:
            atomic_write(path, raw)
        return version

    def remove_card(self, server: str) -> bool:
        """Delete the current card file of ``server`` and its alias record; history stays."""
        path = self.location(server)
        _alias_file(path).unlink(missing_ok=True)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def write_alias(self, name: str, record: bytes) -> Path:
        return atomic_write(_alias_file(self.location(name)), record)

    def card_files(self) -> list[Path]:
        return self._listing()[0]

    def _listing(self) -> tuple[list[Path], set[str]]:
        """Card files (sorted by name) and the names of alias records, in one directory scan."""
        try:
            names = [entry.name for entry in os.scandir(self.cards_dir)]
        except (FileNotFoundError, NotADirectoryError):
            return [], set()
        names.sort()
        root = self.cards_dir
        cards = [root / n for n in names if n.endswith(CARD_SUFFIX)]
        return cards, {n for n in names if n.endswith(ALIAS_SUFFIX)}

    def load_verified(
        self, trust: TrustStore | None = None, *, compact: bool = False
    ) -> LoadedCards:
        """Every card file that parses and verifies; the rest as failures with reasons."""
        trust = trust or TrustStore.for_workspace(self.ws)
        files, aliases = self._listing()
        failures: list[CardFailure] = []
        stored: list[StoredCard] = []
        for path in files:
            try:
                stored.append(StoredCard(path, str(path), read_bytes(path)))
            except CardError as exc:
                failures.append(CardFailure(path, None, str(exc), "malformed"))

        def check(record: StoredCard, card: Card) -> Card | CardFailure:
            alias = record.path.name[: -len(CARD_SUFFIX)] + ALIAS_SUFFIX
            if alias not in aliases:
                return card
            try:
                return _apply_alias(record.path, card, trust)
            except CartographError as exc:
                return CardFailure(record.path, card.identity.server, str(exc), "alias")

        loaded = verify_stored_cards(
            stored, trust, check=check if aliases else None, compact=compact
        )
        if failures:
            loaded.failures[:0] = failures
        return loaded

    def read_card(self, server: str, trust: TrustStore | None = None) -> Card:
        """One server's current card, verified (raises with the reason otherwise)."""
        path = self.location(server)
        if not path.is_file():
            raise UsageError(
                f"no card for server {server!r} in {self.cards_dir}; "
                "`cartograph cards list` shows what there is"
            )
        trust = trust or TrustStore.for_workspace(self.ws)
        card = read_verified(read_bytes(path), trust, source=str(path))
        if _alias_file(path).is_file():
            card = _apply_alias(path, card, trust)
        return card

    def cards_stamp(self) -> object:
        return file_stamps([self.cards_dir, *self.card_files()])

    def resign(
        self, key: OperatorKey, trust: TrustStore | None = None, *, include_peers: bool = False
    ) -> ResignResult:
        """Re-sign the verified cards with ``key`` in place (a renamed import becomes a card
        under its new name: its alias record is removed)."""
        trust = trust or TrustStore.for_workspace(self.ws)
        loaded = self.load_verified(trust)

        def write(server: str, card: Card) -> None:
            path = loaded.paths[server]
            self._write(path, sealed_bytes(card), server)
            _alias_file(path).unlink(missing_ok=True)  # the card now carries its own name

        return resign_cards(loaded, trust, key, write, include_peers=include_peers)

    def import_target(self) -> FileStore:
        return self

    # ------------------------------------------------------------------ history

    def card_history(self, server: str) -> list[CardVersion]:
        return self.history.versions(safe_file_name(server), server)

    def read_version(self, server: str, version: int, trust: TrustStore | None = None) -> Card:
        path, raw = self.history.read(safe_file_name(server), server, version)
        trust = trust or TrustStore.for_workspace(self.ws)
        return verified_version(raw, trust, server=server, version=version, where=str(path))

    def card_version(self, server: str, card: Card) -> int | None:
        sig = card.signature
        return self.history.find(safe_file_name(server), sig.value) if sig else None

    # ------------------------------------------------------------------ index and state

    def open_index(
        self, cards: Mapping[str, Card], embedder: Embedder, *, rebuild: bool
    ) -> tuple[ToolIndex, IndexAction, str | None]:
        from cartograph.index.store import open_file_index

        return open_file_index(self.ws.index_dir, cards, embedder, rebuild=rebuild)

    def index_info(self) -> dict[str, Any]:
        from cartograph.index.manifest import read_manifest

        manifest = read_manifest(self.ws.index_dir)
        return {
            "path": str(self.ws.index_dir),
            "tools": len(manifest["tools"]),
            "servers": len(manifest["servers"]),
            "embedder": manifest["embedder"],
            "card_digest": manifest["card_digest"],
            "built_at": manifest.get("built_at"),
            "build_seconds": manifest.get("build_seconds"),
            "files": len(manifest["files"]),
        }

    def quarantine_ledger(self) -> FileLedger:
        return FileLedger(self.ws.root / QUARANTINE_FILE)

    def health_board(self) -> FileHealthBoard:
        return FileHealthBoard(self.ws.root / REPLICAS_DIR)

    def job_queue(self) -> FileJobQueue:
        return FileJobQueue(self.ws.root / JOBS_DIR)

    def audit_log(self) -> FileAuditLog:
        return FileAuditLog(self.ws.logs_dir / AUDIT_FILE)


def _alias_file(card_path: Path) -> Path:
    return card_path.with_name(card_path.name[: -len(CARD_SUFFIX)] + ALIAS_SUFFIX)


def _apply_alias(path: Path, card: Card, trust: TrustStore) -> Card:
    from cartograph.cards.federation import apply_alias

    alias = _alias_file(path)
    try:
        record = alias.read_bytes()
    except OSError as exc:
        raise CardError(f"{alias}: cannot read: {exc.strerror}") from exc
    return apply_alias(record, alias, card, trust)
