"""The index over real generated cards: search, persistence, and refusal of altered files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cartograph.errors import IndexError_, UsageError
from cartograph.index import DEFAULT_METHOD, METHODS, Hit, ToolIndex, load_embedder
from cartograph.index.documents import card_documents

TASKS = [
    ("post a message in the #general Slack channel", ("slack", "post_message")),
    ("email the quarterly report to my boss", ("gmail", "send_email")),
    ("will it rain in Boston tomorrow", ("weather", "get_forecast")),
    ("open a bug ticket in our GitHub repo", ("github", "create_issue")),
    ("show the tables in the postgres database", ("postgres", "list_tables")),
]


def test_index_holds_every_card_tool_with_unit_vectors_and_centroids(index, cards):
    expected = {(s, t.name) for s, c in cards.items() for t in c.tools}
    assert set(index.tool_ids) == expected
    assert index.tool_vectors.shape == (len(expected), index.embedder.dim)
    assert np.allclose(np.linalg.norm(index.tool_vectors, axis=1), 1.0, atol=1e-5)
    gmail = [i for i, (s, _) in enumerate(index.tool_ids) if s == "gmail"]
    mean = index.tool_vectors[gmail].mean(axis=0)
    centroid = index.centroids[index.servers.index("gmail")]
    assert np.allclose(centroid, mean / np.linalg.norm(mean), atol=1e-5)


def test_documents_read_the_card_not_the_publisher(cards):
    docs = {(d.server, d.tool): d for d in card_documents(cards)}
    doc = docs[("slack", "post_message")]
    card = cards["slack"]
    entry = card.tool("post_message")
    assert entry is not None
    assert doc.dense.startswith("post message")
    assert entry.summary.partition(" About:")[0] in doc.dense and "channel" in doc.dense
    assert "[slack" in doc.dense
    assert all(word in doc.lexical for word in entry.usage.split()[:5])


@pytest.mark.parametrize(("task", "expected"), TASKS)
@pytest.mark.parametrize("method", ["hybrid", "two-stage", "flat"])
def test_dense_methods_find_the_obvious_tool_in_the_top_three(index, task, expected, method):
    hits = index.search(task, k=3, method=method)
    assert expected in [(h.server, h.tool) for h in hits]


def test_search_returns_k_hits_sorted_by_score_for_every_method(index):
    for method in METHODS:
        hits = index.search("list files in a folder", k=4, method=method)
        assert len(hits) == 4 and all(isinstance(h, Hit) for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert DEFAULT_METHOD in METHODS


def test_unknown_method_and_bad_k_are_usage_errors(index):
    with pytest.raises(UsageError, match="unknown method"):
        index.search("x", method="magic")
    with pytest.raises(UsageError):
        index.search("x", k=0)


def test_saved_index_loads_and_answers_the_same(index, tmp_path):
    index.save(tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["embedder"]["model"] == index.embedder.model
    assert manifest["card_digest"] == index.card_set_digest
    assert not list((tmp_path / "idx").rglob("*.pkl"))
    again = ToolIndex.load(tmp_path / "idx", index.embedder)
    assert again.tool_ids == index.tool_ids
    for method in ("hybrid", "bm25", "two-stage"):
        assert again.search("send an email", 5, method) == index.search("send an email", 5, method)


def test_a_changed_index_file_is_refused(index, tmp_path):
    root = index.save(tmp_path / "idx")
    vecs = np.load(root / "tool_vectors.npy")
    vecs[0] = -vecs[0]
    np.save(root / "tool_vectors.npy", vecs)
    with pytest.raises(IndexError_, match="does not match the manifest"):
        ToolIndex.load(root, index.embedder)


def test_an_index_built_with_another_embedder_is_refused(index, tmp_path):
    root = index.save(tmp_path / "idx")
    other = load_embedder("minilm-exact")
    with pytest.raises(IndexError_, match="rebuild"):
        ToolIndex.load(root, other)


def test_the_card_set_digest_hashed_card_by_card_equals_the_whole_set_hashed_at_once(cards):
    from cartograph.canonical import sha256_json
    from cartograph.cards.shelf import CardShelf
    from cartograph.index.manifest import DOCUMENTS_VERSION, card_set_digest

    first = next(iter(cards.values()))
    named = dict(cards)
    named["\U0001f600-emoji"] = first  # outside the BMP: UTF-16 order differs from code points
    named["\uff5e-wide"] = first
    whole = {
        "documents_version": DOCUMENTS_VERSION,
        "cards": {name: card.stored_payload() for name, card in named.items()},
    }
    assert card_set_digest(named) == sha256_json(whole)
    assert card_set_digest(CardShelf(named)) == sha256_json(whole)


def test_evidence_computes_the_name_channel_only_when_weighed_or_asked(index):
    from dataclasses import replace

    plain = index.evidence("post to slack")
    assert plain.name_share is None and plain.server_name_share is None
    asked = index.evidence("post to slack", names=True)
    assert asked.server_name_share is not None
    slack = [i for i, (s, _) in enumerate(index.tool_ids) if s == "slack"]
    assert asked.server_name_share[slack].min() == 1.0 and asked.server_name_share.sum() == len(
        slack
    )
    weighed = replace(index, hybrid=replace(index.hybrid_params, w_server_name=0.6))
    assert weighed.evidence("post to slack").server_name_share is not None
