"""The proxy's own three tools: their definitions (:data:`TOOLS`), and the checks a call's
input passes before it is dispatched (:func:`check_input`, after :func:`lenient` has accepted
``call``'s arguments sent as a JSON string). The schemas are compiled once here: the SDK's own
input validation would re-check the meta-schema on every call (~7 ms)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from mcp import types

TOOLS = [
    types.Tool(
        name="discover",
        description="Find tools for a task. Returns the top k tools with input schemas and "
        "example arguments, ready for call.",
        input_schema={
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "What you want done, in plain words"},
                "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
                "keywords": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 64},
                    "maxItems": 10,
                    "description": "Optional product names or identifiers that must weigh in "
                    "(e.g. stripe, JIRA-123)",
                },
            },
            "required": ["task"],
        },
    ),
    types.Tool(
        name="call",
        description="Run a tool found by discover.",
        input_schema={
            "type": "object",
            "properties": {
                "server": {"type": "string"},
                "tool": {"type": "string"},
                "arguments": {"type": "object"},
            },
            "required": ["server", "tool"],
        },
    ),
    types.Tool(
        name="status",
        description="Proxy health: servers, tools, card keys, index, sessions, quarantined tools.",
        input_schema={"type": "object", "properties": {}},
    ),
]

_VALIDATORS = {tool.name: jsonschema.Draft202012Validator(tool.input_schema) for tool in TOOLS}


def lenient(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Agents often send call's ``arguments`` as a JSON string; accept it when it is an object."""
    inner = arguments.get("arguments")
    if name == "call" and isinstance(inner, str):
        try:
            parsed = json.loads(inner or "{}")
        except ValueError:
            return arguments
        if isinstance(parsed, dict):
            return {**arguments, "arguments": parsed}
    return arguments


def check_input(name: str, arguments: dict[str, Any]) -> list[str]:
    """What is wrong with a call of one of the three tools (empty when nothing is)."""
    if name == "call" and _well_formed_call(arguments):
        return []
    validator = _VALIDATORS.get(name)
    if validator is None:
        return []
    return [
        f"{'.'.join(map(str, e.absolute_path)) or 'input'}: {e.message}"
        for e in validator.iter_errors(arguments)
    ]


def _well_formed_call(arguments: dict[str, Any]) -> bool:
    """``call``'s whole input schema, checked without jsonschema: the proxy's hottest path
    (iterating the compiled validator cost 0.08 ms a call, a tenth of the hop)."""
    return (
        isinstance(arguments.get("server"), str)
        and isinstance(arguments.get("tool"), str)
        and isinstance(arguments.get("arguments", {}), dict)
    )
