"""Argument validation: every wrong field listed with its path; broken schemas checked leniently."""

from __future__ import annotations

import pytest

from cartograph.errors import ArgumentsInvalid
from cartograph.proxy.validate import validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "depth": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def test_every_wrong_field_is_listed_with_its_path() -> None:
    with pytest.raises(ArgumentsInvalid) as caught:
        validate_arguments("fs", "walk", SCHEMA, {"depth": -1, "tags": ["a", 2], "extra": 1})
    problems = caught.value.problems
    assert "arguments: 'path' is a required property" in problems
    assert "arguments.depth: -1 is less than the minimum of 0" in problems
    assert "arguments.tags[1]: 2 is not of type 'string'" in problems
    assert any("'extra' was unexpected" in p for p in problems)
    assert "Expected {path: string, depth?: integer, tags?: array}" in str(caught.value)


def test_valid_arguments_pass_and_a_broken_schema_is_checked_leniently() -> None:
    validate_arguments("fs", "walk", SCHEMA, {"path": "/tmp", "depth": 2})
    broken = {"type": "object", "properties": {"x": {"type": "strin"}}}  # publisher typo
    validate_arguments("odd", "tool", broken, {"x": 1})
    with pytest.raises(ArgumentsInvalid):
        validate_arguments("fs", "walk", SCHEMA, ["not", "an", "object"])
