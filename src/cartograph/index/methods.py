"""Ranking methods by name: pure functions from query evidence to a full order of the tools.

Each method returns one score per tool (higher is better) so that every method yields a full
ranking (eval needs the rank of the first hit). Methods that only return some tools (two-stage)
rank the tools they keep above all others; the rest follow in flat cosine order.

* ``two-stage``  the paper: top-s servers by cosine to their centroid,
  ``s = min(m, max(2, floor(2k / n_avg) + 1))``, then top-k tools by cosine inside them.
* ``flat``       cosine over all tools.
* ``bm25``       BM25 over the card text.
* ``jaccard``    Jaccard of query tokens vs card tokens (the paper's keyword baseline).
* ``random``     a seeded shuffle (eval reports its expected values instead).
* ``hybrid``     dense + lexical fusion with server evidence, see :func:`hybrid_scores`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

METHODS: tuple[str, ...] = ("hybrid", "two-stage", "flat", "bm25", "jaccard", "random")
DEFAULT_METHOD = "hybrid"

_BELOW = -1e6  # pushes the tools a method did not keep below every kept tool


@dataclass(frozen=True)
class Evidence:
    """What the methods read for one query (all arrays indexed like the index's tools)."""

    tool_cos: np.ndarray  # (n,) cosine of the query to each tool vector
    centroid_cos: np.ndarray  # (m,) cosine of the query to each server centroid
    server_cos: np.ndarray  # (m,) cosine of the query to each server document vector
    bm25: np.ndarray  # (n,) BM25 of the query against each tool's card text
    tool_server: np.ndarray  # (n,) server index of each tool
    n_servers: int
    step_cos: np.ndarray | None = None  # (steps, n) cosine of each step of the query, if split


def stage_one_width(k: int, n_servers: int, n_tools: int) -> int:
    """The paper's ``s = min(m, max(2, floor(2k / n_avg) + 1))``."""
    if n_servers == 0:
        return 0
    n_avg = n_tools / n_servers
    return min(n_servers, max(2, math.floor(2 * k / n_avg) + 1))


def two_stage_scores(ev: Evidence, k: int) -> np.ndarray:
    s = stage_one_width(k, ev.n_servers, len(ev.tool_cos))
    keep = np.argsort(-ev.centroid_cos, kind="stable")[:s]
    inside = np.isin(ev.tool_server, keep)
    return np.where(inside, ev.tool_cos, ev.tool_cos + _BELOW)


RANK_DEPTH = 1000  # fusion ranks exactly this deep; below, every item shares one rank


def _ranks(scores: np.ndarray, depth: int = RANK_DEPTH) -> np.ndarray:
    """1-based rank of the top ``depth`` items under ``scores``; the rest get ``depth + 1``.

    Reciprocal-rank terms below the depth differ by less than 1e-6, so a partial sort keeps
    fusion cheap on 100k tools without changing the top of the ranking.
    """
    n = len(scores)
    if n <= depth:
        order = np.argsort(-scores, kind="stable")
        ranks = np.empty(n, dtype=np.float64)
        ranks[order] = np.arange(1, n + 1)
        return ranks
    top = np.argpartition(-scores, depth - 1)[:depth]
    top = top[np.argsort(-scores[top], kind="stable")]
    ranks = np.full(n, depth + 1, dtype=np.float64)
    ranks[top] = np.arange(1, depth + 1)
    return ranks


def _server_max(values: np.ndarray, tool_server: np.ndarray, n_servers: int) -> np.ndarray:
    out = np.full(n_servers, -np.inf, dtype=np.float64)
    np.maximum.at(out, tool_server, values.astype(np.float64))
    return out


@dataclass(frozen=True)
class HybridParams:
    """Weights of :func:`hybrid_scores` (see docs/benchmarks.md for how they were checked).

    BM25 weighs more than the dense channel because it reads the whole card text while the
    dense vector reads a short one: on BFCL live, equal or lower lexical weight fell below BM25
    alone; 1.5 beat it without moving LiveMCPBench or the fleet set.
    """

    rrf_k: float = 60.0
    w_dense: float = 1.0
    w_bm25: float = 1.5
    w_server: float = 0.5
    server_top: int = 8
    w_steps: float = 1.0


def hybrid_scores(ev: Evidence, p: HybridParams | None = None) -> np.ndarray:
    """Reciprocal-rank fusion of dense tool cosine, BM25, and a server-level channel.

    Tools that share no token with the query get no BM25 term. When the query names several
    steps (:func:`cartograph.index.query.split_steps`), each tool also gets its best
    reciprocal rank over the steps' dense rankings. The server channel ranks servers by the
    larger of their document cosine and their best tool cosine (max-sim instead of the
    centroid), fused with their best BM25 rank; each tool inherits its server's fused rank.
    Only the top ``server_top`` servers contribute.
    """
    p = p or HybridParams()
    r_dense = _ranks(ev.tool_cos)
    matched = ev.bm25 > 0
    r_bm25 = _ranks(ev.bm25) if np.any(matched) else None
    score = p.w_dense / (p.rrf_k + r_dense)
    if r_bm25 is not None:
        score = score + np.where(matched, p.w_bm25 / (p.rrf_k + r_bm25), 0.0)
    if p.w_steps > 0 and ev.step_cos is not None and len(ev.step_cos):
        best = np.max([1.0 / (p.rrf_k + _ranks(row)) for row in ev.step_cos], axis=0)
        score = score + p.w_steps * best
    if p.w_server > 0 and ev.n_servers > 1:
        srv_dense = np.maximum(
            ev.server_cos.astype(np.float64), _server_max(ev.tool_cos, ev.tool_server, ev.n_servers)
        )
        srv = 1.0 / (p.rrf_k + _ranks(srv_dense))
        if r_bm25 is not None:
            srv_bm = _server_max(ev.bm25, ev.tool_server, ev.n_servers)
            srv = srv + (p.w_bm25 / p.w_dense) / (p.rrf_k + _ranks(srv_bm))
        top = np.argsort(-srv, kind="stable")[: p.server_top]
        boost = np.zeros(ev.n_servers)
        boost[top] = srv[top]
        score = score + p.w_server * boost[ev.tool_server]
    return score.astype(np.float64)


def random_scores(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(n)
