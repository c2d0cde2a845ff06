"""The proxy's view of the signed cards, and the drift guard wired to them.

:class:`CardCatalog` holds the cards that verify, reloads them when the card store changes (on
disk, or in a shared store another replica or the CLI wrote to: a re-attestation by
``cartograph bootstrap --server NAME`` takes effect without a restart), and names each card
version by its digest and, looked up in the store's history when first asked, its version
number. :class:`CardGuard` is the gateway's
:class:`~cartograph.gateway.base.Guard`: live tools are compared with these cards and drifted
tools are held in the workspace quarantine.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from cartograph.cards.codec import CardFailure
from cartograph.cards.model import ToolEntry
from cartograph.cards.seal import card_version_digest
from cartograph.cards.shelf import CardShelf
from cartograph.errors import CartographError, ToolNotFound, ToolQuarantined
from cartograph.gateway.drift import HeldTool, Quarantine
from cartograph.storage import Store
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace, file_stamps

logger = logging.getLogger(__name__)

REFRESH_INTERVAL = 1.0  # seconds between looks at the card store


@dataclass(frozen=True)
class CardRef:
    """Which signed card text stands behind an answer."""

    digest: str
    key_id: str | None
    signed_at: str | None


class CardCatalog:
    """Verified cards by server name; call :meth:`refresh` before reading."""

    def __init__(self, ws: Workspace, store: Store) -> None:
        self.ws = ws
        self.store = store
        self.cards = CardShelf({})
        self.failures: list[CardFailure] = []
        self.refs: dict[str, CardRef] = {}
        self._stamp: tuple[Any, ...] | None = None
        self.generation = 0  # bumped on every reload
        self._checked_at = 0.0
        self._lock = threading.Lock()
        self._versions: dict[tuple[str, str], int | None] = {}
        self.refresh()

    def _current_stamp(self) -> tuple[Any, ...]:
        keys = [
            self.ws.public_key,
            self.ws.trusted_dir,
            self.ws.keys_dir / "trust.json",  # trust store (cartograph.trust.store)
        ]
        return (self.store.cards_stamp(), *file_stamps(keys))

    def refresh(self) -> bool:
        """Reload when any card or key file changed; returns True when it reloaded.

        The store and the key files are looked at no more than once per ``REFRESH_INTERVAL``
        seconds, so a re-attestation takes effect within that time without costing every call.
        """
        return self._look()

    def poll(self) -> bool:
        """:meth:`refresh` for tools/list and the background watch (proxy/brief.py), apart from
        discover's and call's own refreshes so that those can be counted."""
        return self._look()

    def _look(self) -> bool:
        now = time.monotonic()
        if self._stamp is not None and now - self._checked_at < REFRESH_INTERVAL:
            return False
        with self._lock:  # the event loop and discover's worker threads both refresh
            return self._reload(now)

    def _reload(self, now: float) -> bool:
        if self._stamp is not None and now - self._checked_at < REFRESH_INTERVAL:
            return False
        self._checked_at = now
        stamp = self._current_stamp()
        if stamp == self._stamp:
            return False
        loaded = self.store.load_verified(TrustStore.for_workspace(self.ws), compact=True)
        cards = loaded.cards
        self.cards = cards if isinstance(cards, CardShelf) else CardShelf(cards)
        self.failures = loaded.failures
        self.refs = {
            name: CardRef(
                card_version_digest(card),
                card.signature.key_id if card.signature else None,
                card.signature.signed_at if card.signature else None,
            )
            for name, card in loaded.cards.items()
        }
        self._stamp = stamp
        self.generation += 1
        logger.info(
            "loaded %d verified card(s), %d tool(s); %d failed",
            len(self.cards),
            self.cards.tool_count(),
            len(self.failures),
        )
        for failure in self.failures:
            logger.warning("card left out: %s", failure.reason)
        return True

    def card_version(self, server: str) -> int | None:
        """The store's version number of the card now served for ``server`` (None when the
        history does not hold it, e.g. a card written before history was kept)."""
        card = self.cards.head(server)
        if card is None or card.signature is None:
            return None
        key = (server, card.signature.value)
        if key not in self._versions:
            try:
                self._versions[key] = self.store.card_version(server, card)
            except CartographError as exc:
                logger.warning("%s: card version unknown: %s", server, exc)
                return None
        return self._versions[key]

    def entry(self, server: str, tool: str) -> ToolEntry:
        """The signed entry for ``server``/``tool`` or :class:`ToolNotFound` saying what exists."""
        if server not in self.cards:
            known = ", ".join(sorted(self.cards)[:30]) or "none"
            raise ToolNotFound(
                f"no signed card for server {server!r}; use discover to find tools "
                f"(servers with cards: {known})"
            )
        entry = self.cards.tool(server, tool)
        if entry is None:
            raise ToolNotFound(
                f"server {server!r} has no tool {tool!r} in its signed card; use discover to find "
                f"the right tool ({len(self.cards.tool_names(server))} tools on this server)"
            )
        return entry


class CardGuard:
    """The drift guard: live tools vs signed cards, held tools refused.

    It reads the catalog as the proxy last refreshed it (once per discover, status and call);
    a card re-attested since is picked up by :meth:`held`, which compares card digests.
    """

    def __init__(self, catalog: CardCatalog, quarantine: Quarantine) -> None:
        self.catalog = catalog
        self.quarantine = quarantine

    def check(
        self,
        server: str,
        tools: list[dict[str, Any]],
        listings: dict[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        card = self.catalog.cards.get(server)
        if card is None:
            logger.info("%s: no signed card; nothing of it is callable", server)
            return
        self.quarantine.apply(card, tools, listings)

    def held(self, server: str, tool: str) -> HeldTool | None:
        """The quarantine entry of a tool, after lifting it if a newer card re-attested it."""
        held = self.quarantine.get(server, tool)
        if held is None:
            return None
        ref = self.catalog.refs.get(server)
        if ref is not None and ref.digest != held.card_digest:
            self.quarantine.reconcile(self.catalog.cards[server])
            held = self.quarantine.get(server, tool)
        return held

    def admit(self, server: str, tool: str) -> None:
        held = self.held(server, tool)
        if held is not None:
            raise ToolQuarantined(
                f"{server}/{tool} is quarantined by the drift guard since {held.detected_at}: "
                f"{held.reason}. It cannot be called until the operator reviews it and "
                f"re-attests the server (`cartograph bootstrap --server {server}`)"
            )
