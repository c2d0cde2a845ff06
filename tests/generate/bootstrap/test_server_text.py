"""The server summary names what its tools do in words that read as objects or requests."""

from __future__ import annotations

from typing import Any

from cartograph.generate.bootstrap.generator import generate_card
from cartograph.upstream.snapshot import ServerSnapshot

WHEN = "2026-01-01T00:00:00Z"


def _tool(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


def _summary(name: str, tools: list[dict[str, Any]]) -> str:
    return generate_card(
        ServerSnapshot(name=name, tools=tools), created_at=WHEN
    ).card.capability.summary


def test_a_bare_tool_name_is_said_by_its_summarys_opening_request() -> None:
    summary = _summary(
        "rentals",
        [
            _tool(
                "rentals_search", "Search for holiday rentals with various filters and pagination."
            ),
            _tool(
                "rentals_listing_details", "Get detailed information about a given rental listing."
            ),
        ],
    )
    assert "search for holiday rentals" in summary
    assert "get listing details" in summary
    assert "pagination" not in summary


def test_what_tools_work_with_is_an_object_never_a_preposition_or_a_description_word() -> None:
    tools = [
        _tool("insert_header_near_text", "Insert a header near the given text in a document."),
        _tool("insert_list_near_text", "Insert a list near the given text in a document."),
        _tool("insert_table_near_text", "Insert a table near the given text in a document."),
        _tool("list_k8s_resources", "List Kubernetes resources in a cluster."),
        _tool("get_k8s_resources", "Get Kubernetes resources by kind."),
        _tool("delete-many", "Delete many documents matching a filter from a collection."),
        _tool("update-many", "Update many documents matching a filter in a collection."),
    ]
    summary = _summary("docs", tools)
    said = summary.split(" that work with ", 1)[1]
    assert "near" not in said and "many" not in said and " s " not in f" {said} "
    assert "k8s resources" in said
