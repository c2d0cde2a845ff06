"""Congruence: the same queries give the same top-k on the file index and the PostgreSQL one.

Both are built from the same verified cards with the same embedder. Below the exact threshold
PostgreSQL computes every cosine, so every method must give the same top-k as NumPy; with the
threshold forced to zero the dense channel comes from HNSW candidates instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import psycopg
import pytest
from indexkit import INDEX_KEY

from cartograph.cards.seal import sign_card
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.index import ToolIndex
from cartograph.index import open_index_with_status as open_with_status
from cartograph.storage import open_store
from cartograph.storage.pg_index import PgVectors
from cartograph.upstream.snapshot import load_snapshot

FLEET = Path("/work/shared/fleet/catalog.json")
FLEET_QUERIES = Path(__file__).resolve().parents[2] / "benchmarks" / "queries" / "fleet_dev.jsonl"
SMALL_QUERIES = [
    "open an issue about the login bug",
    "tell the team in the channel that the build is green",
    "what will the weather be in Lisbon tomorrow, and are there storm alerts in CA",
    "save these notes to a file",
    "which tables are in the database",
    "find emails from my landlord",
    "list pull requests then post a message",
]
METHODS = ("hybrid", "two-stage", "flat", "bm25", "jaccard")


def open_index_with_status(ws, embedder):
    return open_with_status(ws, open_store(ws), embedder)


def write_card(ws, card):
    open_store(ws).write_card(card)


def top(index: ToolIndex, query: str, method: str, k: int = 5) -> list[tuple[str, str]]:
    return [(h.server, h.tool) for h in index.search(query, k=k, method=method)]


def test_every_method_gives_the_same_top_k_on_both_backends(pg_ws, pg_cards, embedder):
    pg_index, status = open_index_with_status(pg_ws, embedder)
    assert isinstance(pg_index.vectors, PgVectors) and status.action == "rebuilt"
    file_index = ToolIndex.build(pg_cards, embedder)
    assert pg_index.tool_ids == file_index.tool_ids
    for method in METHODS:
        for query in SMALL_QUERIES:
            assert top(pg_index, query, method) == top(file_index, query, method), (method, query)
    pg_index.vectors.exact_max = 0  # HNSW candidates: on 14 tools it returns them all
    for query in SMALL_QUERIES:
        assert top(pg_index, query, "hybrid") == top(file_index, query, "hybrid"), query


def test_hnsw_mode_standardises_with_the_statistics_of_every_tool(
    pg_ws, pg_cards, embedder, monkeypatch
):
    """With fewer candidates than tools, fusion still sees the full scan's mean and deviation."""
    from cartograph.storage import pg_index

    monkeypatch.setattr(pg_index, "RANK_DEPTH", 5)
    index, _ = open_index_with_status(pg_ws, embedder)
    index.vectors.exact_max = 0
    file_index = ToolIndex.build(pg_cards, embedder)
    q = file_index.embed_queries([SMALL_QUERIES[1]])[0]
    full = file_index.tool_vectors @ q
    ev = index.evidence(SMALL_QUERIES[1], q)
    assert ev.dense_stats == pytest.approx((full.mean(), full.std()), abs=1e-5)
    nearest = np.argsort(-full)[:5]
    assert ev.tool_cos[nearest] == pytest.approx(full[nearest], abs=1e-5)
    others = np.setdiff1d(np.arange(len(full)), nearest)
    assert ev.tool_cos[others] == pytest.approx(np.full(len(others), full.mean()), abs=1e-5)


def test_a_reattested_server_is_embedded_again_alone(pg_ws, pg_cards, embedder):
    open_index_with_status(pg_ws, embedder)
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:
        ids_before = dict(conn.execute("SELECT tool, id FROM cartograph_index_tools").fetchall())
    slack = pg_cards["slack"]
    same = sign_card(slack, INDEX_KEY, signed_at="2026-11-30T02:00:00Z")
    write_card(pg_ws, same)  # signed again, same content: nothing to embed
    assert open_index_with_status(pg_ws, embedder)[1].action == "loaded"
    first = slack.tools[0].model_copy(update={"summary": "Send a message to a Slack channel."})
    changed = slack.model_copy(update={"tools": [first, *slack.tools[1:]]})
    resigned = sign_card(changed, INDEX_KEY, signed_at="2026-11-30T02:00:00Z")
    write_card(pg_ws, resigned)
    _, status = open_index_with_status(pg_ws, embedder)
    assert status.action == "updated" and status.reason.startswith("1 server(s)")
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:
        ids_after = dict(conn.execute("SELECT tool, id FROM cartograph_index_tools").fetchall())
    changed = {tool for tool in ids_after if ids_after[tool] != ids_before[tool]}
    assert changed == {"post_message", "list_channels"}
    again, status = open_index_with_status(pg_ws, embedder)
    assert status.action == "loaded"
    file_index = ToolIndex.build({**pg_cards, "slack": resigned}, embedder)
    for query in SMALL_QUERIES:
        assert top(again, query, "hybrid") == top(file_index, query, "hybrid")


