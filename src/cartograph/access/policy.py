"""Per-client policy: which servers and tools a client may discover and call, and its limits.

A tool is named ``server.tool`` and matched against glob patterns (``github.*``,
``*.delete_*``). Deny wins over allow; with no allow pattern everything not denied is allowed.
A pattern without a dot names a whole server (``github`` is ``github.*``). Pure: no I/O except
:func:`load_policy`, which reads a JSON policy file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from cartograph.errors import ConfigError


def _norm(pattern: str) -> str:
    pattern = pattern.strip()
    return pattern if "." in pattern else f"{pattern}.*"


@dataclass(frozen=True)
class Policy:
    """Allow and deny patterns plus rate limits (``None``: unlimited)."""

    allow: tuple[str, ...] = ("*",)
    deny: tuple[str, ...] = ()
    calls_per_minute: float | None = None
    max_concurrent: int | None = None
    requests_per_minute: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "allow", tuple(_norm(p) for p in self.allow))
        object.__setattr__(self, "deny", tuple(_norm(p) for p in self.deny))

    def permits(self, server: str, tool: str) -> bool:
        name = f"{server}.{tool}"
        if any(fnmatchcase(name, p) for p in self.deny):
            return False
        return any(fnmatchcase(name, p) for p in self.allow)

    def visible_tools(self, server: str, tools: Iterable[str]) -> list[str]:
        return [t for t in tools if self.permits(server, t)]

    def may_see_server(self, server: str) -> bool:
        """Whether some allow pattern could match a tool of ``server`` (for uncarded servers)."""
        if any(p.endswith(".*") and fnmatchcase(server, p[:-2]) for p in self.deny):
            return False
        return any(fnmatchcase(server, p.split(".", 1)[0]) for p in self.allow)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"allow": list(self.allow), "deny": list(self.deny)}
        for key in ("calls_per_minute", "max_concurrent", "requests_per_minute"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


ALLOW_ALL = Policy()


def policy_from_json(data: Any, *, source: str = "policy") -> Policy:
    """A policy from its JSON form; unknown keys or wrong types are a :class:`ConfigError`."""
    if not isinstance(data, dict):
        raise ConfigError("a policy must be a JSON object", file=source)
    known = {"allow", "deny", "calls_per_minute", "max_concurrent", "requests_per_minute"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown keys {unknown}; expected {sorted(known)}", file=source)
    for key in ("allow", "deny"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError("must be a list of glob patterns", file=source, field=key)
    numbers: dict[str, Any] = {}
    for key in ("calls_per_minute", "max_concurrent", "requests_per_minute"):
        value = data.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            raise ConfigError("must be a positive number", file=source, field=key)
        numbers[key] = value
    allow = tuple(data["allow"]) if "allow" in data else ("*",)
    return Policy(
        allow=allow,
        deny=tuple(data.get("deny", [])),
        calls_per_minute=numbers["calls_per_minute"],
        max_concurrent=None
        if numbers["max_concurrent"] is None
        else int(numbers["max_concurrent"]),
        requests_per_minute=numbers["requests_per_minute"],
    )


def load_policy(path: Path) -> Policy:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read policy: {exc}", file=str(path)) from exc
    return policy_from_json(data, source=str(path))
