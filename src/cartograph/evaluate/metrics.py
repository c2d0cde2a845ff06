"""Retrieval metrics over the rank of each query's first hit (pure functions, no I/O).

A query's rank is the 1-based position of the best-placed tool that counts as a hit (any
relevant or acceptable tool), or ``None`` when no such tool is in the index. ``R@k`` is the
share of queries with rank <= k (hit@k), MRR the mean of 1/rank (0 for ``None``), and
``mean_rank`` the mean rank over the queries that have one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

KS = (1, 3, 5)


@dataclass(frozen=True)
class MethodScores:
    """The figures eval prints for one method."""

    recall: dict[int, float]
    mrr: float
    mean_rank: float | None
    n: int

    def as_json(self) -> dict[str, float | int | None]:
        out: dict[str, float | int | None] = {f"R@{k}": round(v, 4) for k, v in self.recall.items()}
        out["MRR"] = round(self.mrr, 4)
        out["mean_rank"] = None if self.mean_rank is None else round(self.mean_rank, 2)
        out["n"] = self.n
        return out


def first_hit_rank(scores: np.ndarray, hits: Sequence[int]) -> int | None:
    """Rank of the best-scored hit under a stable descending sort of ``scores``."""
    if not hits:
        return None
    idx = np.asarray(hits, dtype=np.int64)
    best = int(idx[np.lexsort((idx, -scores[idx]))[0]])
    s = scores[best]
    above = int(np.count_nonzero(scores > s))
    tied_before = int(np.count_nonzero(scores[:best] == s))
    return above + tied_before + 1


def summarise(ranks: Sequence[float | None], ks: Sequence[int] = KS) -> MethodScores:
    """R@k, MRR and mean rank from per-query ranks (may be fractional expected ranks)."""
    n = len(ranks)
    if n == 0:
        return MethodScores({k: 0.0 for k in ks}, 0.0, None, 0)
    found = [r for r in ranks if r is not None]
    recall = {k: sum(1 for r in found if r <= k) / n for k in ks}
    mrr = sum(1.0 / r for r in found) / n
    mean_rank = sum(found) / len(found) if found else None
    return MethodScores(recall, mrr, mean_rank, n)


def _log_comb(n: int, k: int) -> float:
    if k < 0 or k > n:
        return -math.inf
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def expected_random(
    n: int, r: int, ks: Sequence[int] = KS
) -> tuple[dict[int, float], float, float]:
    """Expected hit@k, reciprocal rank and first-hit rank when ``r`` of ``n`` tools are hits
    and the order is uniformly random."""
    if r <= 0 or n <= 0:
        return {k: 0.0 for k in ks}, 0.0, math.nan
    total = _log_comb(n, r)
    recall = {
        k: 1.0 - math.exp(_log_comb(n - r, k) - _log_comb(n, k)) if k < n else 1.0 for k in ks
    }
    i = np.arange(1, n - r + 2)
    log_p = np.array([_log_comb(n - int(j), r - 1) for j in i]) - total
    rr = float(np.sum(np.exp(log_p) / i))
    return recall, rr, (n + 1) / (r + 1)


def summarise_random(cases: Sequence[tuple[int, int]], ks: Sequence[int] = KS) -> MethodScores:
    """Expected figures of a random order for queries given as (n tools, r hits present)."""
    if not cases:
        return MethodScores({k: 0.0 for k in ks}, 0.0, None, 0)
    recall = {k: 0.0 for k in ks}
    mrr = 0.0
    ranks: list[float] = []
    for n, r in cases:
        rec, rr, mr = expected_random(n, r, ks)
        for k in ks:
            recall[k] += rec[k]
        mrr += rr
        if r > 0:
            ranks.append(mr)
    m = len(cases)
    return MethodScores(
        {k: v / m for k, v in recall.items()},
        mrr / m,
        sum(ranks) / len(ranks) if ranks else None,
        m,
    )
