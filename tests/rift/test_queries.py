"""Layer 2's synthetic queries: task-style requests from the name and schema, never the
description."""

from __future__ import annotations

from cartograph.rift.queries import QueryOptions, synthetic_query, task_query, words

ISSUE_SCHEMA = {
    "type": "object",
    "properties": {
        "owner": {"type": "string", "description": "Repository owner. Required."},
        "repo": {"type": "string"},
        "issueNumber": {"type": "integer"},
        "state": {"type": "string", "enum": ["open", "closed"]},
    },
    "required": ["owner", "repo", "issueNumber"],
}


SCHEMA_STYLE = QueryOptions(style="schema")


def test_task_query_reads_like_a_request_with_example_values() -> None:
    q = synthetic_query("getIssueComments", ISSUE_SCHEMA)
    assert q == "get issue comments for owner octocat, repo example-project and issue number 1"
    times = {
        "type": "object",
        "properties": {
            "source_timezone": {"type": "string"},
            "time": {"type": "string", "description": "Time in 24-hour format (HH:MM)"},
            "target_timezone": {"type": "string"},
        },
        "required": ["source_timezone", "time", "target_timezone"],
    }
    assert synthetic_query("convert_time", times) == (
        "convert time for source timezone Europe/Paris, time 14:30 and target timezone Asia/Tokyo"
    )


def test_task_query_drops_placeholder_values_and_names_optional_arguments() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    assert task_query("get_thing", schema) == "get thing for id"  # "example-id" says nothing
    optional = {"type": "object", "properties": {"namespace": {"type": "string"}}}
    assert task_query("pods_list", optional) == "pods list with namespace"
    fixed = {"type": "string", "minLength": 32, "maxLength": 32}
    note = {"type": "object", "properties": {"note_id": fixed}, "required": ["note_id"]}
    assert task_query("get_note", note) == "get note for note id"  # the stock hex id says nothing


def test_task_query_asks_with_the_value_the_tool_takes() -> None:
    sql = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    sql["properties"]["query"]["description"] = "SQL query to execute"
    assert task_query("read_query", sql) == "read query for query SELECT 1"
    assert "SELECT" not in task_query("write_query", sql)  # its card's example is an INSERT


def test_queries_never_read_the_tool_description() -> None:
    described = {**ISSUE_SCHEMA, "description": "Fetches the comments of an issue"}
    for opts in (QueryOptions(), SCHEMA_STYLE):
        assert "Fetches" not in synthetic_query("get_issue", described, opts)


def test_schema_query_is_built_from_name_and_arguments_required_first() -> None:
    q = synthetic_query("getIssueComments", ISSUE_SCHEMA, SCHEMA_STYLE)
    assert q == "get issue comments by owner, repo, issue number optionally state"


def test_query_with_glosses_reads_argument_descriptions_and_enums() -> None:
    opts = QueryOptions(style="schema", max_glosses=1)
    q = synthetic_query("get_issue", ISSUE_SCHEMA, opts)
    assert q.endswith("; owner: Repository owner")  # arguments without a description add none
    q2 = synthetic_query("get_issue", ISSUE_SCHEMA, QueryOptions(style="schema", max_glosses=2))
    assert q2.endswith("; owner: Repository owner; state: open, closed")


def test_query_without_schema_is_the_name_in_words() -> None:
    assert synthetic_query("list-all_OneNote-sections", None) == "list all one note sections"
    assert words("HTTPServerURL") == ["http", "server", "url"]
