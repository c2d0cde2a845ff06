"""The action channel: a task's create/read/update/delete openers, a tool name's verb, and
their agreement in discover's ranking over real generated cards and the real embedder."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from indexkit import INDEX_KEY, _tool, signed_cards

from cartograph.index import ToolIndex
from cartograph.index.intent import ActionMatch, task_actions, tool_action
from cartograph.index.methods import HybridParams, hybrid_parts
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot


@pytest.mark.parametrize(
    ("task", "asked"),
    [
        ("file a bug on our GitHub repo: the login page is broken", {"create"}),
        ("open a pull request from my feature branch into main", {"create"}),
        ("Open the Shortcut doc 8d2f and show me its text", {"read"}),
        ("what meetings do I have in my Outlook calendar tomorrow", {"read"}),
        ("which incidents are open in PagerDuty right now", {"read"}),
        ("Can you show me the 10 biggest customers, then remove the old ones", {"read", "delete"}),
        ("I want to add a task in Asana to review the contract", {"create"}),
        ("tell me the weather in Paris", {"read"}),
        ("tell the #deploys channel that the release is out", {"create"}),
        ("how many users signed up yesterday", {"read"}),
        ("how do I drive from the Eiffel Tower to the Louvre", set()),
        ("Overwrite the Postman environment 'Staging' with these values", {"update"}),
        ("read the file and list the errors", {"read"}),
        ("the weekly report, please", set()),
        ("commit what's staged with the message 'fix typo'", {"create"}),
        ("", set()),
    ],
)
def test_task_actions_come_from_clause_openers_only(task, asked):
    assert task_actions(task) == frozenset(asked)


def test_a_verb_inside_a_clause_is_not_an_opener():
    # "file", "log" and "update" are nouns here, not what the task asks
    assert task_actions("summarise the log file of the last update") == frozenset()


@pytest.mark.parametrize(
    ("name", "actions"),
    [
        ("asana_create_task", {"create"}),
        ("create-calendar-event", {"create"}),
        ("list_incidents", {"read"}),
        ("linear_addIssueToRelease", {"create"}),
        ("update_pull_request_branch", {"update"}),
        ("write_query", {"create", "update"}),
        ("create_or_update_file", {"create", "update"}),
        ("find_and_replace_doc", {"read", "update"}),
        ("build_and_push_image_to_ecr", {"create"}),  # "push" is no coarse action
        ("delete-onedrive-file", {"delete"}),
        ("convert_time", set()),  # another verb leads
        ("git_log", set()),
        ("maps_geocode", set()),
    ],
)
def test_tool_action_is_the_verb_leading_the_name(name, actions):
    assert tool_action(name) == frozenset(actions)


def test_agreement_rewards_the_asked_action_and_penalises_the_others():
    match = ActionMatch(["create_incident", "list_incidents", "write_note", "convert_time"])
    assert match.agreement("which incidents are open").tolist() == [-1.0, 1.0, -1.0, 0.0]
    assert match.agreement("add a note to the incident").tolist() == [1.0, -1.0, 1.0, 0.0]
    assert match.agreement("the incidents").tolist() == [0.0, 0.0, 0.0, 0.0]


def test_a_name_without_an_action_verb_falls_back_to_the_cards_read_only_hint():
    names = ["git_log", "git_commit", "git_status", "list_branches"]
    match = ActionMatch(names, [True, False, None, False])
    # git_log only reads; git_commit changes data (any action but reading); git_status has no
    # hint; list_branches keeps its name's verb whatever the hint says
    assert match.agreement("show the last commits").tolist() == [1.0, -1.0, 0.0, 1.0]
    assert match.agreement("commit the staged changes").tolist() == [-1.0, 1.0, 0.0, -1.0]
    assert ActionMatch(names).agreement("show the last commits").tolist() == [0, 0, 0, 1]


def test_the_read_only_hint_travels_from_the_card_through_a_saved_index(tmp_path, embedder):
    tools = [
        _tool("git_log", "Shows the commit logs.", repo_path="Repository path"),
        _tool("git_commit", "Records changes to the repository.", repo_path="Repository path"),
    ]
    tools[0]["annotations"] = {"readOnlyHint": True}
    tools[1]["annotations"] = {"readOnlyHint": False}
    snap = Snapshot(
        servers={"git": ServerSnapshot(name="git", transport="stdio", tools=tools)},
        created_at="2026-11-30T00:00:00Z",
    )
    built = ToolIndex.build(signed_cards(INDEX_KEY, snap), embedder)
    assert [d.reads for d in built.documents] == [True, False]
    built.save(tmp_path / "idx")
    loaded = ToolIndex.load(tmp_path / "idx", embedder)
    assert [d.reads for d in loaded.documents] == [True, False]
    assert loaded.actions.agreement("show the last commits").tolist() == [1.0, -1.0]


INCIDENTS = Snapshot(
    servers={
        "pagerduty": ServerSnapshot(
            name="pagerduty",
            transport="stdio",
            tools=[
                _tool("create_incident", "Create a new incident in PagerDuty.", title="Title"),
                _tool(
                    "list_incidents",
                    "List incidents in PagerDuty, filtered by status.",
                    statuses="Statuses",
                ),
                _tool("update_incident", "Update an incident's status or urgency.", id="ID"),
            ],
        )
    },
    created_at="2026-11-30T00:00:00Z",
)


@pytest.fixture(scope="module")
def incidents(embedder) -> ToolIndex:
    return ToolIndex.build(signed_cards(INDEX_KEY, INCIDENTS), embedder)


def test_discover_weighs_the_action_channel_with_the_shipped_weight(incidents):
    task = "which incidents are open in PagerDuty right now"
    ev = incidents.evidence(task)
    assert ev.action is not None
    parts = hybrid_parts(ev, incidents.hybrid_params)
    by_tool = dict(zip((t for _, t in incidents.tool_ids), parts["action"], strict=True))
    w = HybridParams().w_action
    assert w > 0
    assert by_tool == pytest.approx(
        {"create_incident": -w, "list_incidents": w, "update_incident": -w}
    )
    assert incidents.search(task, k=1)[0].tool == "list_incidents"


def test_without_its_weight_the_action_channel_is_not_computed(incidents):
    incidents.hybrid = replace(HybridParams(), w_action=0.0)
    try:
        ev = incidents.evidence("create an incident for the outage")
        assert ev.action is None
        assert "action" not in hybrid_parts(ev, incidents.hybrid_params)
    finally:
        incidents.hybrid = None
    ev = incidents.evidence("create an incident for the outage")
    assert ev.action is not None and np.count_nonzero(ev.action == 1.0) == 1


def test_extra_actions_count_as_asked():
    match = ActionMatch(["ha_config_set_script", "ha_config_get_script", "convert_time"])
    task = "ha config set script for script id morning_routine"
    assert match.agreement(task).tolist() == [0.0, 0.0, 0.0]  # no clause opens with an action
    assert match.agreement(task, frozenset({"update"})).tolist() == [1.0, -1.0, 0.0]


SCRIPTS = Snapshot(
    servers={
        "home": ServerSnapshot(
            name="home",
            transport="stdio",
            tools=[
                _tool("ha_config_set_script", "Create or update a script.", script_id="Script"),
                _tool("ha_config_get_script", "Get a script's configuration.", script_id="Script"),
            ],
        )
    },
    created_at="2026-11-30T00:00:00Z",
)


def test_rift_asks_its_name_led_tasks_for_the_action_the_name_says(embedder):
    from cartograph.rift.workspace import discover_ranker, named_action

    index = ToolIndex.build(signed_cards(INDEX_KEY, SCRIPTS), embedder)
    task = "ha config set script for script id morning_routine"
    assert named_action(task) == frozenset({"update"})
    assert named_action("git log for repo path .") == frozenset()
    vec = index.embed_queries([task])
    ranked = discover_ranker(index)([task], vec)[0]
    plain = index.scores(task, query_vec=vec[0]) / index.hybrid_params.w_dense
    w = index.hybrid_params.w_action / index.hybrid_params.w_dense
    assert ranked - plain == pytest.approx([w, -w], abs=1e-6)  # set gains, get loses
