"""The discover answer: ranked hits joined with what the signed cards say about each tool.

Pure: takes an index, the verified cards and a task; returns the JSON-ready answer that the
CLI prints and the proxy's ``discover`` tool can return as is::

    {"query", "method", "results": [{"server", "tool", "score", "summary", "input_schema",
                                     "example"}]}
"""

from __future__ import annotations

from typing import Any

from cartograph.cards.model import Card
from cartograph.index.methods import DEFAULT_METHOD
from cartograph.index.tool_index import ToolIndex


def discover(
    index: ToolIndex,
    cards: dict[str, Card],
    query: str,
    *,
    k: int = 5,
    method: str = DEFAULT_METHOD,
) -> dict[str, Any]:
    """Top ``k`` tools for ``query`` with the operator's summary, schema and one example."""
    results: list[dict[str, Any]] = []
    for hit in index.search(query, k=k, method=method):
        card = cards.get(hit.server)
        entry = card.tool(hit.tool) if card else None
        if entry is None:  # the index and the cards come from the same verified set
            continue
        example = entry.examples[0] if entry.examples else None
        results.append(
            {
                "server": hit.server,
                "tool": hit.tool,
                "score": round(hit.score, 6),
                "summary": entry.summary,
                "input_schema": entry.input_schema,
                "example": (
                    {"task": example.task, "arguments": example.arguments} if example else None
                ),
            }
        )
    return {"query": query, "method": method, "results": results}
