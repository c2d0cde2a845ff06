"""Rift layer 2: retrieval margins of each tool's synthetic query, and cluster risk.

``margin(a) = cos(q_a, v_a) - max over b != a of cos(q_a, v_b)``: how far ahead of its closest
rival tool ``a`` ranks for its own query. Negative means the rival wins. By default ``b`` ranges
over ``a``'s cluster (the paper's reading); scope ``"catalog"`` lets ``b`` range over every
indexed tool (stricter: a tool can lose to something outside its cluster). The cluster's risk is
graded on the smallest margin of its members. Pure functions over arrays, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import numpy as np

MarginScope = Literal["cluster", "catalog"]
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


@dataclass(frozen=True)
class ToolMargin:
    """One member's margin and the rival (row index) that came closest."""

    index: int
    margin: float
    self_score: float
    rival: int
    rival_score: float


def cluster_margins(
    queries: np.ndarray, vectors: np.ndarray, members: tuple[int, ...]
) -> list[ToolMargin]:
    """Margins of each member against the other members.

    ``queries`` holds the member queries' vectors in ``members`` order; ``vectors`` is the whole
    tool array (rows indexed by ``members``).
    """
    idx = np.asarray(members, dtype=np.int64)
    scores = np.asarray(queries, dtype=np.float64) @ np.asarray(vectors[idx], dtype=np.float64).T
    out = []
    for k, row in enumerate(scores):
        rivals = row.copy()
        rivals[k] = -np.inf
        r = int(np.argmax(rivals))
        out.append(
            ToolMargin(
                int(idx[k]), float(row[k] - row[r]), float(row[k]), int(idx[r]), float(row[r])
            )
        )
    return out


def catalog_margins(
    queries: np.ndarray, vectors: np.ndarray, members: tuple[int, ...], *, block: int = 256
) -> list[ToolMargin]:
    """Margins of each member against every other indexed tool (blocked over the queries)."""
    idx = np.asarray(members, dtype=np.int64)
    v = np.asarray(vectors, dtype=np.float32)
    q = np.asarray(queries, dtype=np.float32)
    out: list[ToolMargin] = []
    for start in range(0, idx.size, block):
        scores = q[start : start + block] @ v.T
        for k, row in enumerate(scores):
            own = int(idx[start + k])
            self_score = float(row[own])
            row[own] = -np.inf
            r = int(np.argmax(row))
            out.append(ToolMargin(own, self_score - float(row[r]), self_score, r, float(row[r])))
    return out


def margins(
    queries: np.ndarray,
    vectors: np.ndarray,
    members: tuple[int, ...],
    scope: MarginScope = "cluster",
) -> list[ToolMargin]:
    if scope == "catalog":
        return catalog_margins(queries, vectors, members)
    return cluster_margins(queries, vectors, members)
