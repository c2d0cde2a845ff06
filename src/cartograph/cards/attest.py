"""Attestation: turn a catalog snapshot into signed cards in the store.

This is the one place where generation, sealing and writing meet; ``cartograph bootstrap`` and
Rift's regenerate step call it. Cards for servers not named are left untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from cartograph.cards.model import Card
from cartograph.cards.seal import OperatorKey, sign_card
from cartograph.cards.store import write_card
from cartograph.errors import CartographError, UsageError
from cartograph.upstream.snapshot import Snapshot, utc_now
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

GENERATORS = ("bootstrap",)


@dataclass
class AttestResult:
    """What was written, and what each server's generation reported."""

    written: dict[str, Card] = field(default_factory=dict)
    dropped: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def attest_snapshot(
    ws: Workspace,
    snapshot: Snapshot,
    key: OperatorKey,
    *,
    generator: str = "bootstrap",
    servers: Iterable[str] | None = None,
    on_server: Callable[[str], None] | None = None,
) -> AttestResult:
    """Generate, sign and store a card for each (selected) server of ``snapshot``."""
    if generator not in GENERATORS:
        raise UsageError(f"unknown generator {generator!r}; choose one of {', '.join(GENERATORS)}")
    from cartograph.cards.bootstrap import generate_card

    wanted = set(servers) if servers is not None else None
    snap_hash = snapshot.digest()
    created = utc_now()
    result = AttestResult()
    for name, server in sorted(snapshot.servers.items()):
        if wanted is not None and name not in wanted:
            continue
        if server.error:
            result.failed[name] = server.error
            continue
        try:
            generated = generate_card(server, created_at=created, snapshot_hash=snap_hash)
            card = sign_card(generated.card, key, signed_at=created)
            write_card(ws, card)
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
