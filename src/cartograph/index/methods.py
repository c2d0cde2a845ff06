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
* ``hybrid``     learned score fusion of dense and lexical evidence, see :func:`hybrid_scores`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cartograph.index.names import DEFAULT_METHOD as DEFAULT_METHOD  # re-exported
from cartograph.index.names import METHODS as METHODS  # re-exported
from cartograph.index.names import Method as Method  # re-exported
from cartograph.index.names import calibration_id

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
    dense_stats: tuple[float, float] | None = None  # mean, std of tool_cos over ALL tools
    step_stats: list[tuple[float, float]] | None = None  # the same per step row
    """Given by a store whose ``tool_cos`` holds only the nearest tools (see cosine_stats);
    None when ``tool_cos`` is complete and its own statistics are exact."""
    coverage: np.ndarray | None = None  # (n,) share of the query's indexed words each tool holds
    name_share: np.ndarray | None = None  # (n,) share of each tool name's tokens the query holds
    server_name_share: np.ndarray | None = None  # (n,) the same for each tool's server name
    action: np.ndarray | None = None  # (n,) +1/-1/0: the tool's action agrees with the task's
    frame_cos: np.ndarray | None = None  # (n,) cosine of the task's frame (query.task_frame)
    frame_stats: tuple[float, float] | None = None  # as dense_stats, for frame_cos


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


RANK_DEPTH = 1000
"""How many nearest tools a store that cannot scan them all (HNSW) returns; below it a tool's
dense evidence is approximated (see docs/scale-out.md)."""


def _server_max(values: np.ndarray, tool_server: np.ndarray, n_servers: int) -> np.ndarray:
    out = np.full(n_servers, -np.inf, dtype=np.float64)
    np.maximum.at(out, tool_server, values.astype(np.float64))
    return out


@dataclass(frozen=True)
class HybridParams:
    """Weights of :func:`hybrid_scores` (docs/benchmarks.md says how they were chosen).

    The defaults were fitted by ``benchmarks/fusion_fit.py`` (pairwise logistic regression,
    L2 C = 1, each set weighted alike) on the protocol's tune parts and the fleet dev set, with
    the stock MiniLM and the shipped cards. ``w_bm25`` is negative because the BM25 term is
    ``bm25 / max(bm25) * (w_bm25 + w_bm25_strength * ln(1 + max(bm25)))``: lexical evidence
    counts for a query whose best BM25 match is strong (max above ``e^1.61 - 1`` = 4.0) and
    against one whose best match is a weak, common word. The rank terms give the head of each
    list a bonus that z-scores flatten; coverage is the share of the query's indexed words a
    tool's text holds, which BM25's saturating sum does not see; the action term
    (:mod:`.intent`) is +1 where the verb leading a tool's name does what the task's clauses ask
    (create, read, update, delete), -1 where the task asks for other actions only (refitted with
    it on 2026-12-07). ``w_steps`` and ``w_server``
    (the per-step and server channels of the hand-set fusion before it) took no weight when
    fitted with the rest and stay 0. ``w_frame`` weighs ``z`` of the cosines of the task's
    frame (:func:`~cartograph.index.query.task_frame`: what it asks without what it is about);
    fitted with the rest it took 0.32 and helped the fleet's tune tasks, but lowered R@5 on
    three test parts and added an embedding per task, so it stays 0 (docs/benchmarks.md,
    "Frame channel").
    """

    w_dense: float = 0.935
    w_bm25: float = -7.441
    w_bm25_strength: float = 4.672
    w_dense_rank: float = 0.61
    w_bm25_rank: float = 0.471
    w_coverage: float = 3.719
    w_steps: float = 0.0
    w_server: float = 0.0
    w_name: float = 0.0
    w_server_name: float = 0.0
    w_action: float = 0.796
    w_frame: float = 0.0

    @classmethod
    def hand_set(cls, w_bm25: float, w_steps: float, w_server: float) -> HybridParams:
        """The hand-set fusion used until 2026-12-05: ``z(dense) + w_bm25 * bm25 / max(bm25)
        + w_steps * max_step z(step) + w_server * z(server)`` (fusion_grid's variants)."""
        return cls(
            w_dense=1.0,
            w_bm25=w_bm25,
            w_bm25_strength=0.0,
            w_dense_rank=0.0,
            w_bm25_rank=0.0,
            w_coverage=0.0,
            w_action=0.0,
            w_frame=0.0,
            w_steps=w_steps,
            w_server=w_server,
        )


HAND_SET = HybridParams.hand_set(w_bm25=4.5, w_steps=0.5, w_server=0.15)
"""The hand-set fusion that was the default before the fitted one (kept for comparison)."""

HYBRID_BY_MODEL: dict[str, HybridParams] = {
    # benchmarks/fusion_fit.py --embedder minilm-tools (2026-12-07): on the two tune sets it was
    # not trained beside (fleet dev, fleet held-out tune), leave one set out, the stock model's
    # fitted weights give R@1 0.753 / 0.796 against 0.740 / 0.765 for its own refit and 0.623 /
    # 0.745 for the hand-set weights it had since 2026-12-03 (BM25 0.75, steps 0.5, server
    # 0.3), R@5 within a task of either (docs/models.md, "Fusion weights")
    "cartograph/minilm-tools@c3a19581ca9e": HybridParams(),
}
"""Fusion weights chosen for one embedding model (by exact weights); others get the defaults."""


