"""Rift layer 2 input: a synthetic task query for each tool, from its name and argument schema.

The query never reads the card summary or the publisher description of the tool: it is what a
user who knows only the tool's name and inputs might ask for, so a card whose text does not point
back at its own tool (against its neighbours) shows a small margin. Pure functions, no I/O;
:class:`QueryEmbedder` embeds them through the callable it is given, each text once.

Two shapes (``QueryOptions.style``):

- ``"task"`` (default): a request as a user would type it, with a plausible value for each
  required argument (built by :func:`cartograph.generate.bootstrap.schema.example_arguments`,
  which reads only the schema and the tool's name: enum, default, examples, format, type, the
  argument's name, and the name's words, so ``write_query`` is asked with an INSERT as its card's
  example is, not ``SELECT 1``),
  e.g. ``get issue comments for owner octocat, repo example-project and issue number 1``.
  Placeholder values that say nothing ("example", "example-id", "example query", "1 + 1") are
  left out, so the argument's words stand alone.
- ``"schema"``: the first version, ``"<name words> by <required args> optionally <optional
  args>"``, e.g. ``get issue comments by owner, repo, issue number optionally page``.

With
``QueryOptions(max_glosses=3)`` up to three arguments add a short gloss from their own schema
description or enum values (``; state: open, closed``). Glosses are off by default: on the fleet
catalog they did not make queries find their own tool more often (self@1 0.714 with, 0.711
without, 0.734 name only) and made embedding the queries 3.4x slower (longer texts).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from cartograph.generate.bootstrap.schema import example_arguments
from cartograph.generate.bootstrap.values import STOCK_ID_DIGITS

QueryStyle = Literal["task", "schema"]
QUERY_STYLES: tuple[QueryStyle, ...] = ("task", "schema")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEP = re.compile(r"[^0-9A-Za-z]+")


@dataclass(frozen=True)
class QueryOptions:
    """How much of the schema goes into a query."""

    style: QueryStyle = "task"
    max_args: int = 6
    max_values: int = 3
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
    if opts.style == "task":
        return task_query(name, schema, opts)
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


# stock values of the example builder that carry no meaning for a reader
_PLACEHOLDERS = frozenset(
    {
        "example",
        "example-id",
        "example_id",
        "example text",
        "example query",
        "example title",
        "abc123",
        "1 + 1",
        "x",
    }
)


def _spoken(value: Any) -> str:
    """A value as it would appear in a typed request; "" when it says nothing."""
    if isinstance(value, bool) or value is None or isinstance(value, dict):
        return ""
    if isinstance(value, list):
        items = [_spoken(v) for v in value[:2]]
        return " and ".join(i for i in items if i)
    text = str(value).strip()
    stock = text.lower() in _PLACEHOLDERS or text.startswith(STOCK_ID_DIGITS)
    if not text or stock or len(text) > 40:
        return ""
    return text


def task_query(
    name: str, schema: Mapping[str, Any] | None, opts: QueryOptions | None = None
) -> str:
    """A user-style request from the name and the required arguments' example values.

    ``get_issue_comments(owner, repo, issue_number)`` -> ``get issue comments for owner
    octocat, repo example-project and issue number 1``. With no required argument, up to two
    optional argument names follow ``with``. Reads no description or summary.
    """
    opts = opts or QueryOptions()
    head = " ".join(words(name)) or name
    props = _properties(schema or {})
    required_raw = (schema or {}).get("required")
    required = [r for r in required_raw if r in props] if isinstance(required_raw, list) else []
    if not required:
        optional = [" ".join(words(p)) for p in props][:2]
        return f"{head} with {' and '.join(optional)}" if optional else head
    values = example_arguments(dict(schema or {}), words(name))  # a writer's SQL writes
    parts = []
    for arg in required[: opts.max_values]:
        spoken = _spoken(values.get(arg))
        arg_words = " ".join(words(arg))
        parts.append(f"{arg_words} {spoken}" if spoken else arg_words)
    if len(parts) == 1:
        return f"{head} for {parts[0]}"
    return f"{head} for {', '.join(parts[:-1])} and {parts[-1]}"


class QueryEmbedder:
    """``embed`` with each text embedded once per analysis (the confusion grouping and layer 2
    ask for the same queries), and the seconds spent embedding."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        self._embed = embed
        self._rows: dict[str, np.ndarray] = {}
        self.seconds = 0.0

    def __call__(self, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._rows]
        if todo:
            t0 = time.perf_counter()
            for text, vec in zip(todo, embed_sorted(self._embed, todo), strict=True):
                self._rows[text] = vec
            self.seconds += time.perf_counter() - t0
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._rows[t] for t in texts])


def embed_sorted(embed: Callable[[list[str]], np.ndarray], texts: list[str]) -> np.ndarray:
    """Embed in length order (batches pad to their longest text), rows back in input order."""
    order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
    vecs = np.asarray(embed([texts[k] for k in order]), dtype=np.float32)
    out = np.empty_like(vecs)
    out[order] = vecs
    return out
