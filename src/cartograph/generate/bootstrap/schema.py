"""Reading a tool's input schema for the bootstrap generator: parameter facts (name, type,
required, enum, description) and a plausible, schema-valid example arguments object built from
enum / const / default / examples / format / type, with local ``$ref`` and ``anyOf`` followed.

Pure functions over JSON values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cartograph.generate.text import split_identifier

_MAX_DEPTH = 8
_QUOTED = re.compile(r"['\"`]([^'\"`\s]{1,40})['\"`]")


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


def example_arguments(schema: Any) -> dict[str, Any]:
    """A plausible arguments object: every required parameter with a schema-valid value."""
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
    args = {n: example_value(schema, props[n], n, 0) for n in names}
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


def example_value(root: dict[str, Any], raw: Any, name: str, depth: int) -> Any:
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
        return _string_for(name, spec)
    if typ in ("integer", "number"):
        return _number_for(name, spec, typ)
    if typ == "boolean":
        return False
    if typ == "null":
        return None
    if typ == "array":
        items = spec.get("items")
        low = spec.get("minItems")
        count = low if isinstance(low, int) and 0 < low <= 3 else 1
        if depth >= _MAX_DEPTH or not isinstance(items, dict):
            return [_string_for(_singular(name), {})] * count if count and not items else []
        return [example_value(root, items, _singular(name), depth + 1) for _ in range(count)]
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
        return {n: example_value(root, props[n], n, depth + 1) for n in names}
    return _string_for(name, spec)


# name word -> example string; the first word of the name that matches wins
_NAMED_STRINGS: tuple[tuple[frozenset[str], str], ...] = tuple(
    (frozenset(words.split()), value)
    for words, value in (
        ("url urls link href uri endpoint website", "https://example.com"),
        ("email mail recipient", "user@example.com"),
        ("path file filepath filename dir directory folder", "/tmp/example.txt"),
        ("date day since checkin", "2026-01-15"),
        ("until checkout", "2026-01-20"),
        ("time datetime timestamp", "2026-01-15T09:00:00Z"),
        ("city location place address destination origin", "Paris"),
        ("country region", "France"),
        ("timezone tz", "Europe/Paris"),
        ("language lang locale", "en"),
        ("currency", "USD"),
        ("symbol ticker stock", "AAPL"),
        ("owner user username author login", "octocat"),
        ("repo repository project", "example-project"),
        ("branch ref", "main"),
        ("query q search keyword keywords term text prompt question topic", "example query"),
        ("title subject", "Example title"),
        ("body content message description comment note", "Example text"),
        ("name label", "example"),
        ("code script expression formula", "1 + 1"),
        ("sql", "SELECT 1"),
        ("color colour", "#336699"),
        ("id identifier key uuid slug", "example-id"),
        ("token cursor", "abc123"),
    )
)


def _string_for(name: str, spec: dict[str, Any]) -> str:
    fmt = spec.get("format")
    by_format = {
        "date": "2026-01-15",
        "date-time": "2026-01-15T09:00:00Z",
        "time": "09:00:00",
        "uri": "https://example.com",
        "url": "https://example.com",
        "email": "user@example.com",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
        "hostname": "example.com",
        "ipv4": "192.0.2.1",
        "ipv6": "2001:db8::1",
    }
    value = by_format.get(fmt, "") if isinstance(fmt, str) else ""
    if not value:
        value = _described_format(str(spec.get("description") or ""))
    if not value:
        words = split_identifier(name)
        for word in reversed(words):
            value = next((v for keys, v in _NAMED_STRINGS if word in keys), "")
            if value:
                break
        else:
            value = "example"
    pattern = spec.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, value):
                hinted = _QUOTED.findall(str(spec.get("description") or ""))
                tries = (*hinted, *_PATTERN_TRIES)
                value = next((c for c in tries if re.search(pattern, c)), value)
        except re.error:
            pass
    low, high = spec.get("minLength"), spec.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        value = value + "x" * (low - len(value))
    if isinstance(high, int) and high >= 0 and len(value) > high:
        value = value[:high]
    return value


# a format the publisher spells out in a parameter description -> a value in that format
_DESCRIBED_FORMATS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), value)
    for pattern, value in (
        (r"\bHH:MM:SS\b", "14:30:00"),
        (r"\bHH:MM\b", "14:30"),
        (r"\bYYYY-MM-DD[T ]HH", "2026-01-15T09:00:00Z"),
        (r"\bYYYY-MM-DD\b", "2026-01-15"),
        (r"\bYYYYMMDD\b", "20260115"),
        (r"\bYYYY-MM\b", "2026-01"),
        (r"\bISO[ -]?8601\b", "2026-01-15T09:00:00Z"),
        (r"\bIANA\b.{0,30}\btime ?zone|\btime ?zone\b.{0,30}\bIANA\b", "Europe/Paris"),
    )
)


def _described_format(description: str) -> str:
    """A value in the format a parameter's description names (``HH:MM`` -> ``14:30``)."""
    for pattern, value in _DESCRIBED_FORMATS:
        if pattern.search(description):
            return value
    return ""


_PATTERN_TRIES = tuple(
    [
        "example",
        "abc123",
        "123",
        "2026-01-15",
        "ABC",
        "a",
        "example-id",
        "example_id",
        "https://example.com",
        "user@example.com",
        "1.0.0",
        "#336699",
        "AAPL",
        "PROJ-123",
        "AS123",
        "1:2",
        "1-2",
        "v1",
        "A1",
        "example.png",
        "example.txt",
        "example.json",
    ]
)


def _number_for(name: str, spec: dict[str, Any], typ: str) -> int | float:
    words = set(split_identifier(name))
    value: float = 1
    if words & {"limit", "count", "size", "max", "top", "num", "results", "n", "per"}:
        value = 10
    elif words & {"latitude", "lat"}:
        value = 48.8566
    elif words & {"longitude", "lon", "lng"}:
        value = 2.3522
    elif words & {"year"}:
        value = 2026
    elif words & {"offset", "skip", "start", "index"}:
        value = 0
    for bound in ("minimum", "exclusiveMinimum"):
        low = spec.get(bound)
        if isinstance(low, int | float) and not isinstance(low, bool) and value <= low:
            value = low if bound == "minimum" else low + 1
    for bound in ("maximum", "exclusiveMaximum"):
        high = spec.get(bound)
        if isinstance(high, int | float) and not isinstance(high, bool) and value >= high:
            value = high if bound == "maximum" else high - 1
    multiple = spec.get("multipleOf")
    if isinstance(multiple, int | float) and not isinstance(multiple, bool) and multiple > 0:
        value = multiple * max(1, round(value / multiple))
    if typ == "integer":
        return int(value)
    return float(value) if not float(value).is_integer() else int(value)


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
