"""The frame channel: a task's frame (what it asks without what it is about) embedded on its
own and weighed in discover's ranking where the fusion gives it a weight (the shipped weights do
not: docs/benchmarks.md "Frame channel"), over real generated cards and the real embedder."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from indexkit import INDEX_KEY, _tool, signed_cards

from cartograph.index import ToolIndex, embed_queries
from cartograph.index.methods import HybridParams, hybrid_parts
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot


def _server(name: str, *tools: dict) -> ServerSnapshot:
    return ServerSnapshot(name=name, transport="stdio", tools=list(tools))


WEB_AND_MODELS = Snapshot(
    servers={
        "brave": _server(
            "brave",
            _tool("brave_web_search", "Search the web for pages, news and articles.", query="Q"),
        ),
        "cloudflare": _server(
            "cloudflare",
            _tool("ai_list_models", "List the available AI models."),
            _tool("ai_get_model", "Get the details of one AI model.", model="Model name"),
        ),
    },
    created_at="2026-12-07T00:00:00Z",
)
TASK = "look up the latest news about the EU AI Act"
WEIGHED = replace(HybridParams(), w_frame=0.32)
"""The weight the frame took when fitted with the rest (not shipped)."""


@pytest.fixture(scope="module")
def web(embedder) -> ToolIndex:
    index = ToolIndex.build(signed_cards(INDEX_KEY, WEB_AND_MODELS), embedder)
    index.hybrid = WEIGHED
    return index


def test_the_frame_is_embedded_on_its_own_and_scored_against_every_tool(web, embedder):
    ev = web.evidence(TASK)
    assert ev.frame_cos is not None
    frame_vec = embed_queries(embedder, ["look up the latest news"])[0]
    assert np.allclose(ev.frame_cos, web.tool_vectors @ frame_vec, atol=1e-5)
    # the whole task's vector is another one: the topic (AI) is in it
    assert not np.allclose(ev.frame_cos, ev.tool_cos, atol=1e-3)


def test_the_frame_term_favours_the_tool_that_does_that_kind_of_job(web):
    parts = hybrid_parts(web.evidence(TASK), web.hybrid_params)
    by_tool = dict(zip((t for _, t in web.tool_ids), parts["frame"], strict=True))
    assert by_tool["brave_web_search"] > max(by_tool["ai_list_models"], by_tool["ai_get_model"])


def test_a_task_without_a_frame_gets_no_frame_term(web):
    ev = web.evidence("list the AI models")
    assert ev.frame_cos is None
    assert "frame" not in hybrid_parts(ev, web.hybrid_params)


def test_with_the_shipped_weights_the_frame_is_not_embedded(web):
    assert HybridParams().w_frame == 0.0
    web.hybrid = None
    try:
        ev = web.evidence(TASK)
        assert ev.frame_cos is None
        assert "frame" not in hybrid_parts(ev, web.hybrid_params)
        assert web.evidence(TASK, frames=True).frame_cos is not None
    finally:
        web.hybrid = WEIGHED


def test_rift_ranks_its_synthetic_tasks_with_discover_own_scores_frame_included(web):
    from cartograph.rift.workspace import discover_ranker

    texts = [TASK, "list the AI models", "search the web for news about transistors"]
    vecs = web.embed_queries(texts)
    rows = discover_ranker(web)(texts, vecs)
    for text, vec, row in zip(texts, vecs, rows, strict=True):
        expected = web.scores(text, query_vec=vec) / WEIGHED.w_dense
        assert np.allclose(row, expected, atol=1e-6), text
    without = replace(WEIGHED, w_frame=0.0)
    web.hybrid = without
    try:
        plain = discover_ranker(web)(texts, vecs)
    finally:
        web.hybrid = WEIGHED
    assert not np.allclose(plain[0], rows[0] * WEIGHED.w_dense / without.w_dense, atol=1e-3)
    assert np.allclose(plain[1], rows[1], atol=1e-6)  # no frame: the same scores
