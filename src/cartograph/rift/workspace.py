"""Rift over a workspace: read verified cards and the index, and regenerate flagged cards.

This is Rift's only I/O, through the store its caller opened
(:func:`cartograph.storage.open_store`). :func:`run_rift` analyses the store's index
(``open_index``, which verifies every card again) with the cards' summaries and signed input
schemas, and scores margins with discover's own ranking (:func:`discover_ranker`).
:func:`regenerate` rewrites the flagged tools (:func:`cartograph.rift.analyze.flagged_tools`):
it finds the snapshot each card was generated from (by ``provenance.snapshot_hash``), calls the
bootstrap generator with ``distinguish_from`` (tool -> its rivals, on any server) and the rival
servers' snapshots, signs with the workspace key, writes the card through the store, rebuilds
the index and runs Rift again."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from cartograph import clock
from cartograph.cards.model import Card
from cartograph.errors import CartographError, IndexError_, SnapshotError
from cartograph.index.intent import tool_action
from cartograph.rift.analyze import RankScores, RiftConfig, RiftTool, analyze
from cartograph.rift.flagged import flagged_tools
from cartograph.rift.report import RiftReport
from cartograph.upstream.snapshot import ServerSnapshot, find_recorded_server
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cartograph.index import ToolIndex
    from cartograph.storage import Store

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RiftInputs:
    tools: list[RiftTool]
    vectors: np.ndarray
    embed: Callable[[list[str]], np.ndarray]
    rank: RankScores | None = None


def discover_ranker(index: ToolIndex) -> RankScores:
    """Discover's own scores (the default method) of every tool for each synthetic query.

    The same evidence as ``ToolIndex.evidence`` (dense cosine, BM25, server cosines), taken for
    a block of queries with one matrix product each instead of one per query, then fused by
    ``hybrid_scores`` with the index's own weights and divided by its dense weight, so that the
    dense term reads as a z-score (``score_rows`` turns that into cosine units). The query vector
    is the one Rift embedded; a synthetic query is one task, so the step term (which reads
    multi-step requests) is left out. The action term reads the action the query's leading
    tool name says (:func:`named_action`) beside the clause openers discover reads: a user asks
    for ``ha_config_set_script`` with "set", where the name-led query opens with "ha config".
    The frame term embeds each block's frames (:func:`~cartograph.index.query.task_frame`) in
    one batch, as discover embeds a task's.
    """
    from cartograph.index.methods import Evidence, hybrid_scores
    from cartograph.index.query import task_frame

    tools = np.asarray(index.tool_vectors, dtype=np.float32)
    centroids = np.asarray(index.centroids, dtype=np.float32)
    servers = np.asarray(index.server_vectors, dtype=np.float32)
    params = index.hybrid_params

    def frame_cosines(texts: list[str]) -> dict[int, np.ndarray]:
        frames = {k: f for k, text in enumerate(texts) if (f := task_frame(text)) is not None}
        if not frames:
            return {}
        vecs = np.asarray(index.embed_queries(list(frames.values())), dtype=np.float32)
        return dict(zip(frames, vecs @ tools.T, strict=True))

    def rank(texts: list[str], vecs: np.ndarray) -> np.ndarray:
        q = np.asarray(vecs, dtype=np.float32)
        tool_cos, centroid_cos, server_cos = q @ tools.T, q @ centroids.T, q @ servers.T
        frame_cos = frame_cosines(texts) if params.w_frame else {}
        out = np.empty((len(texts), tools.shape[0]), dtype=np.float64)
        for k, text in enumerate(texts):
            ev = Evidence(
                tool_cos=tool_cos[k],
                centroid_cos=centroid_cos[k],
                server_cos=server_cos[k],
                bm25=index.lexical.scores(text),
                coverage=index.lexical.coverage(text),
                action=index.actions.agreement(text, named_action(text))
                if params.w_action
                else None,
                frame_cos=frame_cos.get(k),
                tool_server=index.tool_server,
                n_servers=len(index.servers),
            )
            out[k] = hybrid_scores(ev, params) / params.w_dense
        return out

    return rank


def named_action(query: str) -> frozenset[str]:
    """The action the tool name that opens a synthetic query leads with ("ha config set scene
    for scene id ..." asks to update, though no clause opens with "set"): the task is written
    from that tool's name, so it asks for what the name does, as a user asking for that tool
    would with a verb."""
    head = query.split(" for ", 1)[0].split(" with ", 1)[0]
    return tool_action(head.replace(" ", "_"))


def tools_from_cards(
    cards: Mapping[str, Card], tool_ids: list[tuple[str, str]], lexical: list[str] | None = None
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
    """The store's indexed tools, their vectors, the index's query embedder and discover's
    ranking."""
    from cartograph.index import embed_queries, open_index_with_status

    index, status = open_index_with_status(ws, store)
    cards = status.cards
    lexical = [d.lexical for d in index.documents] if index.documents else None
    tools = tools_from_cards(cards, index.tool_ids, lexical)
    embedder = index.embedder

    def embed(texts: list[str]) -> np.ndarray:
        return embed_queries(embedder, texts)

    vectors = np.asarray(index.tool_vectors, dtype=np.float32)
    return RiftInputs(tools, vectors, embed, discover_ranker(index))


def run_rift(ws: Workspace, store: Store, config: RiftConfig | None = None) -> RiftReport:
    inputs = load_inputs(ws, store)
    return analyze(inputs.tools, inputs.vectors, inputs.embed, config, inputs.rank)


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
    """server -> tool -> the cluster mates (``server/tool``) to contrast it against."""
    out: dict[str, dict[str, list[str]]] = {}
    for (server, tool), mates in flagged_tools(report).items():
        out.setdefault(server, {}).setdefault(tool, []).extend(mates)
    return out


def find_server_snapshot(ws: Workspace, card: Card) -> ServerSnapshot:
    """The recorded server the card was generated from (matching snapshot hash, else newest)."""
    return find_recorded_server(ws.snapshots_dir, card.server, card.provenance.snapshot_hash)


def _generate(
    server: ServerSnapshot,
    created_at: str,
    snapshot_hash: str | None,
    context: dict[str, list[str]],
    rival_servers: dict[str, ServerSnapshot],
) -> Card:
    from cartograph.generate.bootstrap import generator as bootstrap

    generated = bootstrap.generate_card(
        server,
        created_at=created_at,
        snapshot_hash=snapshot_hash,
        distinguish_from=context,
        rival_servers=rival_servers,
    )
    return generated.card


def _rival_servers(
    ws: Workspace, cards: Mapping[str, Card], context: dict[str, list[str]], own: str
) -> dict[str, ServerSnapshot]:
    """Snapshots of the other servers named among the rivals (skipped when not recorded)."""
    out: dict[str, ServerSnapshot] = {}
    for name in sorted({o.partition("/")[0] for mates in context.values() for o in mates}):
        if name == own or name not in cards:
            continue
        try:
            out[name] = find_server_snapshot(ws, cards[name])
        except SnapshotError as exc:
            logger.warning("no contrast against %s: %s", name, exc)
    return out


def _changed(old: Card, new: Card, tools: dict[str, list[str]]) -> list[str]:
    return sorted(
        t
        for t in tools
        if (a := old.tool(t)) is not None
        and (b := new.tool(t)) is not None
        and (a.summary, a.usage) != (b.summary, b.usage)
    )


def regenerate(ws: Workspace, store: Store, config: RiftConfig | None = None) -> RegenerateResult:
    """Rewrite the flagged tools' cards with contrast, re-sign, re-index, rerun Rift.

    Flagged tools and their rivals come from :func:`flagged_tools` (rivals on any server).
    """
    from cartograph.cards.seal import sign_card
    from cartograph.index import open_index
    from cartograph.trust.keys import load_key

    before = run_rift(ws, store, config)
    result = RegenerateResult(before, context_passed=True)
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
            rivals = _rival_servers(ws, cards, context, server_name)
            new_card = _generate(snap_server, now, card.provenance.snapshot_hash, context, rivals)
        except CartographError as exc:
            result.failed[server_name] = str(exc)
            continue
        changed = _changed(card, new_card, context)
        same = sorted(set(context) - set(changed))
        if changed:
            result.rewritten[server_name] = changed
        if same:
            result.unchanged[server_name] = same
        store.write_card(sign_card(new_card, key, signed_at=now))
    open_index(ws, store, rebuild=True)
    result.after = run_rift(ws, store, config)
    return result
