"""How a server's prompts, resources and resource templates are named and hashed, for the card
generator, the drift guard and the proxy alike.

The drift guard and the quarantine key what they hold by ``(server, key)``: a tool by its name,
a prompt as ``prompt:<name>``, a resource as ``resource:<uri>`` and a resource template as
``template:<uriTemplate>`` (tool names never hold a colon, MCP's tool-name rule). For each key
:func:`signed_hashes` gives the card's (shape, description) hashes, and :func:`live_hashes` the
same two of what the upstream sends now. A tool's output schema is recorded and hashed by
:func:`output_schema_fields` (the drift guard compares it apart: see
:mod:`cartograph.gateway.drift`). Pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from cartograph.canonical import sha256_json, sha256_text
from cartograph.cards.model import Card

ListingKind = Literal["prompt", "resource", "template"]
KINDS: tuple[ListingKind, ...] = ("prompt", "resource", "template")
_IDENT: dict[ListingKind, str] = {"prompt": "name", "resource": "uri", "template": "uriTemplate"}
LISTS: dict[ListingKind, str] = {
    "prompt": "prompts",
    "resource": "resources",
    "template": "resourceTemplates",
}
"""Each kind's list in a snapshot's (and :class:`Listings`-like) JSON."""


def listing_key(kind: ListingKind, ident: str) -> str:
    return f"{kind}:{ident}"


def split_key(key: str) -> tuple[ListingKind | None, str]:
    """``("prompt", name)`` for ``prompt:name`` (and so on); ``(None, key)`` for a tool."""
    kind, sep, ident = key.partition(":")
    if sep and kind in _IDENT:
        return kind, ident  # type: ignore[return-value]  # narrowed by the membership test
    return None, key


def prompt_shape(prompt: dict[str, Any]) -> str:
    """A prompt's shape as the card records it: its arguments as sent."""
    arguments = prompt.get("arguments")
    return sha256_json(arguments if isinstance(arguments, list) else [])


def resource_shape(item: dict[str, Any]) -> str:
    """A resource's (template's) shape: name, URI (template) and MIME type as sent."""
    return sha256_json({k: item.get(k) for k in ("name", "uri", "uriTemplate", "mimeType")})


def output_schema_fields(tool: dict[str, Any]) -> dict[str, Any]:
    """A card entry's ``output_schema`` and ``output_schema_hash`` for a tools/list item: the
    schema as sent and its hash, or nothing (the entry leaves them out) when it has none."""
    schema = tool.get("outputSchema")
    if not isinstance(schema, dict):
        return {}
    return {"output_schema": schema, "output_schema_hash": sha256_json(schema)}


def description_hash(item: dict[str, Any]) -> str:
    description = item.get("description")
    return sha256_text(description if isinstance(description, str) else None)


def live_items(listings: dict[str, list[dict[str, Any]]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every listed item with its key, from ``{"prompts": [...], "resources": [...], ...}``."""
    for kind in KINDS:
        for item in listings.get(LISTS[kind]) or []:
            yield listing_key(kind, str(item.get(_IDENT[kind], ""))), item


def live_hashes(key: str, item: dict[str, Any]) -> tuple[str, str]:
    """(shape, description) hashes of a live tool or listed item, as the card would hold them."""
    kind, _ = split_key(key)
    if kind is None:
        return sha256_json(item.get("inputSchema") or {}), sha256_text(item.get("description"))
    shape = prompt_shape(item) if kind == "prompt" else resource_shape(item)
    return shape, description_hash(item)


def signed_hashes(card: Card, key: str) -> tuple[str, str] | None:
    """(shape, description) hashes of the card's entry for ``key``; None when it has none."""
    kind, ident = split_key(key)
    if kind is None:
        tool = card.tool(key)
        return (tool.input_schema_hash, tool.description_hash) if tool else None
    if kind == "prompt":
        prompt = card.prompt(ident)
        return (prompt.arguments_hash, prompt.description_hash) if prompt else None
    entry = card.resource(ident) if kind == "resource" else card.template(ident)
    return (entry.shape_hash, entry.description_hash) if entry else None
