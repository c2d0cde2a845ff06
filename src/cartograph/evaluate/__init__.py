"""Evaluation: query sets, retrieval metrics (R@k, MRR, mean rank) and the eval runner.

Names resolve on first access, so that importing a submodule (the CLI's option lists) does
not load the whole package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cartograph.lazy import exports

if TYPE_CHECKING:  # resolved lazily at run time, see __getattr__
    from cartograph.evaluate.metrics import MethodScores, expected_random, summarise
    from cartograph.evaluate.queries import EvalQuery, load_queries, parse_query
    from cartograph.evaluate.runner import EvalReport, MethodResult, Miss, run_eval

_EXPORTS: dict[str, tuple[str, str]] = {
    "MethodScores": ("cartograph.evaluate.metrics", "MethodScores"),
    "expected_random": ("cartograph.evaluate.metrics", "expected_random"),
    "summarise": ("cartograph.evaluate.metrics", "summarise"),
    "EvalQuery": ("cartograph.evaluate.queries", "EvalQuery"),
    "load_queries": ("cartograph.evaluate.queries", "load_queries"),
    "parse_query": ("cartograph.evaluate.queries", "parse_query"),
    "EvalReport": ("cartograph.evaluate.runner", "EvalReport"),
    "MethodResult": ("cartograph.evaluate.runner", "MethodResult"),
    "Miss": ("cartograph.evaluate.runner", "Miss"),
    "run_eval": ("cartograph.evaluate.runner", "run_eval"),
}

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


__getattr__, __dir__ = exports(__name__, globals(), _EXPORTS)
