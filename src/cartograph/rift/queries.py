"""Rift layer 2 input: a synthetic task query for each tool, from its name and argument schema.

The query never reads the card summary or the publisher description of the tool: it is what a
user who knows only the tool's name and inputs might ask for, so a card whose text does not point
back at its own tool (against its neighbours) shows a small margin. Pure functions, no I/O.

Shape: ``"<name words> by <required args> optionally <optional args>"``, e.g.
``get issue comments by owner, repo, issue number optionally page``. With
``QueryOptions(max_glosses=3)`` up to three arguments add a short gloss from their own schema
description or enum values (``; state: open, closed``). Glosses are off by default: on the fleet
catalog they did not make queries find their own tool more often (self@1 0.714 with, 0.711
without, 0.734 name only) and made embedding the queries 3.4x slower (longer texts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEP = re.compile(r"[^0-9A-Za-z]+")


@dataclass(frozen=True)
class QueryOptions:
    """How much of the schema goes into a query."""

    max_args: int = 6
    max_glosses: int = 0
    gloss_words: int = 8
    max_enum: int = 4


def words(identifier: str) -> list[str]:
    """``getIssueComments`` / ``get_issue-comments`` -> ``['get', 'issue', 'comments']``."""
    out: list[str] = []
    for part in _SEP.split(identifier):
        if part:
            out.extend(w.lower() for w in _CAMEL.sub(" ", part).split())
    return out


def _first_clause(text: str, limit: int) -> str:
    clause = re.split(r"(?<=[.;:])\s|\n", text.strip(), maxsplit=1)[0].rstrip(".;:")
    tokens = clause.split()
    return " ".join(tokens[:limit])


def _properties(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {str(k): v if isinstance(v, Mapping) else {} for k, v in props.items()}


def synthetic_query(
    name: str, schema: Mapping[str, Any] | None, opts: QueryOptions | None = None
) -> str:
    """The query for one tool (see module docstring). Deterministic."""
    opts = opts or QueryOptions()
    head = " ".join(words(name)) or name
    props = _properties(schema or {})
    required_raw = (schema or {}).get("required")
    required = [r for r in required_raw if r in props] if isinstance(required_raw, list) else []
    optional = [p for p in props if p not in required]
    chosen = (required + optional)[: opts.max_args]
    req_words = [" ".join(words(p)) for p in chosen if p in required]
    opt_words = [" ".join(words(p)) for p in chosen if p not in required]
    text = head
    if req_words:
        text += " by " + ", ".join(req_words)
    if opt_words:
        text += (" optionally " if req_words else " with ") + ", ".join(opt_words)
    glosses: list[str] = []
    for prop in chosen:
        if len(glosses) >= opts.max_glosses:
            break
        spec = props[prop]
        enum = spec.get("enum")
        if isinstance(enum, list) and enum:
            values = ", ".join(str(v) for v in enum[: opts.max_enum])
            glosses.append(f"{' '.join(words(prop))}: {values}")
            continue
        desc = spec.get("description")
        if isinstance(desc, str) and desc.strip():
            gloss = _first_clause(desc, opts.gloss_words)
            if gloss:
                glosses.append(f"{' '.join(words(prop))}: {gloss}")
    if glosses:
        text += "; " + "; ".join(glosses)
    return text
