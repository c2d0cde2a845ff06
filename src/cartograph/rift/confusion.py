"""Rift layer 1 by confusion: group the tools that discover's own ranking mixes up.

The paper's layer 1 groups tools whose *card vectors* are close (:mod:`.cluster`). Most tools an
agent actually confuses are not: on the fleet dev set 22 of 30 observed top-1 mistakes pair
tools whose card cosine is below 0.65. This grouping follows the ranking instead.

1. Every tool ``a`` of the catalog gets its synthetic query ``q_a`` (:mod:`.queries`, from its
   name and argument schema only; one query per style in ``styles``), scored against the whole
   catalog by the margin scorer (discover's ranking in cosine units by default).
2. **Edges**: ``a -> b`` for every other tool ``b`` with ``s(q_a, a) - s(q_a, b) < cutoff``
   (the MEDIUM threshold, 0.20): the pairs discover puts within MEDIUM reach. The edge keeps
   that margin (the smallest over ``a``'s queries). Substitutes (:mod:`.substitutes`: other
   servers' tools that do the same job) are edges too, so a group shows them, but layer 2
   never counts one as a rival: a group joined by substitutes alone is LOW, its pairs listed
   apart (as the cosine clusters did).
3. **Clusters**: connected components of the undirected edge graph. Components chain on large
   catalogs (a generic query sits within 0.20 of dozens of tools, and one bridge joins two
   servers: on the fleet one component held 2,093 of 2,598 tools), so each component of three
   or more tools is cut by average linkage on card cosine distance at ``1 - cap`` (0.55, chosen
   on tune data: ``benchmarks/rift_tune.py``) and only the parts that keep at least one edge
   inside are clusters. ``cap=None`` keeps whole components.

Risk is graded afterwards exactly as for cosine clusters (:mod:`.margin`: the smallest margin of
a member against its cluster mates other than its substitutes), which for a single query style
is the smallest non-substitute edge margin inside the group. Pure functions over arrays and
callables; no I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cartograph.rift.cluster import Cluster, cohesion, components, sort_clusters, split_component
from cartograph.rift.margin import RankScores, score_rows
from cartograph.rift.queries import QueryOptions, QueryStyle, synthetic_query

logger = logging.getLogger(__name__)

DEFAULT_CAP = 0.55
ToolSpec = tuple[str, str, Mapping[str, Any] | None]
"""(server, tool, input schema) of one indexed tool."""
Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class Edges:
    """Directed edges ``source[k] -> target[k]`` with ``margin[k]`` (cosine units), deduplicated."""

    source: np.ndarray
    target: np.ndarray
    margin: np.ndarray

    @property
    def size(self) -> int:
        return int(self.source.size)


def row_edges(row: np.ndarray, own: int, cutoff: float) -> list[tuple[int, float]]:
    """``(b, margin)`` for every tool ``b != own`` whose score on ``own``'s query is within
    ``cutoff`` of ``own``'s own score."""
    margins = float(row[own]) - np.asarray(row, dtype=np.float64)
    near = np.nonzero(margins < cutoff)[0]
    return [(int(b), float(margins[b])) for b in near.tolist() if b != own]


def catalog_edges(
    n: int,
    rows_of: Callable[[list[int]], np.ndarray],
    cutoff: float,
    block: int = 512,
) -> list[tuple[int, int, float]]:
    """``(a, b, margin)`` for every tool ``a`` of ``n``: ``rows_of(block)`` gives the scores
    (cosine units) of every tool on the queries of the tools in ``block``, a slab at a time."""
    found: list[tuple[int, int, float]] = []
    for start in range(0, n, block):
        rows = list(range(start, min(start + block, n)))
        for a, row in zip(rows, rows_of(rows), strict=True):
            found.extend((a, b, m) for b, m in row_edges(row, a, cutoff))
    return found


def merge_edges(found: Sequence[tuple[int, int, float]]) -> Edges:
    """One edge per ``(a, b)``, keeping the smallest margin (several queries per tool)."""
    best: dict[tuple[int, int], float] = {}
    for a, b, m in found:
        if m < best.get((a, b), np.inf):
            best[(a, b)] = m
    keys = sorted(best)
    return Edges(
        np.asarray([a for a, _ in keys], dtype=np.int64),
        np.asarray([b for _, b in keys], dtype=np.int64),
        np.asarray([best[k] for k in keys], dtype=np.float64),
    )


def confusion_clusters(vectors: np.ndarray, edges: Edges, cap: float | None) -> list[Cluster]:
    """Components of the edge graph, each cut at card cosine ``cap`` (module docstring)."""
    n = int(vectors.shape[0])
    comps = components(n, edges.source, edges.target)
    inside = _edge_pairs(edges)
    clusters: list[Cluster] = []
    for comp in comps:
        parts = [comp] if cap is None else split_component(vectors, comp, cap, "average")
        for members in parts:
            if _has_edge(members, inside):
                clusters.append(Cluster(tuple(int(i) for i in members), cohesion(vectors, members)))
    logger.info(
        "rift: %d confusion edges, %d components (largest %d), %d clusters",
        edges.size,
        len(comps),
        max((c.size for c in comps), default=0),
        len(clusters),
    )
    return sort_clusters(clusters)


def _edge_pairs(edges: Edges) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for a, b in zip(edges.source.tolist(), edges.target.tolist(), strict=True):
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return out


def _has_edge(members: np.ndarray, inside: dict[int, set[int]]) -> bool:
    keep = set(members.tolist())
    return any(inside.get(i, set()) & keep for i in keep)


@dataclass(frozen=True)
class ConfusionGraph:
    """How the graph is built: edge cutoff (the MEDIUM margin), cosine cap, query styles."""

    cutoff: float = 0.20
    cap: float | None = DEFAULT_CAP
    styles: tuple[QueryStyle, ...] = ("task",)
    query_options: QueryOptions = field(default_factory=QueryOptions)
    score: str = "discover"


def confusion_groups(
    ids: Sequence[ToolSpec],
    vectors: np.ndarray,
    embed: Embed,
    rank: RankScores | None,
    graph: ConfusionGraph,
) -> list[Cluster]:
    """Layer 1 by confusion over the whole catalog (module docstring). ``embed`` embeds the
    synthetic queries, ``rank`` gives discover's scores for them (None: cosine margins)."""
    v = np.asarray(vectors, dtype=np.float32)
    found: list[tuple[int, int, float]] = []
    for style in graph.styles:
        opts = replace(graph.query_options, style=style)
        texts = [synthetic_query(tool, schema, opts) for _, tool, schema in ids]
        qv = np.asarray(embed(texts), dtype=np.float32)

        def rows_of(rows: list[int], qv: np.ndarray = qv, texts: list[str] = texts) -> np.ndarray:
            return score_rows(qv[rows], [texts[i] for i in rows], v, rank, graph.score)

        found.extend(catalog_edges(len(ids), rows_of, graph.cutoff))
    return confusion_clusters(v, merge_edges(found), graph.cap)
