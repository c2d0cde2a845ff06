"""Verified cards kept compact in memory, parsed back one tool or one card at a time.

A serving process holds every verified card for as long as it runs, but a discover reads a
handful of tool entries and a call one. Parsed, the 2,598 tools of the fleet's 99 cards hold
about 27 MB of pydantic models and JSON Schema dicts; compressed, about 2 MB. A
:class:`CardShelf` keeps, per server, the card without its tools (identity, capability,
provenance, signature), the tool names in card order, and each tool entry as zlib-compressed
JSON. :meth:`CardShelf.tool` parses one entry (a small cache keeps the recent ones);
``shelf[server]`` rebuilds the whole card, equal to the one shelved (a small cache keeps the
last few, for the drift guard and status pages).

Only cards that verified are shelved, and the bytes never leave this process, so parsing them
back needs no second verification.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from cartograph.cards.model import Card, ToolEntry

__all__ = ["CardShelf", "Shelved", "shelve"]

CARDS_KEPT = 4
"""Whole cards kept parsed (the drift guard's last servers, a status page)."""
TOOLS_KEPT = 256
"""Tool entries kept parsed: a few discovers' worth of answers."""


@dataclass(frozen=True)
class Shelved:
    """One card, compact: see the module docstring."""

    head: Card  # the card with an empty tool list: never digested or verified
    names: tuple[str, ...]  # in card order
    blobs: tuple[bytes, ...]  # zlib(JSON of each entry), in card order
    first: dict[str, int]  # tool name -> its first position (what Card.tool finds)

    @property
    def server(self) -> str:
        return self.head.identity.server


K = TypeVar("K")
V = TypeVar("V")


class _Recent(Generic[K, V]):
    """A small least-recently-used cache, safe across threads."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


class CardShelf(Mapping[str, Card]):
    """Verified cards by server name, compact; reads like a ``dict[str, Card]``."""

    def __init__(
        self,
        cards: Mapping[str, Card],
        *,
        cards_kept: int = CARDS_KEPT,
        tools_kept: int = TOOLS_KEPT,
    ) -> None:
        self._shelved = {name: shelve(card) for name, card in cards.items()}
        self._cards: _Recent[str, Card] = _Recent(cards_kept)
        self._tools: _Recent[tuple[str, str], ToolEntry] = _Recent(tools_kept)

    @classmethod
    def of_shelved(cls, shelved: dict[str, Shelved]) -> CardShelf:
        """A shelf of cards shelved one by one as they were read (what keeps the loading peak
        at one parsed card instead of all of them)."""
        shelf = cls({})
        shelf._shelved = shelved
        return shelf

    def __getitem__(self, server: str) -> Card:
        card = self._cards.get(server)
        if card is None:
            shelved = self._shelved[server]
            tools = [_parse(blob) for blob in shelved.blobs]
            card = shelved.head.model_copy(update={"tools": tools})
            self._cards.put(server, card)
        return card

    def __iter__(self) -> Iterator[str]:
        return iter(self._shelved)

    def __len__(self) -> int:
        return len(self._shelved)

    def __contains__(self, server: object) -> bool:
        return server in self._shelved

    def tool_names(self, server: str) -> tuple[str, ...]:
        """The tool names of ``server``'s card in card order (empty when it has no card)."""
        shelved = self._shelved.get(server)
        return shelved.names if shelved is not None else ()

    def tool_count(self) -> int:
        return sum(len(s.names) for s in self._shelved.values())

    def head(self, server: str) -> Card | None:
        """``server``'s card without its tools (identity, provenance, signature), or None."""
        shelved = self._shelved.get(server)
        return shelved.head if shelved is not None else None

    def tool(self, server: str, name: str) -> ToolEntry | None:
        """One tool's signed entry, or None when the card or the tool is not there."""
        shelved = self._shelved.get(server)
        if shelved is None or name not in shelved.first:
            return None
        key = (server, name)
        entry = self._tools.get(key)
        if entry is None:
            entry = _parse(shelved.blobs[shelved.first[name]])
            self._tools.put(key, entry)
        return entry

    def only(self, pairs: Iterable[tuple[str, str]]) -> dict[str, Card]:
        """Cards holding just the named ``(server, tool)`` entries, for rendering an answer.

        Partial cards: their digests are not the signed ones, so they are read, never checked.
        """
        wanted: dict[str, list[ToolEntry]] = {}
        for server, name in pairs:
            entry = self.tool(server, name)
            if entry is not None:
                wanted.setdefault(server, []).append(entry)
        return {
            server: self._shelved[server].head.model_copy(update={"tools": entries})
            for server, entries in wanted.items()
        }


def shelve(card: Card) -> Shelved:
    names = tuple(t.name for t in card.tools)
    blobs = tuple(zlib.compress(t.model_dump_json().encode("utf-8"), 1) for t in card.tools)
    first: dict[str, int] = {}
    for position, name in enumerate(names):
        first.setdefault(name, position)
    return Shelved(card.model_copy(update={"tools": []}), names, blobs, first)


def _parse(blob: bytes) -> ToolEntry:
    return ToolEntry.model_validate_json(zlib.decompress(blob))
