"""JSON Schema to Python type hints, and names sanitised to identifiers without collisions.

Pure functions: a schema becomes a type expression (``str``, ``int``, ``float``, ``bool``,
``list[...]``, ``dict[str, Any]``, ``Literal[...]`` for enums and consts, unions for
``anyOf``/``oneOf``/type lists, a functional ``TypedDict`` for simple objects), and any name
becomes a valid, non-keyword identifier that is unique among the names already taken.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from typing import Any

SIMPLE = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
MAX_DEPTH = 2  # object nesting that still becomes a TypedDict


def identifier(name: str, taken: set[str], *, fallback: str = "x") -> str:
    """``name`` as a snake-case identifier, not a keyword, not in ``taken`` (which it joins)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    base = re.sub(r"[^0-9a-zA-Z_]+", "_", spaced).strip("_").lower() or fallback
    base = re.sub(r"_+", "_", base)
    if base[0].isdigit():
        base = f"{fallback}_{base}"
    if keyword.iskeyword(base) or keyword.issoftkeyword(base):
        base += "_"
    chosen, n = base, 2
    while chosen in taken:
        chosen, n = f"{base}_{n}", n + 1
    taken.add(chosen)
    return chosen


def class_name(*parts: str) -> str:
    """CamelCase from name parts (already identifiers)."""
    return "".join(p[:1].upper() + p[1:] for part in parts for p in part.split("_") if p)


class TypeMapper:
    """Maps schemas to type expressions; ``define`` receives each TypedDict it needs."""

    def __init__(self, define: Callable[[str, str], str]) -> None:
        self._define = define

    def hint(self, schema: Any, name: str, depth: int = 0) -> str:
        if not isinstance(schema, dict):
            return "Any"
        for combo in ("anyOf", "oneOf"):
            options = schema.get(combo)
            if isinstance(options, list) and options:
                return union([self.hint(o, f"{name}_{i}", depth) for i, o in enumerate(options, 1)])
        literal = literal_of(schema)
        if literal is not None:
            return literal
        kind = schema.get("type")
        if isinstance(kind, list):
            return union([self.hint({**schema, "type": k}, name, depth) for k in kind])
        if kind in SIMPLE:
            return SIMPLE[kind]
        if kind == "array":
            items = schema.get("items")
            return f"list[{self.hint(items, name + '_item', depth) if items else 'Any'}]"
        if kind == "object" or "properties" in schema:
            return self._object(schema, name, depth)
        return "Any"

    def _object(self, schema: dict[str, Any], name: str, depth: int) -> str:
        props = schema.get("properties")
        if not isinstance(props, dict) or not props or depth >= MAX_DEPTH:
            return "dict[str, Any]"
        required = set(schema.get("required") or [])
        fields = []
        for key in sorted(props):
            inner = self.hint(props[key], f"{name}_{identifier(key, set())}", depth + 1)
            fields.append(f"{key!r}: {inner if key in required else f'NotRequired[{inner}]'}")
        return self._define(class_name(name), "{" + ", ".join(fields) + "}")


def literal_of(schema: dict[str, Any]) -> str | None:
    """``Literal[...]`` for an enum or const of strings, ints, bools (else None)."""
    values = schema.get("enum")
    if values is None and "const" in schema:
        values = [schema["const"]]
    if not isinstance(values, list) or not values:
        return None
    if not all(v is None or isinstance(v, str | int | bool) for v in values):
        return None
    kept = [v for v in values if v is not None]
    parts = [f"Literal[{', '.join(repr(v) for v in kept)}]"] if kept else []
    if len(kept) < len(values):
        parts.append("None")
    return union(parts)


def union(parts: list[str]) -> str:
    """``a | b`` without repeats; ``Any`` swallows the rest."""
    seen: list[str] = []
    for part in parts:
        for piece in _split_top(part):
            if piece not in seen:
                seen.append(piece)
    if "Any" in seen:
        return "Any"
    return " | ".join(seen) if seen else "Any"


def _split_top(expr: str) -> list[str]:
    """Split ``a | b[c | d]`` at top-level bars only (not inside brackets or string literals)."""
    out, depth, start, quote, escaped = [], 0, 0, "", False
    for i, ch in enumerate(expr):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(expr[start:i].strip())
            start = i + 1
    out.append(expr[start:].strip())
    return out


def docstring(text: str, indent: str) -> str:
    """A triple-quoted docstring literal for ``text`` that cannot break out of its quotes."""
    body = "".join(c for c in text if c.isprintable() or c == "\n")
    body = body.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    if body.endswith('"'):
        body += " "
    lines = body.splitlines() or [""]
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""'
    rest = "\n".join(f"{indent}{line}" if line else "" for line in lines[1:])
    return f'{indent}"""{lines[0]}\n{rest}\n{indent}"""'
