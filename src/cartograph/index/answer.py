"""The discover answer: one model and one renderer, for the proxy and ``cartograph discover``.

Pure: ranked hits joined with what the verified cards say about each tool. The proxy's
``discover`` tool returns :meth:`DiscoverAnswer.to_json` as its result, and the CLI's ``--json``
prints the same document (agents rely on these field names; absent fields are left out)::

    {"tools": [{"server", "tool", "summary", "usage"?, "input_schema", "output_schema"?,
                "annotations"?, "examples"?}], "note"?}

Schemas, summary, usage, annotations and examples come from the signed card, never from live
upstream text. ``annotations`` holds the card's ``title`` and the boolean hints of MCP's tool
annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``) that
the card recorded; ``output_schema`` the tool's signed outputSchema, where it has one.
This module is light on purpose (no numpy, no model): the proxy imports it at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from cartograph.cards.model import Card, ToolEntry

MAX_EXAMPLES = 2
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The tool annotations discover shows (booleans only), after the title."""
NO_MATCH = "no callable tool matched; rephrase the task or check status"


@dataclass(frozen=True)
class Hit:
    """One ranked tool."""

    server: str
    tool: str
    score: float
    cosine: float | None = None  # the dense channel's cosine to the task (dense methods)


class DiscoveredTool(BaseModel):
    """One tool of the answer: what the signed card says, ready for ``call``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    server: str
    tool: str
    summary: str
    usage: str | None = None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    examples: list[dict[str, Any]] | None = None
    weak: bool | None = None  # set when discover abstained: the nearest tool, not a fit


class DiscoverAnswer(BaseModel):
    """The top tools for a task, best first, and a note when the ranking fell back or is empty."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tools: list[DiscoveredTool]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON document agents and ``--json`` read (fields that are None left out)."""
        return self.model_dump(mode="json", exclude_none=True)


def render_answer(
    cards: Mapping[str, Card], hits: Iterable[Hit], note: str | None = None, *, weak: bool = False
) -> DiscoverAnswer:
    """The answer for ``hits`` (best first) from ``cards``; a hit whose card or tool is not
    there is left out (the index and the cards come from the same verified set). ``weak``:
    discover abstained, so every tool is marked as the nearest rather than a fit."""
    tools = []
    for hit in hits:
        card = cards.get(hit.server)
        entry = card.tool(hit.tool) if card is not None else None
        if entry is not None:
            found = discovered_tool(hit.server, entry)
            tools.append(found.model_copy(update={"weak": True}) if weak else found)
    if not tools:
        note = (note + "; " if note else "") + NO_MATCH
    return DiscoverAnswer(tools=tools, note=note)


def discovered_tool(server: str, entry: ToolEntry) -> DiscoveredTool:
    """One card entry as the agent reads it: lean schema, usage, distinct example arguments."""
    examples: list[dict[str, Any]] = []
    for ex in entry.examples:
        if ex.arguments and ex.arguments not in examples:
            examples.append(ex.arguments)
    return DiscoveredTool(
        server=server,
        tool=entry.name,
        summary=entry.summary,
        usage=agent_usage(entry.usage) if entry.usage else None,
        input_schema=lean_schema(entry.input_schema),
        output_schema=lean_schema(entry.output_schema) if entry.output_schema else None,
        annotations=shown_annotations(entry),
        examples=examples[:MAX_EXAMPLES] or None,
    )


def shown_annotations(entry: ToolEntry) -> dict[str, Any] | None:
    """The card's title and boolean tool hints, as MCP names them; None when it has neither."""
    shown: dict[str, Any] = {"title": entry.title} if entry.title else {}
    recorded = entry.annotations or {}
    shown.update((k, recorded[k]) for k in HINTS if isinstance(recorded.get(k), bool))
    return shown or None


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The signed schema without keys that cost tokens and tell an agent nothing."""
    return {k: v for k, v in schema.items() if k != "$schema"}


_RELATED = re.compile(r"\s*Related: [^.]*\.$")


def agent_usage(usage: str) -> str:
    """The card's usage without the trailing ``Related: ...`` keywords the bootstrap generator
    adds for ranking (the index keeps them); they do not help an agent call the tool."""
    return _RELATED.sub("", usage)
