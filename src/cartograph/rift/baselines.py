"""Rift baselines (the paper's Table 4): groupings without Rift's clustering or margins.

- ``cosine``: connected components of the ``cos >= theta`` graph over the tool vectors
  (:func:`cartograph.rift.cluster.threshold_groups`); no margins.
- ``jaccard``: connected components of the graph joining two tools whose card-token sets have
  Jaccard similarity ``> 0.25``; no embeddings at all. Computed as a blocked sparse product
  of the binary tool x token matrix, so ~10k tools need no dense ``n x n`` array.

Risk without margins is graded on cohesion (see :class:`cartograph.rift.margin.CohesionThresholds`
and :class:`JaccardThresholds`). Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from cartograph.rift.cluster import components
from cartograph.rift.margin import Risk

DEFAULT_JACCARD = 0.25


@dataclass(frozen=True)
class JaccardThresholds:
    """Risk for Jaccard groups by their mean pairwise Jaccard similarity."""

    high: float = 0.50
    medium: float = 0.35

    def grade(self, mean_jaccard: float) -> Risk:
        if mean_jaccard >= self.high:
            return Risk.HIGH
        if mean_jaccard >= self.medium:
            return Risk.MEDIUM
        return Risk.LOW


def token_matrix(token_sets: Sequence[frozenset[str]]) -> csr_matrix:
    """Binary ``tools x vocabulary`` matrix (float32)."""
    vocab: dict[str, int] = {}
    indptr = [0]
    indices: list[int] = []
    for toks in token_sets:
        for t in sorted(toks):
            indices.append(vocab.setdefault(t, len(vocab)))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float32)
    return csr_matrix((data, indices, indptr), shape=(len(token_sets), max(len(vocab), 1)))


def jaccard_edges(
    token_sets: Sequence[frozenset[str]], threshold: float = DEFAULT_JACCARD, *, block: int = 512
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs ``(i, j)``, ``i < j``, with Jaccard ``> threshold``, and their Jaccard values."""
    x = token_matrix(token_sets)
    xt = x.T.tocsc()
    sizes = np.asarray(x.sum(axis=1)).ravel()
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    n = len(token_sets)
    for start in range(0, n, block):
        stop = min(start + block, n)
        inter = (x[start:stop] @ xt).tocoo()
        i = inter.row.astype(np.int64) + start
        j = inter.col.astype(np.int64)
        keep = j > i
        i, j, common = i[keep], j[keep], inter.data[keep]
        union = sizes[i] + sizes[j] - common
        jac = np.divide(common, union, out=np.zeros_like(common), where=union > 0)
        hit = jac > threshold
        rows.append(i[hit])
        cols.append(j[hit])
        vals.append(jac[hit])
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def jaccard_groups(
    token_sets: Sequence[frozenset[str]], threshold: float = DEFAULT_JACCARD
) -> list[tuple[tuple[int, ...], float]]:
    """Components of the Jaccard graph with their mean pairwise Jaccard, most similar first."""
    rows, cols, _ = jaccard_edges(token_sets, threshold)
    out = []
    for comp in components(len(token_sets), rows, cols):
        members = tuple(int(i) for i in comp)
        out.append((members, mean_pairwise_jaccard([token_sets[i] for i in members])))
    return sorted(out, key=lambda g: (-g[1], -len(g[0]), g[0]))


def mean_pairwise_jaccard(sets: Sequence[frozenset[str]], *, block: int = 512) -> float:
    """Mean Jaccard over all pairs, from sparse intersections a row block at a time.

    Pairs that share no token contribute 0, so only the non-zero intersections are visited and
    a 9,000-tool group never needs a dense 9,000 x 9,000 array.
    """
    k = len(sets)
    if k < 2:
        return 1.0
    x = token_matrix(sets)
    xt = x.T.tocsc()
    sizes = np.asarray(x.sum(axis=1)).ravel()
    total = 0.0
    for start in range(0, k, block):
        inter = (x[start : start + block] @ xt).tocoo()
        i = inter.row.astype(np.int64) + start
        j = inter.col.astype(np.int64)
        keep = j != i
        common = inter.data[keep]
        union = sizes[i[keep]] + sizes[j[keep]] - common
        total += float(np.divide(common, union, out=np.zeros_like(common), where=union > 0).sum())
    return total / (k * (k - 1))
