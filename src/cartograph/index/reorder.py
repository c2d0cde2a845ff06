"""The reorder stage: the trained encoder puts stage one's top five in its own order.

Stage one (hybrid over the index's model, the stock MiniLM by default) finds the right tool in
its top five more often on MCP catalogs; the encoder trained here for tool retrieval
(``minilm-tools``) more often puts it first. So discover keeps stage one's five and orders them
by the trained model's hybrid score: R@5 cannot change, R@1 rose on every test part
(docs/benchmarks.md, "The trained encoder behind the stock one"). The trained hybrid reads the
same lexical evidence as stage one (BM25, coverage, action) with the trained model's cosines to
every tool, centroid and server document (its z-scores need all of them), fused with the
weights chosen for that model. Only ``hybrid`` is reordered; other methods rank as named.

The trained model's vectors of the index's documents are kept in ``<home>/index-reorder/``
(``vectors.npy`` and a manifest of the model and each row's text key): on open, rows whose text
is unchanged are reused, the rest embedded, and the file rewritten when anything changed. The
file is checked against its recorded hash and a few reused rows are embedded again; any
mismatch discards it. It sits in the home for every store (a shared PostgreSQL catalog included:
each proxy keeps its own copy).

On by default; ``"reorder": false`` in ``<home>/config.json``, ``$CARTOGRAPH_REORDER=0`` or
``discover --no-reorder`` turn it off. The cross-encoder reranker, when on, takes its place (one
second model in memory at a time: ``serve`` stays under 300 MB), and an index whose own model is
the trained one has nothing to reorder.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from threading import Event, Thread
from typing import TYPE_CHECKING

import numpy as np

from cartograph.cards.model import Card
from cartograph.errors import CartographError
from cartograph.index.documents import card_documents, server_document
from cartograph.index.embedders import SPEC_ENV, Embedder, embed_queries
from cartograph.index.methods import Evidence, HybridParams, hybrid_params_for, hybrid_scores
from cartograph.index.reorder_vectors import FOLDER, Stopped, missing, synced
from cartograph.index.rerank import top_indexes
from cartograph.index.vector_cache import QUERIES
from cartograph.index.vectors import server_centroids
from cartograph.workspace import Workspace, read_settings

if TYPE_CHECKING:
    from cartograph.index.store import IndexStatus, IndexStore
    from cartograph.index.tool_index import ToolIndex

logger = logging.getLogger(__name__)

REORDER_MODEL = "minilm-tools"
REORDER_DEPTH = 5
"""How many of stage one's tools the trained model orders (5 keeps stage one's top-5 set)."""
REORDER_ENV = "CARTOGRAPH_REORDER"
"""``1``/``0`` turns the reorder on or off for every command and the proxy (wins over config)."""
REORDER_MAX_TOOLS = 12_000
"""Above this many tools the stage is off: its vectors are held in memory (1.5 kB a tool) and
its hybrid reads every tool; measured up to the 9,623-tool union (+3.8 ms p50). A shared
PostgreSQL catalog of 100k tools ranks with stage one alone."""
WAIT_BELOW = 256
"""The proxy opens the stage before answering when at most this many documents lack a stored
vector (a few seconds); with more, it embeds them in the background and attaches the stage when
they are ready (discover ranks with stage one until then)."""


@dataclass
class Reorderer:
    """The trained model and its unit vectors of one index's tool and server documents."""

    embedder: Embedder
    tool_vectors: np.ndarray  # (n, d), the index's tool order
    centroids: np.ndarray  # (m, d), the index's server order
    server_vectors: np.ndarray  # (m, d)
    params: HybridParams
    embedded: int = 0  # documents the last open embedded (the rest came from the file)
    _pool: ThreadPoolExecutor | None = field(default=None, repr=False)

    @property
    def model(self) -> str:
        """The model's id (name and weights' hash), as status shows it."""
        return self.embedder.model

    def prefetch(self, query: str) -> Future[np.ndarray] | None:
        """Start embedding ``query`` with the trained model on the stage's own thread, so that
        it runs beside stage one's embedding (2 cores: p50 19.6 -> 11.0 ms for both); None when
        the query cache holds it. Pass the result to :meth:`scores`."""
        if QUERIES.peek(self.embedder.model, query, False) is not None:
            return None
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, "reorder")
        return self._pool.submit(embed_queries, self.embedder, [query])

    def scores(
        self, query: str, evidence: Evidence, pending: Future[np.ndarray] | None = None
    ) -> np.ndarray:
        """The trained hybrid's score of every tool: ``evidence``'s lexical channels (stage
        one's) with this model's cosines in place of stage one's dense ones. ``pending``: the
        query's :meth:`prefetch`, if started."""
        embed = pending.result if pending is not None else None
        q = QUERIES.get(
            self.embedder.model,
            query,
            False,
            embed or (lambda: embed_queries(self.embedder, [query])),
        )[0]
        trained = replace(
            evidence,
            tool_cos=self.tool_vectors @ q,
            centroid_cos=self.centroids @ q,
            server_cos=self.server_vectors @ q,
            dense_stats=None,
            step_cos=None,
            step_stats=None,
            frame_cos=None,
            frame_stats=None,
        )
        return hybrid_scores(trained, self.params)

    def head(
        self,
        query: str,
        evidence: Evidence,
        scores: np.ndarray,
        pending: Future[np.ndarray] | None = None,
    ) -> np.ndarray:
        """Stage one's best :data:`REORDER_DEPTH` tool positions by ``scores``, in the trained
        model's order."""
        head = top_indexes(scores, REORDER_DEPTH)
        return head[np.argsort(-self.scores(query, evidence, pending)[head], kind="stable")]

    def top(
        self,
        query: str,
        evidence: Evidence,
        scores: np.ndarray,
        k: int,
        pending: Future[np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The top ``k`` tool positions: :meth:`head`, then stage one's next ones; and their
        stage-one scores."""
        top = top_indexes(self.lifted(query, evidence, scores, pending), k)
        return top, scores[top]

    def lifted(
        self,
        query: str,
        evidence: Evidence,
        scores: np.ndarray,
        pending: Future[np.ndarray] | None = None,
    ) -> np.ndarray:
        """``scores`` with :meth:`head`'s tools lifted above every other tool in its order (a
        full ranking that agrees with :meth:`top`, for evaluation)."""
        head = self.head(query, evidence, scores, pending)
        out = scores.astype(np.float64, copy=True)
        out[head] = float(scores[head].max()) + np.arange(len(head), 0, -1, dtype=np.float64)
        return out


def reorder_wanted(setting: bool | None, flag: bool | None = None) -> bool:
    """Whether discover reorders: the command's flag, else ``$CARTOGRAPH_REORDER``, else the
    workspace's ``reorder`` setting, else on."""
    if flag is not None:
        return flag
    env = os.environ.get(REORDER_ENV, "").strip()
    if env:
        return env not in ("0", "false", "no", "off")
    return True if setting is None else setting


_embedders: dict[bool, Embedder] = {}


def reorder_embedder(int8_products: bool | None = None) -> Embedder:
    """The trained model as the reorder stage runs it (loaded once per process);
    ``int8_products`` as :class:`~cartograph.index.onnx_minilm.OnnxMiniLM` takes it."""
    from cartograph.index.onnx_minilm import int8_products_wanted

    int8 = int8_products_wanted() if int8_products is None else int8_products
    if int8 not in _embedders:
        from cartograph.index.packaged import load_packaged

        _embedders[int8] = load_packaged(REORDER_MODEL, int8_products=int8)
    return _embedders[int8]


def open_reorderer(
    home: Path, index: ToolIndex, embedder: Embedder | None = None, stop: Event | None = None
) -> Reorderer | None:
    """The reorder stage over ``index``'s documents, its vectors read from (and, when they
    changed, written to) ``<home>/index-reorder/``; None when ``index`` already ranks with the
    trained model. Raises :class:`~cartograph.errors.EmbedderError` when the model is damaged
    and :class:`~.reorder_vectors.Stopped` when ``stop`` is set while it embeds."""
    embedder = embedder or reorder_embedder()
    if index.embedder.name == embedder.name:
        return None
    texts = [d.dense for d in index.documents] + list(index.server_documents)
    vectors, fresh = synced(home / FOLDER, embedder, texts, stop)
    n = len(index.documents)
    tools = vectors[:n]
    return Reorderer(
        embedder=embedder,
        tool_vectors=tools,
        centroids=server_centroids(tools, index.tool_server, len(index.servers)),
        server_vectors=vectors[n:],
        params=hybrid_params_for(embedder.model),
        embedded=fresh,
    )


def prepare_vectors(
    home: Path,
    cards: Mapping[str, Card],
    embedder: Embedder | None = None,
    stop: Event | None = None,
) -> int:
    """Embed into ``<home>/index-reorder/`` the trained model's vectors of ``cards``' documents
    that it lacks (run beside the index's own build, so a fresh build embeds with both models at
    once); how many were embedded. ``stop``: as :func:`~.reorder_vectors.synced`."""
    texts = [d.dense for d in card_documents(cards)] + [server_document(c) for c in cards.values()]
    folder, model = home / FOLDER, embedder or reorder_embedder()
    return synced(folder, model, list(dict.fromkeys(texts)), stop)[1]


def open_index_and_stage(
    ws: Workspace,
    store: IndexStore,
    embedder: Embedder | None = None,
    *,
    rebuild: bool = False,
    flag: bool | None = None,
) -> tuple[ToolIndex, IndexStatus, Reorderer | None]:
    """:func:`~cartograph.index.store.open_index_with_status` and the reorder stage the
    workspace asks for, the stage's missing vectors embedded on a second thread meanwhile
    (``index build`` and ``bootstrap``: a fresh fleet build takes about as long as the index's
    alone). When the index's build fails or is interrupted (Ctrl-C), the stage's embedding stops
    within a chunk and keeps what it embedded."""
    from cartograph.index.store import open_index_with_status, verified_cards

    settings = read_settings(ws)
    loaded = verified_cards(ws, store)
    cards = loaded.cards
    spec = (embedder.name if embedder else None) or settings.embedder or os.environ.get(SPEC_ENV)
    wanted = bool(cards) and spec != REORDER_MODEL and reorder_wanted(settings.reorder, flag)
    stop = Event()
    with ThreadPoolExecutor(1, "reorder-build") as pool:
        pending = pool.submit(prepare_vectors, ws.root, cards, None, stop) if wanted else None
        try:
            index, status = open_index_with_status(
                ws, store, embedder, rebuild=rebuild, cards=cards
            )
        except BaseException:  # Ctrl-C or a failed build: the stage stops within a chunk
            stop.set()
            raise
        finally:
            prepared = _settled(pending)
    status = replace(status, skipped_cards=len(loaded.failures))
    stage = workspace_reorderer(ws.root, index, settings.reorder, flag) if prepared else None
    return index, status, stage


def _settled(pending: Future[int] | None) -> bool:
    """Whether :func:`prepare_vectors` ran through (a failure is logged: the stage is off)."""
    if pending is None:
        return False
    try:
        pending.result()
    except Stopped as exc:
        logger.info("the reorder stage's vectors are not all embedded: %s", exc)
        return False
    except (CartographError, OSError) as exc:
        logger.warning("discover does not reorder its top %d: %s", REORDER_DEPTH, exc)
        return False
    return True


def workspace_reorderer(
    home: Path,
    index: ToolIndex,
    setting: bool | None,
    flag: bool | None = None,
    stop: Event | None = None,
) -> Reorderer | None:
    """:func:`open_reorderer` when :func:`reorder_wanted` says so and no reranker is set on
    ``index``; a damaged model or an unwritable home costs the reorder only (logged), and so
    does ``stop`` set while it embeds (the process is closing)."""
    if index.reranker is not None or not reorder_wanted(setting, flag):
        return None
    if len(index) > REORDER_MAX_TOOLS:
        logger.info(
            "discover does not reorder: %d tools, above the stage's %d",
            len(index),
            REORDER_MAX_TOOLS,
        )
        return None
    try:
        return open_reorderer(home, index, stop=stop)
    except Stopped as exc:
        logger.info("the reorder stage did not open: %s", exc)
        return None
    except (CartographError, OSError) as exc:
        logger.warning("discover does not reorder its top %d: %s", REORDER_DEPTH, exc)
        return None


def attach_reorderer(
    home: Path, index: ToolIndex, setting: bool | None, stop: Event | None = None
) -> Thread | None:
    """Set ``index.reorderer`` as :func:`workspace_reorderer` opens it (the proxy): at once when
    at most :data:`WAIT_BELOW` documents lack a stored vector, else from a background thread
    (returned) once they are embedded, so that a first start over a large catalog does not hold
    discover back. Setting ``stop`` ends that thread within a chunk of documents (what it
    embedded is kept for the next start); the thread is not a daemon, so a process exits only
    after it stopped, never while onnxruntime runs on it. Nothing starts once ``stop`` is set."""
    if stop is not None and stop.is_set():
        return None
    texts = [d.dense for d in index.documents] + list(index.server_documents)
    off = index.reranker is not None or not reorder_wanted(setting)
    if off or len(index) > REORDER_MAX_TOOLS:
        index.reorderer = workspace_reorderer(home, index, setting)  # None, the reason logged
        return None
    try:
        lacking = missing(home / FOLDER, reorder_embedder(), texts)
    except (CartographError, OSError) as exc:
        logger.warning("discover does not reorder its top %d: %s", REORDER_DEPTH, exc)
        return None
    if lacking <= WAIT_BELOW:
        index.reorderer = workspace_reorderer(home, index, setting)
        return None

    def attach() -> None:
        index.reorderer = workspace_reorderer(home, index, setting, stop=stop)
        if index.reorderer is not None:
            logger.info("discover orders its top %d with the trained model now", REORDER_DEPTH)

    logger.warning(
        "the reorder stage embeds %d documents in the background; discover ranks with stage "
        "one until they are ready",
        lacking,
    )
    worker = Thread(target=attach, name="reorder-open", daemon=stop is None)
    worker.start()
    return worker
