"""The proxy's own tools' input check: ``call``'s fast path says what the compiled schema says."""

from __future__ import annotations

from typing import Any

import pytest

from cartograph.proxy.tools import _VALIDATORS, check_input  # pyright: ignore[reportPrivateUsage]

CALLS: list[dict[str, Any]] = [
    {"server": "time", "tool": "get_current_time", "arguments": {"timezone": "UTC"}},
    {"server": "time", "tool": "get_current_time"},
    {"server": "time", "tool": "now", "arguments": {}, "extra": 1},
    {"server": "time"},
    {"tool": "now"},
    {"server": 3, "tool": "now"},
    {"server": "time", "tool": None},
    {"server": "time", "tool": "now", "arguments": None},
    {"server": "time", "tool": "now", "arguments": [1, 2]},
    {"server": "time", "tool": "now", "arguments": "{}"},
    {},
]


@pytest.mark.parametrize("arguments", CALLS)
def test_the_call_fast_path_agrees_with_the_schema(arguments: dict[str, Any]) -> None:
    by_schema = [e.message for e in _VALIDATORS["call"].iter_errors(arguments)]
    problems = check_input("call", arguments)
    assert bool(problems) == bool(by_schema)
    assert len(problems) == len(by_schema)


def test_a_bad_call_names_each_wrong_field() -> None:
    problems = check_input("call", {"server": 3, "arguments": []})
    assert any(p.startswith("server:") for p in problems)
    assert any(p.startswith("arguments:") for p in problems)
    assert any("'tool' is a required property" in p for p in problems)


def test_discover_is_still_checked_by_its_schema() -> None:
    assert check_input("discover", {"task": "x", "k": 99})
    assert not check_input("discover", {"task": "x", "k": 3})
