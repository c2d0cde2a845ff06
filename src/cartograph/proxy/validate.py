"""Argument validation against a tool's signed input schema, before anything is sent.

Every wrong field is listed (path, what is wrong), so an agent can fix all of them in one
retry. Validators are cached by schema hash. A schema that is itself broken (some publishers
ship schemas strict validators reject) is checked as far as it can be, never silently trusted
for more than that.
"""

from __future__ import annotations

import logging
from typing import Any

import jsonschema
import jsonschema.validators
from jsonschema.exceptions import SchemaError, UnknownType, ValidationError
from jsonschema.protocols import Validator
from referencing.exceptions import Unresolvable

from cartograph.canonical import canonical
from cartograph.errors import ArgumentsInvalid

logger = logging.getLogger(__name__)

MAX_PROBLEMS = 20


def validate_arguments(
    server: str,
    tool: str,
    schema: dict[str, Any],
    arguments: Any,
    *,
    schema_key: str | None = None,
) -> None:
    """Raise :class:`ArgumentsInvalid` listing each wrong field, or return quietly.

    ``schema_key`` names the schema for the validator cache (the card's input_schema_hash);
    without it the schema is canonicalised to make the key."""
    if not isinstance(arguments, dict):
        raise ArgumentsInvalid(
            f"{server}/{tool}: 'arguments' must be a JSON object", ["arguments: not an object"]
        )
    key = schema_key or canonical(schema or {}).decode("utf-8")
    validator = _VALIDATORS.get(key)
    if validator is None:
        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        validator = _VALIDATORS[key] = _validator(schema or {})
    if validator is None:
        return
    try:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(map(str, e.path)))
    except (
        SchemaError,
        UnknownType,
        Unresolvable,
        TypeError,
        ValueError,
        KeyError,
        RecursionError,
    ) as exc:
        logger.warning("%s/%s: input schema cannot be evaluated (%s)", server, tool, exc)
        return
    if not errors:
        return
    problems = [_problem(err) for err in errors[:MAX_PROBLEMS]]
    if len(errors) > MAX_PROBLEMS:
        problems.append(f"... and {len(errors) - MAX_PROBLEMS} more")
    expected = _expected(schema)
    raise ArgumentsInvalid(
        f"{server}/{tool}: arguments do not match the input schema; nothing was sent. "
        f"Fix: {'; '.join(problems)}.{expected}",
        problems,
    )


_VALIDATORS: dict[str, Validator | None] = {}


def _validator(schema: dict[str, Any]) -> Validator | None:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        logger.warning(
            "input schema is not valid JSON Schema (%s); checking leniently", exc.message
        )
        try:
            return jsonschema.Draft7Validator(schema)
        except (SchemaError, TypeError):
            return None
    return cls(schema)


def _problem(err: ValidationError) -> str:
    where = "arguments" + "".join(
        f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path
    )
    message = err.message
    if len(message) > 200:
        message = message[:200] + "..."
    return f"{where}: {message}"


def _expected(schema: dict[str, Any]) -> str:
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return ""
    required = set(schema.get("required") or [])
    parts = []
    for name, spec in list(props.items())[:15]:
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return " Expected {" + ", ".join(parts) + "}."
