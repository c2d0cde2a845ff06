"""Reading a tool's input schema for the bootstrap generator: parameter facts (name, type,
required, enum, description) and a plausible, schema-valid example arguments object built from
enum / const / default / examples, then (for strings and numbers) the rules of
:mod:`cartograph.generate.bootstrap.values`, with local ``$ref`` and ``anyOf`` followed.

Pure functions over JSON values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cartograph.generate.bootstrap.values import number_for, string_for
from cartograph.generate.text import split_identifier

_MAX_DEPTH = 8


@dataclass(frozen=True)
class Param:
    """One top-level parameter of a tool."""

    name: str
    type: str
    required: bool
    description: str
    enum: tuple[Any, ...] = ()

    @property
    def words(self) -> list[str]:
        return split_identifier(self.name)


def params_of(schema: Any) -> list[Param]:
    """Top-level parameters, required ones first, each group in schema order."""
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    required = schema.get("required")
    req = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    out: list[Param] = []
    for name, raw in props.items():
        spec = _resolve(schema, raw)
        enum = spec.get("enum")
        enum = enum if isinstance(enum, list) else []
        desc = spec.get("description") or (raw.get("description") if isinstance(raw, dict) else "")
        out.append(
            Param(
                name=str(name),
                type=type_label(schema, spec),
                required=name in req,
                description=desc if isinstance(desc, str) else "",
                enum=tuple(enum[:8]),
            )
        )
    return [p for p in out if p.required] + [p for p in out if not p.required]


def type_label(root: dict[str, Any], spec: dict[str, Any]) -> str:
    """A short type word: string, integer, array of string, date, url, one of 3 values, ..."""
    spec = _first_variant(root, spec)
    if isinstance(spec.get("enum"), list):
        return "choice"
    fmt = spec.get("format")
    if isinstance(fmt, str) and fmt in _FORMAT_LABEL:
        return _FORMAT_LABEL[fmt]
    typ = _type_of(spec)
    if typ == "array":
        items = spec.get("items")
        inner = _type_of(_resolve(root, items)) if isinstance(items, dict) else ""
        return f"list of {inner}s" if inner and inner != "array" else "list"
    return typ or "value"


_FORMAT_LABEL = {
    "date": "date",
    "date-time": "date-time",
    "time": "time",
    "uri": "url",
    "url": "url",
    "email": "email",
    "uuid": "uuid",
    "hostname": "hostname",
    "ipv4": "ip address",
}


def example_arguments(schema: Any, context: Iterable[str] = ()) -> dict[str, Any]:
    """A plausible arguments object: every required parameter with a schema-valid value.

    ``context``: the words of the tool's name, which tell a file path from a folder path."""
    if not isinstance(schema, dict):
        return {}
    props = schema.get("properties")
    if not isinstance(props, dict):
        return {}
    required = schema.get("required")
    names = (
        [r for r in required if isinstance(r, str) and r in props]
        if isinstance(required, list)
        else []
    )
    words = frozenset(context)
    args = {n: example_value(schema, props[n], n, 0, words) for n in names}
    return _vary_repeats(schema, props, args)


# a stock example value -> another of the same kind, for a second parameter that would repeat it
_ALTERNATES = {
    "Europe/Paris": "Asia/Tokyo",
    "Paris": "Tokyo",
    "France": "Japan",
    "en": "fr",
    "USD": "EUR",
    "AAPL": "MSFT",
    "main": "develop",
    "14:30": "16:45",
    "example-project": "other-project",
}


def _vary_repeats(
    root: dict[str, Any], props: dict[str, Any], args: dict[str, Any]
) -> dict[str, Any]:
    """A later parameter that got the same stock value as an earlier one gets another of its
    kind (``source_timezone`` Europe/Paris, ``target_timezone`` Asia/Tokyo), unless its schema
    pins the value (const, enum, default, examples or pattern)."""
    seen: set[str] = set()
    out = dict(args)
    for name, value in args.items():
        if not isinstance(value, str):
            continue
        spec = _resolve(root, props[name])
        pinned = any(k in spec for k in ("const", "enum", "default", "examples", "example"))
        if value in seen and value in _ALTERNATES and not pinned and "pattern" not in spec:
            out[name] = _ALTERNATES[value]
        seen.add(value)
    return out


def example_value(
    root: dict[str, Any], raw: Any, name: str, depth: int, context: frozenset[str] = frozenset()
) -> Any:
    """A value for one property, from its own hints first, then from its name and type."""
    spec = _first_variant(root, _resolve(root, raw))
    if "const" in spec:
        return spec["const"]
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    if "default" in spec and spec["default"] is not None:
        return spec["default"]
    examples = spec.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    if "example" in spec:
        return spec["example"]
    typ = _type_of(spec)
    if typ == "string" or not typ:
        return string_for(name, spec, context)
    if typ in ("integer", "number"):
        return number_for(name, spec, typ)
    if typ == "boolean":
        return False
    if typ == "null":
        return None
    if typ == "array":
        items = spec.get("items")
        low = spec.get("minItems")
        count = low if isinstance(low, int) and 0 < low <= 3 else 1
        if depth >= _MAX_DEPTH or not isinstance(items, dict):
            return [string_for(_singular(name), {}, context)] * count if count and not items else []
        return [
            example_value(root, items, _singular(name), depth + 1, context) for _ in range(count)
        ]
    if typ == "object":
        if depth >= _MAX_DEPTH:
            return {}
        props = spec.get("properties")
        req = spec.get("required")
        if not isinstance(props, dict):
            return {}
        req = req if isinstance(req, list) else []
        # required properties, plus any with a const (a oneOf discriminator)
        names = [r for r in req if isinstance(r, str) and r in props]
        names += [n for n, v in props.items() if n not in names and "const" in _resolve(root, v)]
        return {n: example_value(root, props[n], n, depth + 1, context) for n in names}
    return string_for(name, spec, context)


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("s") and len(name) > 3 else name


def _type_of(spec: dict[str, Any]) -> str:
    typ = spec.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), typ[0] if typ else "")
    if not isinstance(typ, str):
        if "properties" in spec:
            return "object"
        if "items" in spec:
            return "array"
        return ""
    return typ


def _first_variant(root: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """For anyOf/oneOf, the first variant that is not null; allOf merged shallowly."""
    for _ in range(_MAX_DEPTH):
        if "type" in spec or "enum" in spec or "const" in spec:
            return spec
        for key in ("anyOf", "oneOf"):
            variants = spec.get(key)
            if isinstance(variants, list) and variants:
                resolved = [_resolve(root, v) for v in variants]
                pick = next((v for v in resolved if v.get("type") != "null"), resolved[0])
                extra = {k: v for k, v in spec.items() if k not in (key,)}
                spec = {**pick, **extra}
                break
        else:
            parts = spec.get("allOf")
            if isinstance(parts, list) and parts:
                merged: dict[str, Any] = {}
                for part in parts:
                    merged.update(_resolve(root, part))
                spec = {**merged, **{k: v for k, v in spec.items() if k != "allOf"}}
            else:
                return spec
    return spec


def _resolve(root: dict[str, Any], spec: Any) -> dict[str, Any]:
    """Follow local ``#/...`` references; anything unresolvable becomes ``{}``."""
    for _ in range(_MAX_DEPTH):
        if not isinstance(spec, dict):
            return {}
        ref = spec.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            return spec
        target: Any = root
        for part in ref.lstrip("#").strip("/").split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        rest = {k: v for k, v in spec.items() if k != "$ref"}
        spec = {**target, **rest} if isinstance(target, dict) else rest
    return spec if isinstance(spec, dict) else {}
