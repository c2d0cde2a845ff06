"""Which discover answer offered a tool to a client session, for the audit log's call records.

Every discover answer gets an id (recorded in its audit entry); :class:`OfferBook` remembers,
per MCP client session, the tools each answer offered and at which rank. A call's audit entry
then names the latest answer that offered its tool (``offered_by``, ``rank``), or says that no
discover in that session offered it (``undiscovered``). Bounded: a session keeps its latest
:data:`MAX_OFFERS` tools, and the book its latest :data:`MAX_SESSIONS` sessions.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

MAX_OFFERS = 512
MAX_SESSIONS = 4096


@dataclass(frozen=True)
class Offer:
    """One tool as a discover answer offered it (rank 1 is the top)."""

    discover_id: str
    rank: int


def new_discover_id() -> str:
    """An id unique across replicas that share an audit log."""
    return "d-" + secrets.token_hex(8)


class OfferBook:
    """Offers per client session; safe to use from the event loop and worker threads."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, max_offers: int = MAX_OFFERS) -> None:
        self.max_sessions = max_sessions
        self.max_offers = max_offers
        self._sessions: OrderedDict[str, OrderedDict[tuple[str, str], Offer]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, session: str | None, discover_id: str, tools: list[tuple[str, str]]) -> None:
        """``tools`` (server, tool), best first, were offered by answer ``discover_id``."""
        key = session or "-"
        with self._lock:
            book = self._sessions.pop(key, None) or OrderedDict()
            self._sessions[key] = book
            for rank, tool in enumerate(tools, 1):
                book.pop(tool, None)
                book[tool] = Offer(discover_id, rank)
            while len(book) > self.max_offers:
                book.popitem(last=False)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)

    def lookup(self, session: str | None, server: str, tool: str) -> Offer | None:
        with self._lock:
            book = self._sessions.get(session or "-")
            return None if book is None else book.get((server, tool))

    def forget(self, session: str) -> None:
        """The session ended."""
        with self._lock:
            self._sessions.pop(session, None)
