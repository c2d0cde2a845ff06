from __future__ import annotations

import numpy as np

from cartograph.index.embedders import embed_queries
from cartograph.index.minilm import OnnxMiniLM
from cartograph.index.query import embedding_text, split_steps, step_spans


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
