"""Evaluation: query sets, retrieval metrics (R@k, MRR, mean rank) and the eval runner."""

from __future__ import annotations

from cartograph.evaluate.metrics import MethodScores, expected_random, summarise
from cartograph.evaluate.queries import EvalQuery, load_queries, parse_query
from cartograph.evaluate.runner import EvalReport, MethodResult, Miss, run_eval

__all__ = [
    "EvalQuery",
    "EvalReport",
    "MethodResult",
    "MethodScores",
    "Miss",
    "expected_random",
    "load_queries",
    "parse_query",
    "run_eval",
    "summarise",
]
