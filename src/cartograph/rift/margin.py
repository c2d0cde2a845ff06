"""Rift layer 2: retrieval margins of each tool's synthetic query, and cluster risk.

``margin(a) = s(q_a, a) - max over b != a of s(q_a, b)``: how far ahead of its closest rival
tool ``a`` ranks for its own query. Negative means the rival wins. ``s`` is the paper's cosine
(``margin_score="cosine"``) or the score discover ranks by, in cosine units (``"discover"``,
see :mod:`cartograph.rift.analyze`). By default ``b`` ranges over ``a``'s cluster (the paper's
reading); scope ``"catalog"`` lets ``b`` range over every indexed tool (stricter: a tool can
lose to something outside its cluster). A member's substitutes (other servers' tools that do the
same job, :mod:`cartograph.rift.substitutes`) are not its rivals. The cluster's risk is graded on
the smallest margin of its members. Pure functions over arrays, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import numpy as np

MarginScope = Literal["cluster", "catalog"]
RankScores = Callable[[list[str], np.ndarray], np.ndarray]
"""(query texts, their vectors) -> ``(len, n)`` scores discover ranks every tool by."""
RiskLevel = Literal["HIGH", "MEDIUM", "LOW"]
"""A cluster's risk as reports carry it (the value of :class:`Risk`)."""


class Risk(StrEnum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"

    @property
    def rank(self) -> int:
        return {"HIGH": 2, "MEDIUM": 1, "LOW": 0}[self.value]


@dataclass(frozen=True)
class MarginThresholds:
    """HIGH below ``high``, MEDIUM below ``medium``, else LOW (the paper's 0.10 / 0.20)."""

    high: float = 0.10
    medium: float = 0.20

    def grade(self, margin_min: float) -> Risk:
        if margin_min < self.high:
            return Risk.HIGH
        if margin_min < self.medium:
            return Risk.MEDIUM
        return Risk.LOW


@dataclass(frozen=True)
class CohesionThresholds:
    """Risk without margins (ablation and baselines): HIGH at or above ``high`` cohesion."""

    high: float = 0.85
    medium: float = 0.75

    def grade(self, cohesion: float) -> Risk:
        if cohesion >= self.high:
            return Risk.HIGH
        if cohesion >= self.medium:
            return Risk.MEDIUM
        return Risk.LOW


def score_rows(
    qv: np.ndarray, texts: list[str], vectors: np.ndarray, rank: RankScores | None, how: str
) -> np.ndarray:
    """Scores of every tool for each query, in cosine units: the cosine (``how="cosine"`` or
    no ``rank``), or discover's score times the query's cosine spread over the catalog.

    Discover's score is ``z(cos)`` plus lexical and server terms; times the spread it reads in
    cosine units, and equals the cosine margin when the other terms agree.
    """
    cos = qv @ vectors.T
    if how == "cosine" or rank is None:
        return cos
    spread = cos.std(axis=1, keepdims=True)
    return np.asarray(rank(texts, qv), dtype=np.float64) * spread


@dataclass(frozen=True)
class ToolMargin:
    """One member's margin and the rival (row index) that came closest."""

    index: int
    margin: float
    self_score: float
    rival: int
    rival_score: float


def row_margin(
    row: np.ndarray,
    own: int,
    members: Sequence[int],
    scope: MarginScope = "cluster",
    exclude: Set[tuple[int, int]] = frozenset(),
) -> ToolMargin:
    """One tool's margin from its own query's scores of every indexed tool (``row``).

    Rivals are the other ``members`` (scope ``"cluster"``) or every other tool (``"catalog"``),
    minus the pairs in ``exclude`` (``(own, rival)`` row indices: the tool's substitutes). A tool
    with no rival left gets margin ``inf`` and rival ``-1``.
    """
    row = np.asarray(row, dtype=np.float64)
    cols = np.asarray(members, dtype=np.int64) if scope == "cluster" else np.arange(row.size)
    rivals = row[cols].copy()
    banned = [c for c, j in enumerate(cols.tolist()) if j == own or (own, j) in exclude]
    rivals[banned] = -np.inf
    if rivals.size == 0 or not np.isfinite(rivals.max()):
        return ToolMargin(own, math.inf, float(row[own]), -1, -math.inf)
    rival = int(cols[int(np.argmax(rivals))])
    return ToolMargin(own, float(row[own] - row[rival]), float(row[own]), rival, float(row[rival]))


def score_margins(
    scores: np.ndarray,
    members: tuple[int, ...],
    scope: MarginScope = "cluster",
    exclude: Set[tuple[int, int]] = frozenset(),
) -> list[ToolMargin]:
    """Each member's margin; row ``k`` of ``scores`` (cosine units) is for ``members[k]``'s
    query and scores every indexed tool (see :func:`row_margin`)."""
    return [
        row_margin(row, int(own), members, scope, exclude)
        for row, own in zip(np.asarray(scores), members, strict=True)
    ]


def cosine_margins(
    queries: np.ndarray,
    vectors: np.ndarray,
    members: tuple[int, ...],
    scope: MarginScope = "cluster",
) -> list[ToolMargin]:
    """The paper's margins: ``cos(q_a, v_a) - max cos(q_a, v_b)`` (``queries`` in member order)."""
    scores = np.asarray(queries, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    return score_margins(scores, members, scope)
