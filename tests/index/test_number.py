"""The number channel: one thing or many in a task's first object, in a tool's name and schema,
their agreement, and the tool's number kept through a saved index."""

from __future__ import annotations

import json

import pytest
from indexkit import INDEX_KEY, _tool, signed_cards

from cartograph.index import ToolIndex
from cartograph.index.number import MANY, ONE, NumberMatch, is_plural, task_number, tool_number
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot


@pytest.mark.parametrize(
    ("task", "number"),
    [
        ("show the last commits of the git repository", MANY),
        ("Can you fetch the latest 5 pull requests", MANY),
        ("what meetings do I have tomorrow", MANY),
        ("which incidents are open in PagerDuty", MANY),
        ("list all tables in the database", MANY),
        ("What is the status of the last deployments?", MANY),  # past the aspect word
        ("get all data from the sheet", MANY),
        ("Show me issue 42", ONE),
        ("get pricing for service code AmazonEC2", ONE),
        ("Get the details of project Apollo", ONE),
        ("add a comment to the ticket", ONE),
        ("remember that Alice works at Acme", None),  # "that" opens a clause, no object
        ("how many documents are in the collection", None),  # a count
        ("how do I get to the airport", None),
        ("the weekly report, please", None),  # no opening verb
        ("", None),
    ],
)
def test_task_number_is_the_number_of_its_first_object(task, number):
    assert task_number(task) == number


@pytest.mark.parametrize(
    ("name", "schema", "number"),
    [
        ("list_projects", None, MANY),
        ("get_all_users", None, MANY),
        ("linear_getProjectUpdates", None, MANY),  # plural object
        ("asana_get_tags_for_workspace", None, MANY),  # the object before the preposition
        ("get_project", None, ONE),
        ("linear_getProjectUpdateById", None, ONE),
        ("get_issue_details", None, ONE),  # an aspect of one issue
        ("get-calendar-event", None, ONE),
        ("create_issue", None, None),  # writes say nothing
        ("search_code", None, None),  # a search returns what matches
        ("chroma_get_collection_count", None, None),  # a count
        ("git_log", {"properties": {"repo_path": {}, "max_count": {}}}, MANY),
        (
            "git_show",
            {"properties": {"repo_path": {}, "revision": {}}, "required": ["revision"]},
            ONE,
        ),
        ("git_status", {"properties": {"repo_path": {}}, "required": ["repo_path"]}, None),
        ("browser_press_key", {"properties": {"key": {}}, "required": ["key"]}, None),
    ],
)
def test_tool_number_reads_the_name_then_the_schema(name, schema, number):
    assert tool_number(name, schema) == number


@pytest.mark.parametrize(
    ("word", "plural"),
    [
        ("commits", True),
        ("entries", True),
        ("people", True),
        ("status", False),
        ("address", False),
        ("analysis", False),
        ("news", False),
        ("kubernetes", False),
    ],
)
def test_plural_nouns(word, plural):
    assert is_plural(word) is plural


def test_agreement_rewards_the_asked_number_and_penalises_the_other():
    match = NumberMatch([MANY, ONE, None])
    assert match.agreement("show the last commits").tolist() == [1.0, -1.0, 0.0]
    assert match.agreement("show the commit abc123").tolist() == [-1.0, 1.0, 0.0]
    assert match.agreement("remember that Alice works at Acme").tolist() == [0.0, 0.0, 0.0]


GIT = Snapshot(
    servers={
        "git": ServerSnapshot(
            name="git",
            transport="stdio",
            tools=[
                _tool("git_log", "Shows the commit logs.", repo_path="Path", max_count="How many"),
                _tool("git_show", "Shows a commit.", repo_path="Path", revision="Revision"),
                _tool("git_status", "Shows the working tree status.", repo_path="Path"),
            ],
        )
    },
    created_at="2026-11-30T00:00:00Z",
)


def test_the_number_travels_from_the_card_through_a_saved_index(tmp_path, embedder):
    built = ToolIndex.build(signed_cards(INDEX_KEY, GIT), embedder)
    assert [d.number for d in built.documents] == [MANY, None, None]  # revision is optional
    built.save(tmp_path / "idx")
    loaded = ToolIndex.load(tmp_path / "idx", embedder)
    assert [d.number for d in loaded.documents] == [MANY, None, None]
    assert loaded.numbers.agreement("show the last commits").tolist() == [1.0, 0.0, 0.0]
    assert built.evidence("show the last commits", numbers=True).number is not None


def test_an_index_saved_before_the_channel_reads_the_names_alone(tmp_path, embedder):
    snap = Snapshot(
        servers={
            "pm": ServerSnapshot(
                name="pm",
                transport="stdio",
                tools=[_tool("list_projects", "Lists projects."), _tool("get_project", "One.")],
            )
        },
        created_at="2026-11-30T00:00:00Z",
    )
    ToolIndex.build(signed_cards(INDEX_KEY, snap), embedder).save(tmp_path / "idx")
    manifest_path = tmp_path / "idx" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for tool in manifest["tools"]:
        del tool["number"]
    manifest_path.write_text(json.dumps(manifest))
    loaded = ToolIndex.load(tmp_path / "idx", embedder)
    assert [d.number for d in loaded.documents] == [MANY, ONE]
