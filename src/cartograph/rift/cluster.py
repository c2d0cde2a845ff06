"""Rift layer 1: confusable clusters by agglomerative clustering over cosine distance.

Pure functions over an ``(n, d)`` array of L2-normalised tool vectors; no I/O.

Method (our reading of the paper, which does not name its linkage): **average linkage** (UPGMA)
on cosine distance ``1 - cos``, dendrogram cut at distance ``1 - theta`` (theta 0.65 by default),
clusters of two or more tools kept. Single and complete linkage are selectable.

Scale. A dense ``n x n`` float64 distance matrix and one global linkage is O(n^2) memory and far
too slow for ~10k tools, so we cluster in two steps that give *exactly* the same clusters:

1. The threshold graph: an edge joins ``i`` and ``j`` when ``cos(v_i, v_j) >= theta``. It is
   found by a blocked float32 matrix product (a ``block x n`` slab at a time) that keeps only
   the sparse edges; its connected components come from :mod:`scipy.sparse.csgraph`.
2. Per component of two or more tools, :func:`scipy.cluster.hierarchy.linkage` on that
   component's condensed float64 cosine distances, cut at ``1 - theta``.

Why this is exact. For single, complete and average linkage the distance between two clusters
``A`` and ``B`` is the minimum, maximum or mean of the pairwise distances ``d(a, b)``; each of
these is at least ``min d(a, b)``. So ``A`` and ``B`` can merge at a height ``<= 1 - theta`` only
if some pair ``(a, b)`` is within the cut, i.e. joined by an edge of the threshold graph; by
induction no cluster below the cut spans two components. These three linkages are *reducible*,
so the dendrogram is monotone: every merge below the cut happens before any merge above it, and
while the global algorithm works below the cut its closest pair of clusters within a component
is the component's own closest pair. Running the linkage per component therefore reproduces the
global dendrogram below the cut. The graph is built with a small slack (``theta - 1e-6``) so
float32 rounding can only add edges (which merges components, never splits a true cluster).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from cartograph.errors import UsageError

logger = logging.getLogger(__name__)

Linkage = Literal["average", "single", "complete"]

DEFAULT_THETA = 0.65
DEFAULT_LINKAGE: Linkage = "average"
_SLACK = 1e-6


@dataclass(frozen=True)
class Cluster:
    """A group of two or more tools (row indices into the vector array), and its cohesion."""

    members: tuple[int, ...]
    cohesion: float


def check_theta(theta: float) -> None:
    if not 0.0 < theta < 1.0:
        raise UsageError(f"theta must be strictly between 0 and 1, got {theta}")


def threshold_edges(
    vectors: np.ndarray, theta: float, *, block: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``, ``i < j``, with ``cos >= theta``, by blocked float32 products.

    Memory is ``block * n`` floats for the slab plus the edges themselves.
    """
    check_theta(theta)
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    n = v.shape[0]
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    cut = np.float32(theta - _SLACK)
    for start in range(0, n, block):
        stop = min(start + block, n)
        # only columns j > i are needed: the slab against the rest of the array
        sims = v[start:stop] @ v[start:].T
        i, j = np.nonzero(sims >= cut)
        j = j + start
        i = i + start
        keep = j > i
        rows.append(i[keep])
        cols.append(j[keep])
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(rows).astype(np.int64), np.concatenate(cols).astype(np.int64)


def components(n: int, rows: np.ndarray, cols: np.ndarray) -> list[np.ndarray]:
    """Connected components of size >= 2 of the graph on ``n`` nodes with the given edges."""
    if n == 0 or rows.size == 0:
        return []
    graph = coo_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n)).tocsr()
    count, labels = connected_components(graph, directed=False)
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=count)
    out: list[np.ndarray] = []
    start = 0
    for size in sizes:
        if size >= 2:
            out.append(np.sort(order[start : start + size]))
        start += size
    return out