class CountingEmbedder:
    """The embedder, counting the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.model, self.dim = inner.name, inner.model, inner.dim
        self.spec = getattr(inner, "spec", inner.name)
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_a_reattested_server_embeds_only_its_changed_tools(pg_ws, pg_cards, embedder):
    """Schema v3: each row keeps its text's hash; rows of a v2 store (no hash) are embedded."""
    from cartograph.storage.pg_db import database
    from cartograph.storage.pg_index_sync import sync_index

    open_index_with_status(pg_ws, embedder)
    db = database(pg_ws.store)
    slack = pg_cards["slack"]
    first = slack.tools[0].model_copy(update={"summary": "Send a message to a Slack channel."})
    changed = slack.model_copy(update={"tools": [first, *slack.tools[1:]]})
    write_card(pg_ws, sign_card(changed, INDEX_KEY, signed_at="2026-11-30T02:00:00Z"))
    counting = CountingEmbedder(embedder)
    assert sync_index(db, pg_index_cards(pg_ws), counting)[0] == "updated"
    assert len(counting.texts) == 2  # the changed tool and the server document
    assert "Send a message to a Slack channel." in counting.texts[0]
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:  # as a v2 store left its rows
        conn.execute("UPDATE cartograph_index_tools SET text_key = NULL")
    write_card(pg_ws, sign_card(slack, INDEX_KEY, signed_at="2026-11-30T03:00:00Z"))
    counting = CountingEmbedder(embedder)
    assert sync_index(db, pg_index_cards(pg_ws), counting)[0] == "updated"
    assert len(counting.texts) == len(slack.tools) + 1
    again, status = open_index_with_status(pg_ws, embedder)
    assert status.action == "loaded"
    file_index = ToolIndex.build(pg_cards, embedder)
    for query in SMALL_QUERIES:
        assert top(again, query, "hybrid") == top(file_index, query, "hybrid")


def test_a_tampered_vector_is_caught_by_the_spot_check(pg_ws, pg_cards, embedder):
    open_index_with_status(pg_ws, embedder)
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:
        conn.execute(
            "UPDATE cartograph_index_tools SET embedding = "
            "(SELECT embedding FROM cartograph_index_tools WHERE tool = 'get_alerts')"
        )
    index, status = open_index_with_status(pg_ws, embedder)
    assert status.action == "rebuilt" and "do not match" in (status.reason or "")
    file_index = ToolIndex.build(pg_cards, embedder)
    assert top(index, SMALL_QUERIES[0], "flat") == top(file_index, SMALL_QUERIES[0], "flat")


@pytest.mark.slow
@pytest.mark.skipif(not FLEET.is_file(), reason=f"{FLEET} absent (the shared fleet catalog)")
def test_the_fleet_sized_index_gives_the_same_top_k_on_both_backends(pg_ws, embedder):
    """2,598 real tools, the fleet dev queries: exact in PostgreSQL, identical top-5."""
    from indexkit import write_workspace_cards

    write_workspace_cards(pg_ws, INDEX_KEY)  # the public key (and a few cards, replaced below)
    generated = generate_cards(load_snapshot(FLEET), created_at="2026-11-30T00:00:00Z")
    cards = {
        n: sign_card(g.card, INDEX_KEY, signed_at="2026-11-30T00:00:00Z")
        for n, g in generated.items()
    }
    for card in cards.values():
        write_card(pg_ws, card)
    once = EmbedOnce(embedder)  # the same texts in the same batches: embed the fleet once
    pg_index, _ = open_index_with_status(pg_ws, once)
    file_index = ToolIndex.build(pg_index_cards(pg_ws), once)
    assert once.hits == 2  # tool and server documents came from the cache the second time
    assert pg_index.tool_ids == file_index.tool_ids and len(pg_index) > 2500
    queries = [json.loads(line)["query"] for line in FLEET_QUERIES.read_text().splitlines()]
    for method in ("hybrid", "two-stage", "flat", "bm25"):
        for query in queries:
            assert top(pg_index, query, method) == top(file_index, query, method), (method, query)


class EmbedOnce:
    """The embedder, remembering each batch it embedded (both indexes embed the same ones)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.model, self.dim = inner.name, inner.model, inner.dim
        self.spec = getattr(inner, "spec", inner.name)
        self.hits = 0
        self._seen = {}

    def embed(self, texts):
        key = tuple(texts)
        if key in self._seen:
            self.hits += 1
        else:
            self._seen[key] = self.inner.embed(texts)
        return self._seen[key]

    def embed_query(self, texts):
        fn = getattr(self.inner, "embed_query", None)
        return fn(texts) if callable(fn) else self.inner.embed(texts)


def pg_index_cards(ws):
    return open_store(ws).load_verified().cards
