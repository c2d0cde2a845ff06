"""A small realistic snapshot, and signed cards made from it by the real card generator."""

from __future__ import annotations

from typing import Any

import pytest

from cartograph.cards.model import Card
from cartograph.cards.seal import sign_card
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.index import Embedder, ToolIndex, load_embedder
from cartograph.storage import open_store
from cartograph.trust.keys import OperatorKey, public_pem
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot
from cartograph.workspace import Workspace

INDEX_KEY = OperatorKey.from_private_bytes(bytes(range(7, 39)))


def _tool(name: str, description: str, **props: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
            "required": list(props)[:1],
        },
    }


SERVERS: dict[str, list[dict[str, Any]]] = {
    "github": [
        _tool(
            "create_issue",
            "Create a new issue in a GitHub repository.",
            owner="Repository owner",
            repo="Repository name",
            title="Issue title",
            body="Issue body",
        ),
        _tool(
            "list_pull_requests",
            "List pull requests in a GitHub repository.",
            owner="Repository owner",
            repo="Repository name",
            state="open or closed",
        ),
        _tool("search_code", "Search for code across GitHub repositories.", q="Search query"),
    ],
    "slack": [
        _tool(
            "post_message",
            "Post a message to a Slack channel.",
            channel="Channel id",
            text="Message text",
        ),
        _tool(
            "list_channels",
            "List the public channels in the Slack workspace.",
            cursor="Pagination cursor",
        ),
    ],
    "weather": [
        _tool(
            "get_forecast",
            "Get the weather forecast for a location.",
            latitude="Latitude",
            longitude="Longitude",
        ),
        _tool("get_alerts", "Get active weather alerts for a US state.", state="Two-letter state"),
    ],
    "filesystem": [
        _tool(
            "read_file",
            "Read the complete contents of a file from the file system.",
            path="File path",
        ),
        _tool(
            "write_file",
            "Create a new file or overwrite an existing file with new content.",
            path="File path",
            content="File content",
        ),
        _tool(
            "list_directory",
            "List the files and directories in a given path.",
            path="Directory path",
        ),
    ],
    "gmail": [
        _tool(
            "send_email",
            "Send an email message to one or more recipients.",
            to="Recipients",
            subject="Subject line",
            body="Message body",
        ),
        _tool(
            "search_emails",
            "Search the mailbox for emails matching a query.",
            query="Gmail search query",
        ),
    ],
    "postgres": [
        _tool("query", "Run a read-only SQL query against the PostgreSQL database.", sql="SQL"),
        _tool("list_tables", "List the tables of the PostgreSQL database.", schema="Schema name"),
    ],
}


def snapshot() -> Snapshot:
    return Snapshot(
        servers={n: ServerSnapshot(name=n, tools=t, transport="stdio") for n, t in SERVERS.items()},
        created_at="2026-11-30T00:00:00Z",
    )


def signed_cards(key: OperatorKey, snap: Snapshot | None = None) -> dict[str, Card]:
    generated = generate_cards(snap or snapshot(), created_at="2026-11-30T00:00:00Z")
    return {
        n: sign_card(g.card, key, signed_at="2026-11-30T00:00:00Z") for n, g in generated.items()
    }


def write_workspace_cards(ws: Workspace, key: OperatorKey) -> dict[str, Card]:
    """Write the key's public half and signed cards into ``ws``; return the cards."""
    ws.ensure()
    ws.public_key.write_bytes(public_pem(key.public_key))
    cards = signed_cards(key)
    store = open_store(ws)
    for card in cards.values():
        store.write_card(card)
    return cards


# -- fixtures (registered once, in tests/conftest.py) -----------------------------------------


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The stock embedder (int8 MiniLM), loaded once a session."""
    return load_embedder("minilm-int8")


@pytest.fixture(scope="session")
def cards() -> dict[str, Card]:
    """The small realistic card set, signed with :data:`INDEX_KEY`."""
    return signed_cards(INDEX_KEY)


@pytest.fixture(scope="session")
def index(cards: dict[str, Card], embedder: Embedder) -> ToolIndex:
    """A file-free index over :func:`cards`."""
    return ToolIndex.build(cards, embedder)
