"""Rift over a workspace: read verified cards and the index, and regenerate diagnosed cards.

This is Rift's only I/O, through the store its caller opened
(:func:`cartograph.storage.open_store`). :func:`run_rift` analyses the store's index
(``open_index``, which verifies every card again) with the cards' summaries and signed input
schemas. :func:`regenerate`
rewrites the cards of servers whose tools were diagnosed ``REGENERATE``: it finds the snapshot each
card was generated from (by ``provenance.snapshot_hash``), calls the configured generator through
:mod:`cartograph.generate.bootstrap.generator`, signs with the workspace key, writes the card, and
rebuilds the index. When the generator's ``generate_card`` accepts a ``distinguish_from`` keyword
(tool name -> names of the tools it collides with) Rift passes the collisions; the bootstrap
generator has no such hook yet, so regeneration reproduces its deterministic card and the report
says so."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cartograph import clock
from cartograph.cards.model import Card
from cartograph.errors import CartographError, IndexError_, SnapshotError
from cartograph.rift.analyze import RiftConfig, RiftTool, analyze, regenerate_targets
from cartograph.rift.report import RiftReport
from cartograph.upstream.snapshot import ServerSnapshot, load_snapshot
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cartograph.storage import Store

logger = logging.getLogger(__name__)

CONTEXT_KEYWORD = "distinguish_from"


@dataclass(frozen=True)
class RiftInputs:
    tools: list[RiftTool]
    vectors: np.ndarray
    embed: Callable[[list[str]], np.ndarray]


def tools_from_cards(
    cards: dict[str, Card], tool_ids: list[tuple[str, str]], lexical: list[str] | None = None
) -> list[RiftTool]:
    """One :class:`RiftTool` per indexed tool, in index order; a tool without a card is an error."""
    out: list[RiftTool] = []
    for k, (server, name) in enumerate(tool_ids):
        card = cards.get(server)
        entry = card.tool(name) if card else None
        if entry is None:
            raise IndexError_(
                f"the index lists {server}/{name} but no verified card holds it; "
                "rebuild the index (`cartograph index build` or run any discover)"
            )
        text = lexical[k] if lexical is not None else entry.usage
        out.append(RiftTool(server, name, entry.summary, text, entry.input_schema))
    return out


def load_inputs(ws: Workspace, store: Store) -> RiftInputs:
    """The store's indexed tools, their vectors and the index's query embedder."""
    from cartograph.index import embed_queries, open_index_with_status

    index, status = open_index_with_status(ws, store)
    cards = status.cards
    lexical = [d.lexical for d in index.documents] if index.documents else None
    tools = tools_from_cards(cards, index.tool_ids, lexical)
    embedder = index.embedder

    def embed(texts: list[str]) -> np.ndarray:
        return embed_queries(embedder, texts)

    return RiftInputs(tools, np.asarray(index.tool_vectors, dtype=np.float32), embed)


def run_rift(ws: Workspace, store: Store, config: RiftConfig | None = None) -> RiftReport:
    inputs = load_inputs(ws, store)
    return analyze(inputs.tools, inputs.vectors, inputs.embed, config)


@dataclass
class RegenerateResult:
    """What ``--regenerate`` did, with the report before and after."""

    before: RiftReport
    after: RiftReport | None = None
    rewritten: dict[str, list[str]] = field(default_factory=dict)
    unchanged: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    context_passed: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "before": self.before.summary.model_dump(),
            "after": self.after.summary.model_dump() if self.after else None,
            "rewritten": self.rewritten,
            "unchanged": self.unchanged,
            "failed": self.failed,
            "context_passed": self.context_passed,
        }


def _collisions(report: RiftReport) -> dict[str, dict[str, list[str]]]:
    """server -> tool -> the other members of its REGENERATE cluster (``server/tool``)."""
    targets = regenerate_targets(report)
    out: dict[str, dict[str, list[str]]] = {}
    for cluster in report.clusters:
        for server, tool in cluster.members:
            if tool not in targets.get(server, set()):
                continue
            others = [f"{s}/{t}" for s, t in cluster.members if (s, t) != (server, tool)]
            out.setdefault(server, {}).setdefault(tool, []).extend(others)
    return out


def find_server_snapshot(ws: Workspace, card: Card) -> ServerSnapshot:
    """The recorded server the card was generated from (matching snapshot hash, else newest)."""
    files = (
        sorted(ws.snapshots_dir.glob("*.json"), reverse=True) if ws.snapshots_dir.is_dir() else []
    )
    fallback: ServerSnapshot | None = None
    for path in files:
        try:
            snap = load_snapshot(Path(path))
        except SnapshotError as exc:
            logger.warning("skipping snapshot %s: %s", path, exc)
            continue
        server = snap.servers.get(card.server)
        if server is None:
            continue
        if card.provenance.snapshot_hash and snap.digest() == card.provenance.snapshot_hash:
            return server
        fallback = fallback or server
    if fallback is None:
        raise SnapshotError(
            f"no snapshot in {ws.snapshots_dir} records server {card.server!r}; "
            "run `cartograph bootstrap` for it first"
        )
    logger.warning("%s: no snapshot matches the card's hash; using the newest", card.server)
    return fallback


def _generate(
    server: ServerSnapshot,
    created_at: str,
    snapshot_hash: str | None,
    context: dict[str, list[str]],
) -> tuple[Card, bool]:
    from cartograph.generate.bootstrap import generator as bootstrap

    params = inspect.signature(bootstrap.generate_card).parameters
    if CONTEXT_KEYWORD in params:
        kwargs = {CONTEXT_KEYWORD: context}
        generated = bootstrap.generate_card(
            server, created_at=created_at, snapshot_hash=snapshot_hash, **kwargs
        )
        return generated.card, True
    generated = bootstrap.generate_card(server, created_at=created_at, snapshot_hash=snapshot_hash)
    return generated.card, False


def regenerate(ws: Workspace, store: Store, config: RiftConfig | None = None) -> RegenerateResult:
    """Regenerate, re-sign and store the cards of REGENERATE tools; rerun Rift after."""
    from cartograph.cards.seal import sign_card
    from cartograph.index import open_index
    from cartograph.trust.keys import load_key

    before = run_rift(ws, store, config)
    result = RegenerateResult(before)
    collisions = _collisions(before)
    if not collisions:
        return result
    key = load_key(ws)
    cards = store.load_verified().cards
    now = clock.stamp()
    for server_name, context in sorted(collisions.items()):
        card = cards[server_name]
        try:
            snap_server = find_server_snapshot(ws, card)
            new_card, passed = _generate(snap_server, now, card.provenance.snapshot_hash, context)
        except CartographError as exc:
            result.failed[server_name] = str(exc)
            continue
        result.context_passed = result.context_passed or passed
        changed = sorted(
            t
            for t in context
            if (old := card.tool(t)) is not None
            and (new := new_card.tool(t)) is not None
            and (old.summary, old.usage) != (new.summary, new.usage)
        )
        same = sorted(set(context) - set(changed))
        if changed:
            result.rewritten[server_name] = changed
        if same:
            result.unchanged[server_name] = same
        store.write_card(sign_card(new_card, key, signed_at=now))
    open_index(ws, store, rebuild=True)
    result.after = run_rift(ws, store, config)
    return result
