"""The drift guard: live tools compared with the signed card, and the quarantine they feed.

:func:`compare` is pure: for each live tool it checks the card's ``input_schema_hash``
(``sha256_json(inputSchema)``) and ``description_hash`` (``sha256_text(description)``), and,
where the card records one, its ``output_schema_hash`` (``sha256_json(outputSchema)``: a signed
output schema that changed or went away is drift; a card without one, such as every card made
before output schemas were recorded, does not check it). A tool whose schema or description
changed, or that the card does not hold, is quarantined.
:class:`Quarantine` persists the held tools through the :class:`Ledger` its caller hands it (the
store's: ``<home>/quarantine.json``, or rows shared by every replica of a shared store, re-read
when another replica changed them; see :mod:`cartograph.storage`). An entry is lifted only when
the operator re-attests the server (a card with a different digest whose hashes match the live
tool again), never because the upstream changed back.

Prompts, resources and resource templates are guarded the same way, for a card that attests
them (made from a recorded listing): each is held under its key (``prompt:<name>``,
``resource:<uri>``, ``template:<uriTemplate>``, see :mod:`cartograph.cards.listing`) when its
shape or description changed, or when the card does not hold it. They are compared only when
the gateway hands a live listing over; a tools-only check leaves their entries as they are.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from cartograph import clock
from cartograph.canonical import sha256_json
from cartograph.cards.listing import live_hashes, live_items, signed_hashes, split_key
from cartograph.cards.model import Card
from cartograph.cards.seal import card_version_digest

logger = logging.getLogger(__name__)

DriftKind = Literal["changed", "new"]
DriftField = Literal["input_schema", "description", "output_schema"]
DriftEvent = Literal["quarantined", "lifted"]


@dataclass(frozen=True)
class Drift:
    """One live tool that does not match its signed card entry."""

    tool: str
    kind: DriftKind
    fields: tuple[DriftField, ...]  # which hashes differ


@dataclass(frozen=True)
class HeldTool:
    """A quarantined tool: why, when, and against which card."""

    server: str
    tool: str
    reason: str
    detected_at: str
    card_digest: str  # card_version_digest of the card it was held against
    live_schema_hash: str | None = None
    live_description_hash: str | None = None


def compare(
    card: Card,
    live_tools: list[dict[str, Any]],
    listings: dict[str, list[dict[str, Any]]] | None = None,
) -> list[Drift]:
    """Every live tool (and, with ``listings`` and a card that attests them, every listed
    prompt, resource and template) that is new or whose shape or description differs."""
    items = [(str(tool.get("name", "")), tool) for tool in live_tools]
    if listings is not None and card.attests_listings:
        items.extend(live_items(listings))
    drifts: list[Drift] = []
    for key, item in items:
        signed = signed_hashes(card, key)
        if signed is None:
            drifts.append(Drift(key, "new", ()))
            continue
        shape, description = live_hashes(key, item)
        fields: list[DriftField] = []
        if shape != signed[0]:
            fields.append("input_schema")
        if description != signed[1]:
            fields.append("description")
        if _output_changed(card, key, item):
            fields.append("output_schema")
        if fields:
            drifts.append(Drift(key, "changed", tuple(fields)))
    return drifts


def _output_changed(card: Card, key: str, item: dict[str, Any]) -> bool:
    """Whether a live tool's outputSchema differs from the one its card entry signed (only for
    an entry that records one)."""
    entry = card.tool(key) if split_key(key)[0] is None else None
    if entry is None or entry.output_schema_hash is None:
        return False
    return sha256_json(item.get("outputSchema")) != entry.output_schema_hash


def describe(drift: Drift) -> str:
    kind, _ = split_key(drift.tool)
    if drift.kind == "new":
        return f"new {kind or 'tool'} the signed card does not hold"
    shape = "input schema" if kind is None else "arguments" if kind == "prompt" else "name or type"
    names = {"input_schema": shape, "description": "description", "output_schema": "output schema"}
    what = " and ".join(names[f] for f in drift.fields)
    return f"{what} changed since the card was signed"


class Ledger(Protocol):
    """Where held tools are kept. ``shared``: other processes may change it (then ``stamp``
    changes too, and the quarantine re-reads it)."""

    shared: bool
    where: str

    def stamp(self) -> object: ...

    def load(self) -> list[HeldTool]: ...

    def commit(
        self, held: dict[tuple[str, str], HeldTool], added: list[HeldTool], removed: list[HeldTool]
    ) -> None: ...


REFRESH_INTERVAL = 1.0  # seconds between looks at a shared ledger


class Quarantine:
    """Tools held back by the drift guard, persisted in the workspace or the shared store."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        self._lock = threading.RLock()  # discover's worker threads read and may lift entries
        self._held: dict[tuple[str, str], HeldTool] = {}
        self._stamp: object = None
        self._checked_at = 0.0
        self._load()

    def _load(self) -> None:
        try:
            self._stamp = self.ledger.stamp()
            rows = self.ledger.load()
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            # Fail closed would hide every tool forever; keep serving and say so loudly.
            logger.error(
                "%s: unreadable quarantine (%s); starting with none", self.ledger.where, exc
            )
            return
        self._held = {(h.server, h.tool): h for h in rows}
        self._checked_at = time.monotonic()

    def _refresh(self) -> None:
        """Re-read a shared ledger when another replica changed it (at most once a second)."""
        if not self.ledger.shared or time.monotonic() - self._checked_at < REFRESH_INTERVAL:
            return
        with self._lock:
            if time.monotonic() - self._checked_at < REFRESH_INTERVAL:
                return
            self._checked_at = time.monotonic()
            if self.ledger.stamp() != self._stamp:
                self._load()

    def _save(self, added: list[HeldTool], removed: list[HeldTool]) -> None:
        self.ledger.commit(self._held, added, removed)  # a shared ledger is re-read next look

    def get(self, server: str, tool: str) -> HeldTool | None:
        self._refresh()
        return self._held.get((server, tool))

    def held(self, server: str | None = None) -> list[HeldTool]:
        self._refresh()
        with self._lock:
            items = sorted(self._held.items())
        return [h for (s, _), h in items if server is None or s == server]

    def apply(
        self,
        card: Card,
        live_tools: list[dict[str, Any]],
        listings: dict[str, list[dict[str, Any]]] | None = None,
    ) -> list[HeldTool]:
        """Check one server's live tools (and ``listings``) against its card; hold what drifted,
        lift what was re-attested. Returns the entries newly held."""
        with self._lock:
            return self._apply(card, live_tools, listings)

    def _apply(
        self,
        card: Card,
        live_tools: list[dict[str, Any]],
        listings: dict[str, list[dict[str, Any]]] | None,
    ) -> list[HeldTool]:
        server = card.server
        digest = card_version_digest(card)
        drifts = {d.tool: d for d in compare(card, live_tools, listings)}
        live = {str(t.get("name", "")): t for t in live_tools}
        if listings is not None:
            live.update(live_items(listings))
        added: list[HeldTool] = []
        removed: list[HeldTool] = []
        for (s, tool), held in list(self._held.items()):
            if s != server or tool in drifts:
                continue
            if listings is None and split_key(tool)[0] is not None:
                continue  # not looked at this time
            if held.card_digest != digest:
                del self._held[(s, tool)]
                removed.append(held)
                self._emit("lifted", server, tool, "re-attested by a newer signed card", digest)
        for tool, drift in drifts.items():
            current = self._held.get((server, tool))
            if current is not None and current.card_digest == digest:
                continue
            held = HeldTool(
                server, tool, describe(drift), clock.stamp(), digest, *live_hashes(tool, live[tool])
            )
            self._held[(server, tool)] = held
            added.append(held)
            logger.warning("quarantined %s/%s: %s", server, tool, held.reason)
            self._emit("quarantined", server, tool, held.reason, digest)
        if added or removed:
            self._save(added, removed)
        return added

    def reconcile(self, card: Card) -> list[HeldTool]:
        """Lift held tools of ``card``'s server that a newer card re-attests: it either holds
        exactly the live version the guard saw, or no longer holds the tool at all."""
        with self._lock:
            return self._reconcile(card)

    def _reconcile(self, card: Card) -> list[HeldTool]:
        digest = card_version_digest(card)
        lifted = []
        for (server, tool), held in list(self._held.items()):
            if server != card.server or held.card_digest == digest:
                continue
            signed = signed_hashes(card, tool)
            if signed is None or signed == (held.live_schema_hash, held.live_description_hash):
                del self._held[(server, tool)]
                lifted.append(held)
                self._emit("lifted", server, tool, "re-attested by a newer signed card", digest)
        if lifted:
            self._save([], lifted)
        return lifted

    def _emit(self, event: DriftEvent, server: str, tool: str, reason: str, digest: str) -> None:
        for listener in self.listeners:
            listener(
                {
                    "event": event,
                    "server": server,
                    "tool": tool,
                    "reason": reason,
                    "card_digest": digest,
                }
            )
