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


def test_what_tools_work_with_is_counted_by_head_noun_first_named_winning_ties() -> None:
    tools = [
        _tool("list_incidents", "List incidents."),
        _tool("get_incident", "Get an incident."),
        _tool("get_past_incidents", "Get past incidents like a given one."),
        _tool("list_services", "List services."),
        _tool("get_service", "Get a service."),
        _tool("list_schedule_custom_shifts", "List the custom shifts of a schedule."),
        _tool("get_schedule_custom_shift", "Get one custom shift of a schedule."),
        _tool("list_alert_grouping_settings", "List the alert grouping settings."),
        _tool("create_pull_request", "Open a pull request."),
    ]
    summary = _summary("oncall", tools)
    # three incidents and two services outnumber each two-word phrase; "custom shifts" ties
    # with "services" and comes later; a verb inside a name ("pull request") stays a noun
    assert summary.endswith("tools that work with incidents, services and custom shifts.")


def test_a_phrase_names_its_head_only_where_it_makes_up_two_thirds_of_its_uses() -> None:
    tools = [
        _tool("list_calendar_events", "List the calendar events."),
        _tool("get_calendar_event", "Get a calendar event."),
        _tool("list_change_events", "List change events."),
        _tool("get_change_event", "Get a change event."),
        _tool("list_tasks", "List tasks."),
        _tool("get_task", "Get a task."),
    ]
    said = _summary("office", tools).split(" that work with ", 1)[1]
    assert said == "events and tasks."  # "calendar event" is 2 of the 4 events
    tools.insert(0, _tool("create_calendar_event", "Create a calendar event."))
    said = _summary("office", tools).split(" that work with ", 1)[1]
    assert said == "events and tasks."  # 3 of 5: under two thirds
    tools.insert(0, _tool("delete_calendar_event", "Delete a calendar event."))
    said = _summary("office", tools).split(" that work with ", 1)[1]
    assert said == "calendar events and tasks."  # 4 of 6


def test_a_server_whose_tool_names_are_actions_lists_the_actions() -> None:
    tools = [
        _tool(f"webkit_{action}", f"{action.capitalize()} the given element on the page.")
        for action in ("navigate", "click", "fill", "hover", "select")
    ]
    summary = _summary("webkit", tools)
    assert summary.endswith("offers 5 tools: navigate, click, fill, hover and select.")


def test_two_things_named_are_completed_by_one_that_two_descriptions_name() -> None:
    tools = [
        _tool("vcs_status", "Shows the working tree status."),
        _tool("vcs_create_branch", "Creates a new branch from an optional base branch."),
        _tool("vcs_branch", "List branches."),
        _tool("vcs_log", "Shows the commit logs."),
        _tool("vcs_show", "Shows the contents of a commit."),
        _tool("vcs_commit", "Records changes to the repository."),
        _tool("vcs_reset", "Unstages all staged changes."),
    ]
    summary = _summary("vcs", tools)
    # the names give branch and status; "log" and "show" are actions, whose descriptions both
    # read commits
    assert summary.endswith("that work with branch, status and commit.")
