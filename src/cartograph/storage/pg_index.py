"""The retrieval index in PostgreSQL: tool vectors under HNSW, ranked by the file index's methods.

What lives where:

* in the database, shared by every replica: per server the key of the card it was built from,
  its server-document vector and its centroid; per tool its vector in a ``vector(384)`` column
  with an HNSW index (cosine);
* in each replica: the documents (composed again from the *verified* cards, never read from the
  database), BM25 over them, the server vectors and centroids (one row per server), and the
  fusion of :mod:`cartograph.index.methods`, unchanged.

The index is the same :class:`~cartograph.index.tool_index.ToolIndex` as the file one; only its
vector source differs: :class:`PgVectors` (a :class:`~cartograph.index.vectors.ToolVectors`)
answers the dense side of search in the database, and reads the whole matrix only when a caller
such as Rift asks for it.

Dense evidence comes from the database. Up to ``exact_max`` tools (20,000 by default) the
database computes every tool's cosine (a sequential scan), so every method sees exactly the
evidence the file index computes in NumPy. Above that, HNSW gives the ``RANK_DEPTH`` (1,000)
nearest tools with ``hnsw.ef_search = 1000``; every other tool gets the query's mean cosine over
all tools, and the mean and standard deviation that hybrid fusion standardises with are computed
exactly from the tool vectors' first and second moments (read once when the index loads). What
stays approximate: a true top-1,000 tool HNSW misses, the dense term of every tool below the
candidates, and the best tool cosine of a server with no candidate. See docs/scale-out.md.

:func:`~cartograph.storage.pg_index_sync.sync_index` (its own module) brings the rows up to
date with the verified cards.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from cartograph.cards.model import Card
from cartograph.errors import IndexError_
from cartograph.index.documents import server_document
from cartograph.index.embedders import Embedder
from cartograph.index.lexical import Lexical
from cartograph.index.methods import RANK_DEPTH, cosine_stats
from cartograph.index.tool_index import ToolIndex
from cartograph.storage.pg_db import DIM, Database
from cartograph.storage.pg_index_sync import ordered_documents, set_digest

logger = logging.getLogger(__name__)

EXACT_MAX_TOOLS = 20_000


def index_info(db: Database) -> dict[str, Any]:
    """What ``cartograph index info`` shows for a shared store."""
    with db.error_context("read the index"):
        conn = db.conn()
        meta = conn.execute("SELECT embedder FROM cartograph_index_meta").fetchone()
        if meta is None:
            raise IndexError_(f"{db.label}: no index in the store; run `cartograph index build`")
        tools = conn.execute("SELECT count(*) FROM cartograph_index_tools").fetchone()
        servers = conn.execute("SELECT count(*) FROM cartograph_index_servers").fetchone()
        hnsw = conn.execute(
            "SELECT pg_size_pretty(pg_relation_size('cartograph_index_tools_hnsw'))"
        ).fetchone()
    return {
        "path": db.label,
        "tools": int(tools[0]) if tools else 0,
        "servers": int(servers[0]) if servers else 0,
        "embedder": meta[0],
        "hnsw_index": hnsw[0] if hnsw else None,
        "dense_search": f"exact up to {EXACT_MAX_TOOLS} tools, HNSW above",
    }


def load_index(
    db: Database, cards: Mapping[str, Card], embedder: Embedder, *, exact_max: int = EXACT_MAX_TOOLS
) -> ToolIndex:
    """The index over ``cards`` (verified; rows already synced) with dense search in ``db``."""
    started = time.perf_counter()
    docs = ordered_documents(cards)
    servers = sorted({d.server for d in docs})
    spos = {s: i for i, s in enumerate(servers)}
    tpos = {(d.server, d.tool): i for i, d in enumerate(docs)}
    with db.error_context("load the index"):
        conn = db.conn()
        rows = conn.execute("SELECT id, server, tool FROM cartograph_index_tools").fetchall()
        with conn.cursor(binary=True) as cur:
            cur.execute("SELECT server, server_vector, centroid FROM cartograph_index_servers")
            srows = cur.fetchall()
    top = max((int(r[0]) for r in rows), default=0)
    row_pos = np.full(top + 1, -1, dtype=np.int64)
    found = 0
    for rid, server, tool in rows:
        at = tpos.get((server, tool))
        if at is not None:
            row_pos[int(rid)] = at
            found += 1
    if found != len(docs):
        raise IndexError_(f"{db.label}: {len(docs) - found} tool(s) have no stored vector")
    server_vectors = np.zeros((len(servers), DIM), np.float32)
    centroids = np.zeros((len(servers), DIM), np.float32)
    for server, svec, cvec in srows:
        if server in spos:
            server_vectors[spos[server]] = svec
            centroids[spos[server]] = cvec
    vectors = PgVectors(db, row_pos, len(docs), exact_max=exact_max)
    index = ToolIndex(
        tool_ids=[(d.server, d.tool) for d in docs],
        vectors=vectors,
        servers=servers,
        tool_server=np.asarray([spos[d.server] for d in docs], dtype=np.int64),
        centroids=centroids,
        server_vectors=server_vectors,
        documents=docs,
        server_documents=[server_document(cards[s]) for s in servers],
        lexical=Lexical.build(d.lexical for d in docs),
        embedder=embedder,
        card_set_digest=set_digest(cards),
    )
    if vectors.ann():
        vectors.moments()  # now, so the first discover does not read every vector
    index.build_seconds = time.perf_counter() - started
    return index


class PgVectors:
    """Tool vectors kept in ``cartograph_index_tools``: cosines are computed by the database
    (exact up to ``exact_max`` tools, HNSW candidates above), the matrix is read on demand."""

    def __init__(
        self, db: Database, row_pos: np.ndarray, n: int, *, exact_max: int = EXACT_MAX_TOOLS
    ) -> None:
        self.db = db
        self.row_pos = row_pos  # row id -> tool position (-1: not a tool of this index)
        self.n = n
        self.exact_max = exact_max
        self._matrix: np.ndarray | None = None
        self._moments: tuple[np.ndarray, np.ndarray] | None = None

    def ann(self) -> bool:
        """True when dense search uses HNSW candidates (more tools than ``exact_max``)."""
        return self.n > self.exact_max

    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            out = np.zeros((self.n, DIM), np.float32)
            with (
                self.db.error_context("read the tool vectors"),
                self.db.conn().cursor(binary=True) as cur,
            ):
                cur.execute("SELECT id, embedding FROM cartograph_index_tools")
                for rid, vec in cur:
                    at = self.row_pos[rid] if rid < len(self.row_pos) else -1
                    if at >= 0:
                        out[at] = vec
            self._matrix = out
        return self._matrix

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """The tool vectors' mean and second moment (read once, for HNSW mode's statistics).

        Accumulated over blocks of rows streamed from the database, so the whole matrix (and
        its float64 copy) is never held: at 100k tools that was about 460 MB of peak memory.
        Tools without a stored row count as zero vectors, as in the matrix.
        """
        if self._moments is None:
            total = np.zeros(DIM, np.float64)
            second = np.zeros((DIM, DIM), np.float64)
            for block in self._vector_blocks():
                b = block.astype(np.float64)
                total += b.sum(axis=0)
                second += b.T @ b
            n = max(self.n, 1)
            self._moments = (total / n, second / n)
        return self._moments

    def _vector_blocks(self, size: int = 4096) -> Iterator[np.ndarray]:
        """The stored vectors of this index's tools, ``size`` rows at a time, in no order."""
        if self._matrix is not None:
            for start in range(0, len(self._matrix), size):
                yield self._matrix[start : start + size]
            return
        with (
            self.db.error_context("read the tool vectors"),
            self.db.conn().cursor(binary=True) as cur,
        ):
            cur.execute("SELECT id, embedding FROM cartograph_index_tools")
            while rows := cur.fetchmany(size):
                kept = [
                    vec for rid, vec in rows if rid < len(self.row_pos) and self.row_pos[rid] >= 0
                ]
                if kept:
                    yield np.asarray(kept, dtype=np.float32)

    def cosine(self, query: np.ndarray) -> np.ndarray:
        return self.cosines(query[None, :])[0]

    def cosines(self, queries: np.ndarray) -> np.ndarray:
        """(len(queries), n) cosines: exact from the database, or, in HNSW mode, the candidates'
        and every other tool's set to that query's mean cosine over all tools."""
        ann = self.ann()
        out = np.empty((len(queries), self.n), dtype=np.float32)
        sql = (
            "SELECT id, embedding <=> %b AS d FROM cartograph_index_tools ORDER BY d LIMIT %b"
            if ann
            else "SELECT id, embedding <=> %b FROM cartograph_index_tools"
        )
        with self.db.error_context("search the tool vectors"):
            conn = self.db.conn()
            for i, q in enumerate(queries):
                out[i] = cosine_stats(self.moments(), q)[0] if ann else -1.0
                params = (q, RANK_DEPTH) if ann else (q,)
                with conn.cursor(binary=True) as cur:
                    cur.execute(sql, params)
                    rows = cur.fetchall()
                if not rows:
                    continue
                got = np.asarray(rows, dtype=np.float64)
                ids = got[:, 0].astype(np.int64)
                keep = ids < len(self.row_pos)
                at = self.row_pos[ids[keep]]
                ok = at >= 0  # rows written after this index was loaded are not in it yet
                out[i, at[ok]] = (1.0 - got[keep, 1][ok]).astype(np.float32)
        return out

    def stats(self, queries: np.ndarray) -> list[tuple[float, float]] | None:
        if not self.ann():
            return None
        return [cosine_stats(self.moments(), q) for q in queries]

    def stored(self, picks: list[int]) -> dict[int, np.ndarray]:
        ids = [int(i) for i in np.flatnonzero(np.isin(self.row_pos, picks))]
        with (
            self.db.error_context("read the tool vectors"),
            self.db.conn().cursor(binary=True) as cur,
        ):
            cur.execute(
                "SELECT id, embedding FROM cartograph_index_tools WHERE id = ANY(%s)", (ids,)
            )
            return {int(self.row_pos[rid]): vec for rid, vec in cur.fetchall()}
