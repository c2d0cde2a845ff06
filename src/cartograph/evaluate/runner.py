"""Run query sets against a tool index with several methods, side by side.

Query vectors are embedded once per run and shared by every dense method. ``random`` is
reported as its expected value, not one draw.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cartograph.errors import UsageError
from cartograph.evaluate.metrics import (
    KS,
    MethodScores,
    first_hit_rank,
    summarise,
    summarise_random,
)
from cartograph.evaluate.queries import EvalQuery, Pair
from cartograph.index.embedders import query_and_step_vectors
from cartograph.index.methods import METHODS, Method
from cartograph.index.query import split_steps
from cartograph.index.tool_index import ToolIndex

logger = logging.getLogger(__name__)

DENSE = frozenset({"hybrid", "two-stage", "flat"})


@dataclass(frozen=True)
class Miss:
    """A query whose first hit was not in the top k: what came first instead."""

    id: str
    query: str
    expected: tuple[Pair, ...]
    rank: int | None
    top: tuple[Pair, ...]


@dataclass(frozen=True)
class MethodResult:
    scores: MethodScores
    misses: tuple[Miss, ...]


@dataclass(frozen=True)
class EvalReport:
    methods: dict[str, MethodResult]
    k: int
    missing_labels: int

    def as_json(self) -> dict[str, object]:
        return {"methods": {m: r.scores.as_json() for m, r in self.methods.items()}}


def run_eval(
    index: ToolIndex,
    queries: Sequence[EvalQuery],
    methods: Sequence[Method] = METHODS,
    *,
    k: int = 5,
    ks: Sequence[int] = KS,
    batch: int = 256,
) -> EvalReport:
    """Figures for every method in ``methods`` over ``queries`` (k sizes two-stage's stage 1)."""
    for m in methods:
        if m not in METHODS:
            raise UsageError(f"unknown method {m!r}; choose from: {', '.join(METHODS)}")
    hit_pos: list[list[int]] = []
    missing = 0
    for q in queries:
        pos = [p for p in (index.position(*pair) for pair in q.hits) if p is not None]
        if not pos:
            missing += 1
            logger.warning("query %s: none of its tools is in the index", q.id)
        hit_pos.append(pos)
    vecs = None
    steps: list[np.ndarray | None] = [None] * len(queries)
    if DENSE.intersection(methods) and queries:
        parts = [
            index.embed_queries([q.query for q in queries[i : i + batch]])
            for i in range(0, len(queries), batch)
        ]
        vecs = np.concatenate(parts)
        if "hybrid" in methods:
            steps = step_vectors(index, [q.query for q in queries], batch)
    results: dict[str, MethodResult] = {}
    n_tools = len(index)
    top_n = max(max(ks), k)
    for method in methods:
        if method == "random":
            cases = [(n_tools, len(p)) for p in hit_pos]
            results[method] = MethodResult(summarise_random(cases, ks), ())
            continue
        ranks: list[float | None] = []
        misses: list[Miss] = []
        for i, q in enumerate(queries):
            qv = vecs[i] if vecs is not None and method in DENSE else None
            scores = index.scores(q.query, method, k, query_vec=qv, step_vecs=steps[i])
            rank = first_hit_rank(scores, hit_pos[i])
            ranks.append(rank)
            if rank is None or rank > k:
                order = np.argsort(-scores, kind="stable")[:top_n]
                misses.append(
                    Miss(q.id, q.query, q.hits, rank, tuple(index.tool_ids[j] for j in order[:k]))
                )
        results[method] = MethodResult(summarise(ranks, ks), tuple(misses))
    return EvalReport(results, k, missing)


def step_vectors(index: ToolIndex, queries: Sequence[str], batch: int) -> list[np.ndarray | None]:
    """The vectors of each query's steps (None for single-step queries), made the way
    ``discover`` makes them (pooled from the query's own pass when the embedder can)."""
    split = [split_steps(q) for q in queries]
    if getattr(index.embedder, "embed_spans", None) is not None:
        return [
            query_and_step_vectors(index.embedder, q, parts)[1:] if parts else None
            for q, parts in zip(queries, split, strict=True)
        ]
    flat = [s for parts in split for s in parts]
    if not flat:
        return [None] * len(queries)
    vecs = np.concatenate(
        [index.embed_queries(flat[i : i + batch]) for i in range(0, len(flat), batch)]
    )
    out: list[np.ndarray | None] = []
    pos = 0
    for parts in split:
        out.append(vecs[pos : pos + len(parts)] if parts else None)
        pos += len(parts)
    return out
