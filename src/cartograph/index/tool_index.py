"""The tool index: card documents, their vectors, server vectors and BM25, and search.

Built only from cards (the caller passes the verified ones). The tool vectors sit behind
:class:`~cartograph.index.vectors.ToolVectors` (in memory here; the PostgreSQL store supplies
its own source). Persisted as JSON + ``.npy``::

    <dir>/manifest.json        format, embedder, card set digest, tool ids, documents, hashes
    <dir>/tool_vectors.npy     (n, d) float32, unit rows
    <dir>/centroids.npy        (m, d) float32: the mean of each server's tool vectors, unit rows
    <dir>/server_vectors.npy   (m, d) float32: each server document, unit rows
    <dir>/bm25/*               bm25s files (JSON + .npy)

:meth:`ToolIndex.load` refuses a directory whose files do not match the hashes the manifest
recorded (:class:`~cartograph.errors.IndexError_`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cartograph.cards.model import Card
from cartograph.errors import UsageError
from cartograph.index.answer import Hit
from cartograph.index.documents import ToolDocument, card_documents, server_document
from cartograph.index.embedders import (
    Embedder,
    embed_queries,
    load_embedder,
    query_and_step_vectors,
)
from cartograph.index.intent import ActionMatch
from cartograph.index.lexical import Lexical, jaccard_scores, token_set
from cartograph.index.manifest import (
    card_set_digest,
)
from cartograph.index.methods import (
    DEFAULT_METHOD,
    METHODS,
    Evidence,
    HybridParams,
    Method,
    hybrid_params_for,
    hybrid_scores,
    random_scores,
    two_stage_scores,
)
from cartograph.index.name_match import NameMatch
from cartograph.index.persist import load_index, save_index
from cartograph.index.query import split_steps, task_frame
from cartograph.index.rerank import Reranker, reranked_top, top_indexes
from cartograph.index.vector_cache import QUERIES, embed_documents
from cartograph.index.vectors import MatrixVectors, ToolVectors, server_centroids, unit_rows

if TYPE_CHECKING:
    from cartograph.index.reorder import Reorderer

_QUERIES = QUERIES  # the process's query LRU (benchmarks clear or resize it)

logger = logging.getLogger(__name__)


@dataclass
class ToolIndex:
    """Searchable tools of a card set. Build with :meth:`build`, persist with :meth:`save`."""

    tool_ids: list[tuple[str, str]]
    vectors: ToolVectors
    servers: list[str]
    tool_server: np.ndarray
    centroids: np.ndarray
    server_vectors: np.ndarray
    documents: list[ToolDocument]
    server_documents: list[str]
    lexical: Lexical
    embedder: Embedder
    card_set_digest: str
    build_seconds: float = 0.0
    embedded: int = 0  # texts the last build embedded (the rest came from the cache)
    hybrid: HybridParams | None = None  # None: the weights chosen for the embedding model
    reranker: Reranker | None = None  # reorders stage one's top 20 (cartograph.index.rerank)
    reorderer: Reorderer | None = None  # orders hybrid's top 5 (cartograph.index.reorder)
    _tokens: list[frozenset[str]] | None = field(default=None, repr=False)
    _pos: dict[tuple[str, str], int] | None = field(default=None, repr=False)
    _names: NameMatch | None = field(default=None, repr=False)
    _actions: ActionMatch | None = field(default=None, repr=False)

    # ----------------------------------------------------------------- building

    @classmethod
    def build(
        cls,
        cards: Mapping[str, Card],
        embedder: Embedder | None = None,
        *,
        known: dict[str, np.ndarray] | None = None,
    ) -> ToolIndex:
        """Embed and index every tool of ``cards`` (assumed verified by the caller).

        ``known`` (:func:`~cartograph.index.vector_cache.known_vectors`) holds vectors of texts
        this model already embedded; only the other texts are embedded.
        """
        embedder = embedder or load_embedder()
        started = time.perf_counter()
        docs: list[ToolDocument] = []
        seen: set[tuple[str, str]] = set()
        for doc in card_documents(cards):
            if (doc.server, doc.tool) in seen:
                logger.warning("card %r lists tool %r twice; kept the first", doc.server, doc.tool)
                continue
            seen.add((doc.server, doc.tool))
            docs.append(doc)
        servers = sorted({d.server for d in docs})
        pos = {s: i for i, s in enumerate(servers)}
        tool_server = np.asarray([pos[d.server] for d in docs], dtype=np.int64)
        vecs, fresh = embed_documents(embedder, [d.dense for d in docs], known)
        server_docs = [server_document(cards[s]) for s in servers]
        srv_vecs, fresh_servers = embed_documents(embedder, server_docs, known)
        index = cls(
            tool_ids=[(d.server, d.tool) for d in docs],
            vectors=MatrixVectors(unit_rows(vecs)),
            servers=servers,
            tool_server=tool_server,
            centroids=server_centroids(vecs, tool_server, len(servers)),
            server_vectors=unit_rows(srv_vecs),
            documents=docs,
            server_documents=server_docs,
            lexical=Lexical.build(d.lexical for d in docs),
            embedder=embedder,
            card_set_digest=card_set_digest(cards),
        )
        index.build_seconds = time.perf_counter() - started
        index.embedded = fresh + fresh_servers
        logger.info(
            "built index: %d tools on %d servers in %.1f s (%s; %d texts embedded, %d reused)",
            len(docs),
            len(servers),
            index.build_seconds,
            embedder.name,
            index.embedded,
            len(docs) + len(servers) - index.embedded,
        )
        return index

    # ----------------------------------------------------------------- persistence

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the index into ``directory`` (replaced as a whole) and return it."""
        return save_index(self, Path(directory))

    @classmethod
    def load(cls, directory: str | os.PathLike[str], embedder: Embedder | None = None) -> ToolIndex:
        """Load a saved index; raise :class:`IndexError_` if it is missing or was altered."""
        return load_index(cls, Path(directory), embedder)

    # ----------------------------------------------------------------- search

    def __len__(self) -> int:
        return len(self.tool_ids)

    @property
    def hybrid_params(self) -> HybridParams:
        """The fusion weights: set on the index, else those chosen for its embedding model."""
        return self.hybrid or hybrid_params_for(self.embedder.model)

    @property
    def tool_vectors(self) -> np.ndarray:
        """The (n, d) tool vector matrix (read from the vector source; Rift and saving use it)."""
        return self.vectors.matrix()

    @property
    def names(self) -> NameMatch:
        """The name channel (built on first use from the tool and server ids)."""
        if self._names is None:
            self._names = NameMatch(self.tool_ids, self.servers, self.tool_server)
        return self._names

    @property
    def actions(self) -> ActionMatch:
        """The action channel (built on first use from the tool names and the cards'
        read-only hints the documents carry)."""
        if self._actions is None:
            names = [tool for _, tool in self.tool_ids]
            self._actions = ActionMatch(names, [d.reads for d in self.documents])
        return self._actions

    def position(self, server: str, tool: str) -> int | None:
        if self._pos is None:
            self._pos = {tid: i for i, tid in enumerate(self.tool_ids)}
        return self._pos.get((server, tool))

    def query_vectors(self, query: str, *, steps: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """The query's vector and, when ``steps`` and it names several, its steps' vectors."""
        parts = split_steps(query) if steps else []
        vecs = _QUERIES.get(
            self.embedder.model,
            query,
            bool(parts),
            lambda: query_and_step_vectors(self.embedder, query, parts),
        )
        return vecs[0], (vecs[1:] if parts else None)

    def frame_vector(self, query: str) -> np.ndarray | None:
        """The vector of ``query``'s frame (:func:`~cartograph.index.query.task_frame`), embedded
        on its own (pooled from the task's pass it would carry the topic back in); None when the
        task has no frame apart from itself."""
        frame = task_frame(query)
        if frame is None:
            return None
        return _QUERIES.get(
            self.embedder.model, frame, False, lambda: embed_queries(self.embedder, [frame])
        )[0]

    def evidence(
        self,
        query: str,
        query_vec: np.ndarray | None = None,
        step_vecs: np.ndarray | None = None,
        lexical_text: str | None = None,
        names: bool | None = None,
        actions: bool | None = None,
        frames: bool | None = None,
    ) -> Evidence:
        """What every method reads for ``query``; the lexical channel (BM25, coverage) reads
        ``lexical_text`` instead when given (the query plus the caller's keywords). The name
        channel (:mod:`.name_match`) is computed when ``names``, or by default when the fusion
        weighs it (the shipped weights do not: see docs/benchmarks.md); the action channel
        (:mod:`.intent`, read from ``query`` itself) likewise with ``actions``, and the frame
        channel (:meth:`frame_vector`) with ``frames``."""
        words = query if lexical_text is None else lexical_text
        params = self.hybrid_params
        if names is None:
            names = bool(params.w_name or params.w_server_name)
        q = self.query_vectors(query, steps=False)[0] if query_vec is None else query_vec
        name_share, server_name_share = self.names.shares(words) if names else (None, None)
        if actions is None:
            actions = bool(params.w_action)
        frame = self.frame_vector(query) if (params.w_frame if frames is None else frames) else None
        frame_stats = None if frame is None else self.vectors.stats(frame[None, :])
        stats = self.vectors.stats(q[None, :])
        steps = None if step_vecs is None else self.vectors.cosines(step_vecs)
        return Evidence(
            step_cos=steps,
            tool_cos=self.vectors.cosine(q),
            centroid_cos=self.centroids @ q,
            server_cos=self.server_vectors @ q,
            bm25=self.lexical.scores(words),
            coverage=self.lexical.coverage(words),
            name_share=name_share,
            server_name_share=server_name_share,
            action=self.actions.agreement(query) if actions else None,
            frame_cos=None if frame is None else self.vectors.cosine(frame),
            frame_stats=frame_stats[0] if frame_stats else None,
            tool_server=self.tool_server,
            n_servers=len(self.servers),
            dense_stats=stats[0] if stats else None,
            step_stats=self.vectors.stats(step_vecs) if step_vecs is not None and stats else None,
        )

    def scores(
        self,
        query: str,
        method: Method = DEFAULT_METHOD,
        k: int = 5,
        query_vec: np.ndarray | None = None,
        step_vecs: np.ndarray | None = None,
        keywords: Sequence[str] = (),
    ) -> np.ndarray:
        """One score per tool under ``method`` (higher ranks first); ``k`` sizes stage one.

        ``query_vec`` (and for hybrid ``step_vecs``) may be passed when already embedded;
        ``keywords`` (product names, identifiers) join the query in the lexical channel only.
        With the reorder stage set (and no reranker), hybrid's top 5 are lifted into its order
        (:meth:`~cartograph.index.reorder.Reorderer.lifted`), so the ranking is discover's.
        """
        stage = self._reorder_stage(method)
        pending = stage.prefetch(query) if stage else None
        scores, _, evidence = self._scored(query, method, k, query_vec, step_vecs, keywords)
        if stage is not None and evidence is not None:
            return stage.lifted(query, evidence, scores, pending)
        return scores

    def _reorder_stage(self, method: Method) -> Reorderer | None:
        """The reorder stage when it applies to ``method`` (hybrid, with no reranker set)."""
        if method != "hybrid" or self.reranker is not None:
            return None
        return self.reorderer

    def _scored(
        self,
        query: str,
        method: Method,
        k: int,
        query_vec: np.ndarray | None = None,
        step_vecs: np.ndarray | None = None,
        keywords: Sequence[str] = (),
    ) -> tuple[np.ndarray, np.ndarray | None, Evidence | None]:
        """:meth:`scores`; for the dense methods the tools' cosines to the query that the
        scores were made from (None for the lexical ones); the evidence fused, if any."""
        if method not in METHODS:
            raise UsageError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
        n = len(self.tool_ids)
        words = " ".join([query, *keywords]) if keywords else query
        if method == "random":
            seed = int.from_bytes(hashlib.sha256(query.encode()).digest()[:4], "big")
            return random_scores(n, seed=seed), None, None
        if method == "jaccard":
            if self._tokens is None:
                self._tokens = [token_set(d.lexical) for d in self.documents]
            return jaccard_scores(words, self._tokens).astype(np.float64), None, None
        if method == "bm25":
            return self.lexical.scores(words).astype(np.float64), None, None
        if query_vec is None:
            steps = method == "hybrid" and self.hybrid_params.w_steps > 0
            query_vec, step_vecs = self.query_vectors(query, steps=steps)
        if method == "flat":
            cosines = self.vectors.cosine(query_vec)
            return cosines.astype(np.float64), cosines, None
        evidence = self.evidence(query, query_vec, step_vecs, lexical_text=words)
        if method == "two-stage":
            return two_stage_scores(evidence, k).astype(np.float64), evidence.tool_cos, None
        return hybrid_scores(evidence, self.hybrid_params), evidence.tool_cos, evidence

    def search(
        self,
        query: str,
        k: int = 5,
        method: Method = DEFAULT_METHOD,
        keywords: Sequence[str] = (),
    ) -> list[Hit]:
        """The top ``k`` tools for ``query`` under ``method``; with a dense method each hit
        carries its cosine to the query (what abstention reads: :mod:`cartograph.index.abstain`).
        The reranker, when set, reorders stage one's top 20; else the reorder stage, when set,
        hybrid's top 5 (each hit keeps its stage-one score)."""
        if k < 1:
            raise UsageError("k must be at least 1")
        if not self.tool_ids:
            return []
        stage = self._reorder_stage(method)
        pending = stage.prefetch(query) if stage else None  # embedded beside stage one's
        scores, cosines, evidence = self._scored(query, method, k, keywords=keywords)
        if self.reranker is not None:
            top, values = reranked_top(
                self.reranker, query, lambda i: self.documents[i].dense, scores, k
            )
        elif stage is not None and evidence is not None:
            top, values = stage.top(query, evidence, scores, k, pending)
        else:
            top = top_indexes(scores, k)
            values = scores[top]
        return [
            Hit(
                *self.tool_ids[i],
                score=float(s),
                cosine=None if cosines is None else float(cosines[i]),
            )
            for i, s in zip(top, values, strict=True)
        ]

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        return embed_queries(self.embedder, queries)
