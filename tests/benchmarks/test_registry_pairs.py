"""benchmarks/registry_pairs.py: the example tasks that train on the distractor registries."""

from __future__ import annotations

import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from registry_pairs import _without_server, bootstrap_texts  # noqa: E402


def test_only_a_trailing_product_name_is_dropped() -> None:
    rng = random.Random(0)
    cut = {_without_server("List the requests in Kazuph Taskmanager", rng) for _ in range(40)}
    assert cut == {"List the requests", "List the requests in Kazuph Taskmanager"}
    kept = {_without_server("Find the files in the current folder", rng) for _ in range(20)}
    assert kept == {"Find the files in the current folder"}


def test_bootstrap_texts_give_the_index_text_and_user_tasks() -> None:
    tools = [
        {"server": "acme-tasks", "tool": "list_requests", "description": "List all requests."},
        {
            "server": "acme-tasks",
            "tool": "mark_task_done",
            "description": "Mark a given task as done.",
            "input_schema": {"type": "object", "properties": {"taskId": {"type": "string"}}},
        },
    ]
    cards = bootstrap_texts(tools)
    assert set(cards) == {("acme-tasks", "list_requests"), ("acme-tasks", "mark_task_done")}
    dense, queries = cards[("acme-tasks", "mark_task_done")]
    assert "mark task done" in dense.lower()
    assert queries and all(q.strip() for q in queries)
    assert any("task" in q.lower() for q in queries)
