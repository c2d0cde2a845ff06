"""The text that ranking reads for each tool, composed only from the operator's signed card.

One document per tool: the tool name split into words, the operator's summary, usage and
example tasks, the parameter names, and the server's identity and domains (users name the
product: "in Linear", "on GitHub"). The server document (its name, summary, usage, domains)
feeds server-level scoring. Publisher descriptions never enter here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cartograph.cards.model import Card, ToolEntry

_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-./:~]+")
MAX_EXAMPLES = 3
MAX_PARAMS = 12


def split_name(name: str) -> str:
    """``get_pullRequest-files`` -> ``get pull Request files``."""
    return " ".join(p for p in _SPLIT.split(name) if p).strip()


def param_names(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    return [split_name(str(k)) for k in list(props)[:MAX_PARAMS]]


def server_label(card: Card) -> str:
    """The words that name the server: its name split, plus package/publisher when known."""
    ident = card.identity
    parts = [split_name(ident.server)]
    for extra in (ident.publisher, ident.package):
        if extra:
            words = split_name(extra.split("/")[-1].lstrip("@"))
            if words.lower() not in parts[0].lower():
                parts.append(words)
    return " ".join(parts)


@dataclass(frozen=True)
class ToolDocument:
    """The texts of one tool: ``dense`` for the embedder and ``lexical`` for BM25/Jaccard."""

    server: str
    tool: str
    dense: str
    lexical: str


def tool_document(card: Card, entry: ToolEntry) -> ToolDocument:
    label = server_label(card)
    domains = ", ".join(card.capability.domains)
    examples = " ".join(ex.task.rstrip(".") + "." for ex in entry.examples[:MAX_EXAMPLES])
    params = ", ".join(param_names(entry.input_schema))
    name_words = split_name(entry.name)
    title = f" ({entry.title})" if entry.title and entry.title.lower() != name_words.lower() else ""
    head = f"{name_words}{title}: {entry.summary}"
    context = f"{label}" + (f" ({domains})" if domains else "")
    dense_parts = [head, entry.usage, examples, f"Server: {context}."]
    if params:
        dense_parts.append(f"Parameters: {params}.")
    dense = " ".join(p.strip() for p in dense_parts if p and p.strip())
    lexical_parts = [head, entry.usage, examples, context, " ".join(entry.tags), params]
    lexical = " ".join(p.strip() for p in lexical_parts if p and p.strip())
    return ToolDocument(card.server, entry.name, dense, lexical)


def server_document(card: Card) -> str:
    cap = card.capability
    domains = ", ".join(cap.domains)
    parts = [
        server_label(card) + (f" ({domains})" if domains else "") + ":",
        cap.summary,
        cap.usage,
    ]
    return " ".join(p.strip() for p in parts if p and p.strip())


def card_documents(cards: dict[str, Card]) -> list[ToolDocument]:
    """Every tool document of ``cards``, servers in name order, tools in card order."""
    docs: list[ToolDocument] = []
    for server in sorted(cards):
        card = cards[server]
        docs.extend(tool_document(card, entry) for entry in card.tools)
    return docs
