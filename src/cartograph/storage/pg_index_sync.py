"""Bringing the PostgreSQL index rows up to date with the verified cards.

:func:`sync_index` runs under an advisory lock: only servers whose card changed are embedded
again (a server's rows are keyed by :func:`card_key`, from its signature), so a re-attestation
costs one server's embeddings, and replicas that reload at once wait for one writer instead of
each embedding. Loading a large catalog into an empty table copies the rows first and builds the
HNSW index after. Reading and searching the rows is :mod:`cartograph.storage.pg_index`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from cartograph.canonical import sha256_json, sha256_text
from cartograph.cards.model import Card
from cartograph.errors import IndexError_
from cartograph.index.documents import ToolDocument, card_documents, server_document
from cartograph.index.embedders import Embedder
from cartograph.index.manifest import DOCUMENTS_VERSION, embedder_spec
from cartograph.index.store import IndexAction
from cartograph.index.vector_cache import embed_documents, text_key
from cartograph.index.vectors import server_centroids, unit_rows
from cartograph.storage.pg_db import DIM, INDEX_LOCK, Database

logger = logging.getLogger(__name__)

BULK_MIN = 5_000  # loading this many tools into an empty table: copy first, build HNSW after
_HNSW = (
    "CREATE INDEX IF NOT EXISTS cartograph_index_tools_hnsw "
    "ON cartograph_index_tools USING hnsw (embedding vector_cosine_ops) "
    "WITH (m = 16, ef_construction = 256)"  # the same as the schema's; see docs/scale-out.md
)


def card_key(card: Card) -> str:
    """What one server's rows were built from: its signed card and the document composition.

    The card has verified, so its signature names its signed content; hashing that is what makes
    opening a 100k-tool index cheap (canonicalising every card again took seconds).
    """
    sig = card.signature
    if sig is None:  # not reached for verified cards; kept for callers with unsigned ones
        return sha256_json(
            {"documents_version": DOCUMENTS_VERSION, "card": card.model_dump(mode="json")}
        )
    return sha256_text(f"{DOCUMENTS_VERSION}\n{sig.key_id}\n{sig.value}")


def set_digest(cards: Mapping[str, Card]) -> str:
    """A digest of the card set, from the per-server keys (the index's identity and seed)."""
    return sha256_json({server: card_key(card) for server, card in sorted(cards.items())})


def ordered_documents(cards: Mapping[str, Card]) -> list[ToolDocument]:
    """The tool documents in the file index's order (first of a duplicated tool name kept)."""
    seen: set[tuple[str, str]] = set()
    docs = []
    for doc in card_documents(cards):
        if (doc.server, doc.tool) not in seen:
            seen.add((doc.server, doc.tool))
            docs.append(doc)
    return docs


def sync_index(
    db: Database, cards: Mapping[str, Card], embedder: Embedder, *, rebuild: bool = False
) -> tuple[IndexAction, str | None]:
    """Make the stored rows match ``cards`` (verified); returns (action, reason)."""
    if embedder.dim != DIM:
        raise IndexError_(
            f"{db.label}: the PostgreSQL store keeps {DIM}-dimensional vectors, embedder "
            f"{embedder.name} makes {embedder.dim}; use a {DIM}-dimensional embedder"
        )
    wanted = {"spec": embedder_spec(embedder), "name": embedder.name, "model": embedder.model}
    keys = {server: card_key(card) for server, card in cards.items()}
    with db.error_context("update the index"):
        conn = db.conn()
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (INDEX_LOCK,))
            row = conn.execute("SELECT embedder FROM cartograph_index_meta").fetchone()
            reason = "asked to rebuild" if rebuild else None
            if row is None:
                reason = "no index in the store yet"
            elif (row[0].get("name"), row[0].get("model")) != (wanted["name"], wanted["model"]):
                reason = reason or (
                    f"built with embedder {row[0].get('name')} ({row[0].get('model')}), now "
                    f"{embedder.name} ({embedder.model})"
                )
            if reason is not None:
                conn.execute("DELETE FROM cartograph_index_servers")
                conn.execute(
                    "INSERT INTO cartograph_index_meta (id, embedder) VALUES (1, %s::jsonb) "
                    "ON CONFLICT (id) DO UPDATE SET embedder = excluded.embedder",
                    (json.dumps(wanted, sort_keys=True),),
                )
            have = dict(conn.execute("SELECT server, card_key FROM cartograph_index_servers"))
            stale = [s for s, key in have.items() if keys.get(s) != key]
            fresh = sorted(s for s, key in keys.items() if have.get(s) != key)
            if not stale and not fresh:
                return "loaded", None
            known: dict[str, np.ndarray] = {}
            if stale:  # their vectors first: unchanged tool texts are not embedded again
                known = _known_vectors(conn, stale)
                conn.execute(
                    "DELETE FROM cartograph_index_servers WHERE server = ANY(%s)", (stale,)
                )
            fresh_cards = {s: cards[s] for s in fresh}
            _write_servers(conn, db.vector_oid, fresh_cards, keys, embedder, known)
    if reason is not None:
        return "rebuilt", reason
    gone = len(set(stale) - set(fresh))
    return "updated", f"{len(fresh)} server(s) new or re-attested, {gone} removed"


def _known_vectors(conn: Any, servers: list[str]) -> dict[str, np.ndarray]:
    """``{text_key: vector}`` of the stored tool rows of ``servers`` (same embedder: the caller
    has dropped every row when the model changed)."""
    with conn.cursor(binary=True) as cur:
        cur.execute(
            "SELECT text_key, embedding FROM cartograph_index_tools "
            "WHERE server = ANY(%s) AND text_key IS NOT NULL",
            (servers,),
        )
        return dict(cur.fetchall())


def _write_servers(
    conn: Any,
    oid: int,
    cards: Mapping[str, Card],
    keys: dict[str, str],
    emb: Embedder,
    known: dict[str, np.ndarray],
) -> None:
    if not cards:
        return
    docs = ordered_documents(cards)
    servers = sorted(cards)
    pos = {s: i for i, s in enumerate(servers)}
    tool_server = np.asarray([pos[d.server] for d in docs], dtype=np.int64)
    texts = [d.dense for d in docs]
    vecs = embed_documents(emb, texts, known)[0] if docs else np.zeros((0, DIM), np.float32)
    srv_vecs = unit_rows(emb.embed([server_document(cards[s]) for s in servers]))
    centroids = server_centroids(vecs, tool_server, len(servers))
    vecs = unit_rows(vecs)
    bulk = (
        len(docs) >= BULK_MIN
        and not conn.execute("SELECT EXISTS (SELECT 1 FROM cartograph_index_tools)").fetchone()[0]
    )
    if bulk:  # an HNSW build over loaded rows is much faster than inserting into the graph
        conn.execute("DROP INDEX IF EXISTS cartograph_index_tools_hnsw")
        conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
    with conn.cursor() as cur:
        with cur.copy(
            "COPY cartograph_index_servers (server, card_key, server_vector, centroid) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", oid, oid])
            for i, server in enumerate(servers):
                copy.write_row((server, keys[server], srv_vecs[i], centroids[i]))
        with cur.copy(
            "COPY cartograph_index_tools (server, tool, embedding, text_key) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", oid, "text"])
            for doc, vec, text in zip(docs, vecs, texts, strict=True):
                copy.write_row((doc.server, doc.tool, vec, text_key(emb.model, text)))
    if bulk:
        started = time.perf_counter()
        conn.execute(_HNSW)
        logger.info(
            "built the HNSW index over %d tools in %.1f s", len(docs), time.perf_counter() - started
        )
