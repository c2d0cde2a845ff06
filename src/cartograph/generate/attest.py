"""Attestation: turn a catalog snapshot into signed cards in the store.

This is the one place where generation, sealing and writing meet; ``cartograph bootstrap``
calls it with the store it opened (a :class:`CardSink`, such as :class:`cartograph.storage.Store`).
Cards for servers not named are left untouched. The generator is ``bootstrap`` (deterministic,
:mod:`cartograph.generate.bootstrap.generator`) or ``llm`` (the operator's model,
:mod:`cartograph.generate.llm.generator`, which needs LLM settings).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from cartograph import clock
from cartograph.cards.model import Card
from cartograph.cards.seal import sign_card
from cartograph.errors import CartographError, UsageError
from cartograph.generate import GENERATORS, GeneratorName
from cartograph.trust.keys import OperatorKey
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cartograph.generate.bootstrap.generator import GeneratedCard
    from cartograph.generate.llm.client import LLMSettings
    from cartograph.generate.llm.generator import LLMStats, OnTool

logger = logging.getLogger(__name__)


class CardSink(Protocol):
    """Where signed cards go (the workspace's store)."""

    def write_card(self, card: Card) -> object: ...


@dataclass
class AttestResult:
    """What was written, and what each server's generation reported."""

    written: dict[str, Card] = field(default_factory=dict)
    dropped: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    llm: LLMStats | None = None
    """Token usage, cache hits and fallbacks of an ``llm`` run (None for ``bootstrap``)."""


def _llm_cards(
    ws: Workspace,
    servers: list[ServerSnapshot],
    llm: LLMSettings | None,
    created: str,
    snap_hash: str,
    on_tool: OnTool | None,
    result: AttestResult,
) -> dict[str, GeneratedCard]:
    """The operator's LLM's cards for ``servers`` (by name); its token usage and the servers
    it failed on go into ``result``."""
    if llm is None:
        raise UsageError("the llm generator needs LLM settings (base_url, model)")
    from cartograph.generate.llm.cache import LLMCache
    from cartograph.generate.llm.generator import generate_llm_cards

    run = generate_llm_cards(
        servers,
        llm,
        LLMCache.for_workspace(ws),
        created_at=created,
        snapshot_hash=snap_hash,
        on_tool=on_tool,
    )
    result.llm = run.stats
    for name, exc in run.failed.items():
        result.failed[name] = str(exc)
    return run.cards


def attest_snapshot(
    ws: Workspace,
    snapshot: Snapshot,
    key: OperatorKey,
    *,
    store: CardSink,
    generator: GeneratorName = "bootstrap",
    servers: Iterable[str] | None = None,
    on_server: Callable[[str], None] | None = None,
    llm: LLMSettings | None = None,
    on_tool: OnTool | None = None,
) -> AttestResult:
    """Generate, sign and write to ``store`` a card for each (selected) server of ``snapshot``.

    With ``generator="llm"``, ``llm`` settings are required; ``on_tool`` reports each tool as it
    settles and ``on_server`` each server as it is signed.
    """
    if generator not in GENERATORS:
        raise UsageError(f"unknown generator {generator!r}; choose one of {', '.join(GENERATORS)}")
    from cartograph.generate.bootstrap.generator import generate_card

    wanted = set(servers) if servers is not None else None
    snap_hash = snapshot.digest()
    created = clock.stamp()
    result = AttestResult()
    chosen = [
        (name, s)
        for name, s in sorted(snapshot.servers.items())
        if wanted is None or name in wanted
    ]
    pre: dict[str, GeneratedCard] = {}
    if generator == "llm":
        pre = _llm_cards(
            ws, [s for _, s in chosen if not s.error], llm, created, snap_hash, on_tool, result
        )
    for name, server in chosen:
        if server.error:
            result.failed[name] = server.error
            continue
        if generator == "llm" and name not in pre:
            continue  # failed above, already reported
        try:
            generated = pre.get(name) or generate_card(
                server, created_at=created, snapshot_hash=snap_hash
            )
            card = sign_card(generated.card, key, signed_at=created)
            store.write_card(card)
        except CartographError as exc:
            logger.warning("server %s: card not written: %s", name, exc)
            result.failed[name] = str(exc)
        else:
            result.written[name] = card
            dropped = {t.name: list(t.dropped) for t in card.tools if t.dropped}
            if dropped:
                result.dropped[name] = dropped
        if on_server:
            on_server(name)
    return result