def hybrid_params_for(model: str | None) -> HybridParams:
    """The fusion weights chosen for ``model`` (its id), else :class:`HybridParams`'s defaults."""
    return HYBRID_BY_MODEL.get(calibration_id(model), HybridParams())


def _standardise(values: np.ndarray, stats: tuple[float, float] | None = None) -> np.ndarray:
    """``(values - mean) / std``, with ``stats`` = (mean, std) when given, else the values' own."""
    x = values.astype(np.float64)
    mean, std = stats if stats is not None else (float(x.mean()), float(x.std()))
    return (x - mean) / (std if std > 1e-12 else 1.0)


def cosine_stats(moments: tuple[np.ndarray, np.ndarray], q: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of ``q``'s cosine over every tool, from the tool vectors'
    mean ``mu`` and second moment ``M = V^T V / n``: ``q.mu`` and ``sqrt(q^T M q - (q.mu)^2)``.

    Exact, and O(d^2) instead of O(n d): a store that only returns the nearest tools (HNSW)
    still standardises the way the full scan does.
    """
    mu, second = moments
    qd = q.astype(np.float64)
    mean = float(qd @ mu)
    var = float(qd @ second @ qd) - mean * mean
    return mean, math.sqrt(max(var, 0.0))


def hybrid_scores(ev: Evidence, p: HybridParams | None = None) -> np.ndarray:
    """Score-level fusion of the query's dense and lexical evidence (the sum of
    :func:`hybrid_parts`).

    ``w_dense * z(dense) + bm25 / max(bm25) * (w_bm25 + w_bm25_strength * ln(1 + max(bm25)))
    + w_dense_rank / (1 + dense rank) + w_bm25_rank / (1 + BM25 rank) + w_coverage * coverage
    + w_action * action + w_frame * z(frame)``
    (and, where weighted, ``w_steps * max_step z(step) + w_server * z(server)``), where ``z``
    standardises a query's cosines over all tools so a confident dense match keeps its margin,
    ranks count from 0 and a tool that shares no indexed word with the query gets no lexical
    term. See :class:`HybridParams` for how the weights were fitted.
    """
    parts = hybrid_parts(ev, p)
    score = parts.pop("dense")
    for term in parts.values():
        score += term
    return score


def _reciprocal_rank(values: np.ndarray) -> np.ndarray:
    """``1 / (1 + rank)`` of each value in descending order (rank 0 = the highest)."""
    order = np.argsort(-values, kind="stable")
    out = np.empty(len(values), dtype=np.float64)
    out[order] = 1.0 / np.arange(1, len(values) + 1)
    return out


def hybrid_parts(ev: Evidence, p: HybridParams | None = None) -> dict[str, np.ndarray]:
    """The terms of :func:`hybrid_scores`, by channel (``dense``, and ``bm25``, ``rank``,
    ``coverage``, ``action``, ``frame``, ``steps``, ``server`` where they apply): what each
    contributed to each tool's score (the console's discover playground shows them)."""
    p = p or HybridParams()
    parts = {"dense": p.w_dense * _standardise(ev.tool_cos, ev.dense_stats)}
    top = float(ev.bm25.max()) if len(ev.bm25) else 0.0
    rank = p.w_dense_rank * _reciprocal_rank(ev.tool_cos) if p.w_dense_rank else None
    if top > 0:
        lexical = ev.bm25.astype(np.float64) / top
        parts["bm25"] = lexical * (p.w_bm25 + p.w_bm25_strength * math.log1p(top))
        if p.w_bm25_rank:
            matched = p.w_bm25_rank * np.where(lexical > 0, _reciprocal_rank(lexical), 0.0)
            rank = matched if rank is None else rank + matched
    if rank is not None:
        parts["rank"] = rank
    if p.w_coverage and ev.coverage is not None and top > 0:
        parts["coverage"] = p.w_coverage * ev.coverage.astype(np.float64)
    if p.w_name and ev.name_share is not None:
        parts["name"] = p.w_name * ev.name_share.astype(np.float64)
    if p.w_server_name and ev.server_name_share is not None:
        parts["server_name"] = p.w_server_name * ev.server_name_share.astype(np.float64)
    if p.w_action and ev.action is not None:
        parts["action"] = p.w_action * ev.action.astype(np.float64)
    if p.w_frame and ev.frame_cos is not None:
        parts["frame"] = p.w_frame * _standardise(ev.frame_cos, ev.frame_stats)
    if p.w_steps > 0 and ev.step_cos is not None and len(ev.step_cos):
        stats = ev.step_stats or [None] * len(ev.step_cos)
        parts["steps"] = p.w_steps * np.max(
            [_standardise(row, st) for row, st in zip(ev.step_cos, stats, strict=True)], axis=0
        )
    if p.w_server > 0 and ev.n_servers > 1:
        srv = np.maximum(
            ev.server_cos.astype(np.float64), _server_max(ev.tool_cos, ev.tool_server, ev.n_servers)
        )
        parts["server"] = p.w_server * _standardise(srv)[ev.tool_server]
    return parts


def random_scores(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(n)
