"""Evaluation: query sets, retrieval metrics (R@k, MRR, mean rank) and the eval runner.

Names resolve on first access, so that importing a submodule (the CLI's option lists) does
not load the whole package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
