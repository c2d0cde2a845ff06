from __future__ import annotations

from cartograph.index.query import split_steps


def test_a_single_step_task_is_not_split():
    assert split_steps("send an email to my boss") == []
    assert split_steps("Show me today's trending topics in the gaming world.") == []


def test_a_multi_step_task_is_split_at_its_joints():
    steps = split_steps(
        "Find the latest papers about MCP on arXiv, summarise the findings "
        "and then save a PDF report."
    )
    assert steps == [
        "Find the latest papers about MCP on arXiv",
        "summarise the findings",
        "save a PDF report",
    ]


def test_fragments_without_two_content_words_join_their_neighbour():
    steps = split_steps("Give me a markdown report with whois information and sitemap")
    assert steps == []  # "sitemap" alone is too thin, so the task stays whole


def test_steps_are_capped():
    task = ", ".join(f"step number {i} of the plan" for i in range(10))
    assert len(split_steps(task)) == 4
