"""Hand-built cards and a fixed test key for seal and store tests (no generator involved),
and writing a card through a workspace's store."""

from __future__ import annotations

from pathlib import Path

from cartograph.canonical import sha256_json, sha256_text
from cartograph.cards.model import Capability, Card, Identity, Provenance, ToolEntry, ToolExample
from cartograph.trust.keys import OperatorKey
from cartograph.workspace import Workspace

FIXED_KEY = OperatorKey.from_private_bytes(bytes(range(32)))
OTHER_KEY = OperatorKey.from_private_bytes(bytes(range(1, 33)))


def make_card(server: str = "clock", n_tools: int = 2) -> Card:
    schema = {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
    }
    tools = [
        ToolEntry(
            name=f"get_time_{i}",
            summary=f"Read the current wall-clock time in a named timezone, variant {i}.",
            usage="Needs timezone (IANA name). Read-only.",
            examples=[
                ToolExample(task="What time is it in Tokyo?", arguments={"timezone": "Asia/Tokyo"})
            ],
            input_schema=schema,
            input_schema_hash=sha256_json(schema),
            description_hash=sha256_text("Get the time."),
            generator="test/1",
        )
        for i in range(n_tools)
    ]
    return Card(
        identity=Identity(server=server, transport="stdio", endpoint="clock-server"),
        capability=Capability(summary="Clock: tells the time in any timezone.", domains=["time"]),
        tools=tools,
        provenance=Provenance(
            generator="test",
            generator_version="1",
            created_at="2026-11-30T00:00:00Z",
            tools_list_hash=sha256_json([t.name for t in tools]),
        ),
    )


def write_card(ws: Workspace, card: Card) -> Path:
    """Write ``card`` through the store of ``ws`` (as the CLI would); returns where the file
    store keeps the current card (a file-like name for a shared store)."""
    from cartograph.storage import open_store

    open_store(ws).write_card(card)
    return ws.card_path(card.identity.server)
