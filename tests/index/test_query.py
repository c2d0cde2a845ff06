from __future__ import annotations

import numpy as np
import pytest

from cartograph.index.embedders import embed_queries
from cartograph.index.onnx_minilm import OnnxMiniLM
from cartograph.index.query import embedding_text, split_steps, step_spans, task_frame


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


def test_embedding_text_reads_file_paths_as_words():
    assert embedding_text("save it in /root/markdown/bitcoin.md") == "save it in file bitcoin.md"
    assert embedding_text("What is in /root/music?") == "What is in folder music?"
    assert embedding_text(r"open C:\Users\me\notes.txt") == "open file notes.txt"
    assert embedding_text("and/or a ratio of 3/4") == "and/or a ratio of 3/4"  # not paths


def test_queries_are_embedded_through_embedding_text():
    model = OnnxMiniLM()
    got = embed_queries(model, ["copy /tmp/a/b.csv"])
    assert np.allclose(got, model.embed(["copy file b.csv"]), atol=1e-6)
    assert not np.allclose(got, model.embed(["copy /tmp/a/b.csv"]), atol=1e-3)


def test_step_spans_locate_each_step_in_the_task():
    task = "Find the latest papers about MCP on arXiv, summarise the findings and then save a PDF."
    steps = split_steps(task)
    spans = step_spans(task, steps)
    assert spans is not None
    assert [task[a:b] for a, b in spans] == steps
    assert step_spans("abc def", ["xyz"]) is None


@pytest.mark.parametrize(
    ("task", "frame"),
    [
        ("look up the latest news about the EU AI Act", "look up the latest news"),
        (
            "find recent arXiv papers on diffusion models for protein design",
            "find recent arXiv papers",
        ),
        ("show the last commits of the git repository", "show the last commits"),
        # the scene-setting clause is passed over, the request's wrapping dropped
        (
            "I am planning a short trip and need to reserve two seats on a train for March 4th.",
            "reserve two seats",
        ),
        ("The CircleCI build for gh/acme is red, rerun the failed jobs", "rerun the failed jobs"),
        (
            "In /data/budget.xlsx, where does the word 'Contingency' show up?",
            "where does the word 'Contingency' show up",
        ),
        ("Can you give me information on the tenant rights in California?", "give me information"),
        ("I need a spacious farmhouse in Mallorca with a large garden", "a spacious farmhouse"),
        ("Okay, now list the open pull requests in the repo", "list the open pull requests"),
        ("First, secure a room for 2 adults at the Sheraton", "secure a room"),
    ],
)
def test_task_frame_is_what_the_task_asks_without_its_topic(task, frame):
    assert task_frame(task) == frame


@pytest.mark.parametrize(
    "task",
    [
        "list files",  # nothing to set apart
        "remember that Alice works at Acme",  # one indexed word before the topic
        "Can you search for tracks from the movie Raees?",
        "show the open pull requests",  # no topic: the frame would be the whole task
        "",
    ],
)
def test_task_frame_is_none_where_nothing_sets_the_topic_apart(task):
    assert task_frame(task) is None