def cohesion(vectors: np.ndarray, members: np.ndarray | tuple[int, ...]) -> float:
    """Mean pairwise cosine of the members (vectors are L2-normalised).

    ``sum over i != j of v_i . v_j = |sum v|^2 - sum |v_i|^2``, so a 9,000-tool group costs
    O(k d), not a k x k matrix.
    """
    idx = np.asarray(members, dtype=np.int64)
    if idx.size < 2:
        return 1.0
    sub = np.asarray(vectors[idx], dtype=np.float64)
    total = sub.sum(axis=0)
    k = idx.size
    return float((total @ total - np.einsum("ij,ij->", sub, sub)) / (k * (k - 1)))


def condensed_cosine_distances(vectors: np.ndarray, *, block: int = 512) -> np.ndarray:
    """``1 - cos`` for every pair ``i < j`` in SciPy's condensed order, as float64.

    Filled a row block at a time, so the peak is the condensed array plus one
    ``block x n`` slab (a dense ``n x n`` matrix is never formed).
    """
    v = np.asarray(vectors, dtype=np.float64)
    n = v.shape[0]
    out = np.empty(n * (n - 1) // 2, dtype=np.float64)
    for start in range(0, n - 1, block):
        stop = min(start + block, n - 1)
        sims = v[start:stop] @ v[start:].T  # rows start..stop-1 against columns start..n-1
        for r in range(stop - start):
            i = start + r
            offset = i * n - i * (i + 1) // 2  # index of pair (i, i + 1)
            out[offset : offset + n - i - 1] = 1.0 - sims[r, r + 1 :]
    np.clip(out, 0.0, 2.0, out=out)
    return out


def split_component(
    vectors: np.ndarray, comp: np.ndarray, theta: float, method: Linkage
) -> list[np.ndarray]:
    """The clusters of >= 2 tools of one component (row indices ``comp``): ``method`` linkage
    on its cosine distances, cut at ``1 - theta``; a pair is kept whole."""
    if comp.size == 2:
        return [comp]  # the one edge is within the cut, whatever the linkage
    z = linkage(condensed_cosine_distances(vectors[comp]), method=method)
    labels = fcluster(z, t=1.0 - theta, criterion="distance")
    out = []
    for label in np.unique(labels):
        members = comp[labels == label]
        if members.size >= 2:
            out.append(members)
    return out


def agglomerative_clusters(
    vectors: np.ndarray,
    theta: float = DEFAULT_THETA,
    *,
    method: Linkage = DEFAULT_LINKAGE,
    block: int = 1024,
) -> list[Cluster]:
    """Layer 1: clusters of >= 2 tools, largest and most cohesive first (see module docstring)."""
    check_theta(theta)
    if method not in ("average", "single", "complete"):
        raise UsageError(f"unknown linkage {method!r}; use average, single or complete")
    n = int(vectors.shape[0])
    rows, cols = threshold_edges(vectors, theta, block=block)
    comps = components(n, rows, cols)
    logger.info(
        "rift: %d tools, %d edges at theta %.2f, %d components (largest %d)",
        n,
        rows.size,
        theta,
        len(comps),
        max((c.size for c in comps), default=0),
    )
    clusters: list[Cluster] = []
    for comp in comps:
        for members in split_component(vectors, comp, theta, method):
            clusters.append(Cluster(tuple(int(i) for i in members), cohesion(vectors, members)))
    return sort_clusters(clusters)


def threshold_groups(vectors: np.ndarray, theta: float = DEFAULT_THETA) -> list[Cluster]:
    """Baseline: connected components of the ``cos >= theta`` graph, no clustering step."""
    rows, cols = threshold_edges(vectors, theta)
    comps = components(int(vectors.shape[0]), rows, cols)
    return sort_clusters([Cluster(tuple(int(i) for i in c), cohesion(vectors, c)) for c in comps])


def sort_clusters(clusters: list[Cluster]) -> list[Cluster]:
    return sorted(clusters, key=lambda c: (-c.cohesion, -len(c.members), c.members))
