"""discover: a task in plain words -> the top-k tools, rendered from signed cards only.

Ranking comes from the retrieval index (:func:`cartograph.index.open_index`), opened over the
catalog's verified cards (they are verified once, by the catalog); when no index has been
built, a keyword ranking over the verified cards stands in and the answer says so. Every hit is
re-checked against the cards that verify *now* (a hit whose card is gone, tampered or whose tool
is quarantined is dropped), and the answer is rendered by
:func:`cartograph.index.answer.render_answer` from that card, never from live upstream text.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from cartograph.cards.model import Card, ToolEntry
from cartograph.errors import CartographError, IndexError_
from cartograph.index.abstain import judge
from cartograph.index.answer import DiscoverAnswer, Hit, render_answer
from cartograph.index.methods import DEFAULT_METHOD, Method
from cartograph.proxy.catalog import CardCatalog, CardGuard
from cartograph.proxy.status import IndexState
from cartograph.storage import Store
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

FALLBACK_METHOD = "keyword-fallback"
RankMethod = Method | Literal["keyword-fallback"]
MAX_K = 20
NOT_LOADED = "not loaded yet (loads in the background and on first discover)"
CACHE_SIZE = 1024


class Searcher(Protocol):
    """What the resolver needs of the index: ``search(query, k, method) -> [Hit]``."""

    def search(
        self, query: str, k: int, method: Method, keywords: Sequence[str] = ()
    ) -> list[Any]: ...


Opener = Callable[[Workspace, Store, Mapping[str, Card]], Searcher]
"""Opens the store's index over the given verified cards (the catalog's; not verified again)."""


@dataclass(frozen=True)
class Ranking:
    """What discover ranked: the hits to answer with, and how they were ranked."""

    method: RankMethod
    results: list[Hit]
    note: str | None = None
    all_hits: list[Hit] = field(default_factory=list, compare=False, repr=False)
    exhausted: bool = field(default=True, compare=False, repr=False)
    weak: bool = False  # abstained: no result plausibly fits (cartograph.index.abstain)


def default_opener(
    ws: Workspace, store: Store, cards: Mapping[str, Card], stop: threading.Event | None = None
) -> Searcher:
    """The store's index over ``cards`` (rebuilt by the index package when they changed);
    ``stop``: the proxy is closing (the reorder stage's background embedding ends)."""
    from cartograph.index import open_index_with_status  # heavy import: only when first needed

    index, status = open_index_with_status(ws, store, cards=cards)
    if status.action == "rebuilt":
        logger.info("retrieval index rebuilt: %s", status.reason)
    index.reranker = proxy_reranker(ws)
    attach_proxy_reorderer(ws, index, stop)
    return index


def attach_proxy_reorderer(ws: Workspace, index: Any, stop: threading.Event | None = None) -> None:
    """Attach the reorder stage the workspace asks for to ``index`` (in the background when its
    vectors must be embedded first); a damaged model, a bad setting or an unwritable home is
    logged and costs the reorder only."""
    from cartograph.index.reorder import attach_reorderer
    from cartograph.workspace import read_settings

    try:
        setting = read_settings(ws).reorder
    except CartographError as exc:
        logger.warning("discover does not reorder: %s", exc)
        return
    attach_reorderer(ws.root, index, setting, stop)


def proxy_reranker(ws: Workspace):
    """The reranker the workspace asks for, or None; a damaged model or a bad setting costs
    the reranking only (logged), never the index."""
    from cartograph.index.rerank import workspace_reranker

    try:
        return workspace_reranker(ws)
    except CartographError as exc:
        logger.warning("discover does not rerank: %s", exc)
        return None


class Resolver:
    """Ranks tools for a task and renders the answer from the verified cards."""

    def __init__(
        self,
        ws: Workspace,
        catalog: CardCatalog,
        guard: CardGuard,
        *,
        opener: Opener | None = None,
        method: Method | None = None,
    ) -> None:
        self.ws = ws
        self.catalog = catalog
        self.guard = guard
        self.closing = threading.Event()
        """Set when the proxy closes: background work (the reorder stage's embedding) ends."""
        self._opener = opener or functools.partial(default_opener, stop=self.closing)
        self._method: Method | None = method
        self._index: Searcher | None = None
        self._index_generation: int | None = None
        self._open_lock = threading.Lock()
        self.index_error: str | None = None
        self.index_seconds: float | None = None
        self.index_opened_at: float | None = None
        # Ranked hits by (task, k, method, index generation); quarantine is applied after.
        self._cache: OrderedDict[tuple[Any, ...], list[Hit]] = OrderedDict()

    @property
    def method(self) -> Method:
        return self._method or DEFAULT_METHOD

    def searcher(self) -> Searcher | None:
        """The index for the current verified cards (reopened after they change), or None."""
        generation = self.catalog.generation
        if self._index_generation == generation:
            return self._index
        with self._open_lock:
            if self._index_generation == generation:
                return self._index
            started = time.perf_counter()
            try:
                self._index = self._opener(self.ws, self.catalog.store, self.catalog.cards)
                self.index_error = None
            except (CartographError, ImportError, OSError, ValueError) as exc:
                self._index = None
                self.index_error = str(exc) or type(exc).__name__
                logger.warning("retrieval index unavailable (%s); using keyword ranking", exc)
            self.index_seconds = time.perf_counter() - started
            self.index_opened_at = time.time()
            self._index_generation = generation
        return self._index

    def index_state(self) -> IndexState:
        """Index freshness for status, without opening it (that may take seconds)."""
        if self._index_generation is None:
            return IndexState(state=NOT_LOADED)
        method: RankMethod = self.method
        error = None
        if self._index is None:
            state, method, error = "missing", FALLBACK_METHOD, self.index_error
        elif self._index_generation != self.catalog.generation:
            state = "stale: cards changed; it is rebuilt on the next discover"
        else:
            state = "fresh: matches the verified cards"
        opened = self.index_opened_at
        size = getattr(self._index, "tool_ids", None)
        reranker = getattr(self._index, "reranker", None)
        reorderer = getattr(self._index, "reorderer", None)
        return IndexState(
            reranker=getattr(reranker, "model", None),
            reorder=getattr(reorderer, "model", None),
            method=method,
            state=state,
            error=error,
            opened_s_ago=None if opened is None else round(time.time() - opened, 1),
            open_seconds=None if opened is None else round(self.index_seconds or 0.0, 2),
            tools=None if size is None else len(size),
        )

    def rank(
        self,
        task: str,
        k: int,
        allow: Callable[[str, str], bool] | None = None,
        keywords: Sequence[str] = (),
    ) -> Ranking:
        """Top-k callable tools for ``task`` (blocking: embeds the query); with ``allow``, the
        top-k of the tools it permits: the index is asked for more until k are found.
        ``keywords`` weigh in the lexical channel. When the best cosine of the results is below
        the model's abstention threshold, the ranking is marked weak, with a note.

        The catalog is refreshed once here (a reload verifies the cards; it runs in the
        caller's worker thread, off the event loop), not again for each deeper look."""
        k = max(1, min(MAX_K, k))
        want = k + 10  # room for hits dropped below (quarantined, card gone)
        self.catalog.refresh()
        while True:
            ranking = self._rank(task, k, want, tuple(keywords))
            if allow is not None:
                results = [h for h in ranking.all_hits if allow(h.server, h.tool)][:k]
                if len(results) < k and not ranking.exhausted:
                    want *= 4
                    continue
                ranking = Ranking(ranking.method, results, ranking.note)
            return self._abstain(ranking)

    def _abstain(self, ranking: Ranking) -> Ranking:
        """``ranking`` marked weak, with a note, when nothing in it plausibly fits."""
        embedder = getattr(self._index, "embedder", None)
        note = judge(ranking.results, getattr(embedder, "model", None))
        if note is None:
            return ranking
        note = f"{ranking.note}; {note}" if ranking.note else note
        return Ranking(ranking.method, ranking.results, note, weak=True)

    def _rank(self, task: str, k: int, want: int, keywords: tuple[str, ...]) -> Ranking:
        searcher = self.searcher()
        method: RankMethod = self.method
        note = None
        if searcher is not None:
            key = (task, keywords, want, self.method, self._index_generation)
            hits = self._cache.get(key)
            if hits is None:
                try:
                    hits = [
                        Hit(str(h.server), str(h.tool), float(h.score), h.cosine)
                        for h in searcher.search(task, want, self.method, keywords)
                    ]
                except CartographError as exc:
                    raise IndexError_(f"the retrieval index failed: {exc}") from exc
                with self._open_lock:
                    self._cache[key] = hits
                    while len(self._cache) > CACHE_SIZE:
                        self._cache.popitem(last=False)
        else:
            hits = keyword_rank(self.catalog.cards, " ".join([task, *keywords]), want)
            method = FALLBACK_METHOD
            note = self._fallback_note()
        callable_hits = [h for h in hits if self._callable(h.server, h.tool)]
        return Ranking(
            method, callable_hits[:k], note, all_hits=callable_hits, exhausted=len(hits) < want
        )

    def _fallback_note(self) -> str:
        if not self.catalog.cards:  # `index build` would fail too: say what would help
            return (
                "no signed card verifies, so there is nothing to offer; the operator can see "
                "why with `cartograph cards verify` and sign cards with `cartograph bootstrap`"
            )
        return (
            f"no retrieval index ({self.index_error or 'not built'}): ranked by keywords; the "
            "operator can build it with `cartograph index build`"
        )

    def _callable(self, server: str, tool: str) -> bool:
        known = tool in self.catalog.cards.tool_names(server)
        return known and not self.guard.held(server, tool)

    def render(self, ranking: Ranking) -> DiscoverAnswer:
        """The answer an agent reads: tools with signed schemas and examples, and how to call."""
        shown = self.catalog.cards.only((hit.server, hit.tool) for hit in ranking.results)
        return render_answer(shown, ranking.results, ranking.note, weak=ranking.weak)

    def audit_fields(self, ranking: Ranking) -> list[dict[str, Any]]:
        """Per returned tool: the card digest, version, key id and generator of the text that
        ranked it (``cartograph cards show SERVER --version N`` opens that exact card)."""
        rows = []
        for hit in ranking.results:
            head = self.catalog.cards.head(hit.server)
            ref = self.catalog.refs[hit.server]
            entry = self.catalog.cards.tool(hit.server, hit.tool)
            rows.append(
                {
                    "server": hit.server,
                    "tool": hit.tool,
                    "score": round(hit.score, 4),
                    "card_digest": ref.digest,
                    "card_version": self.catalog.card_version(hit.server),
                    "key_id": ref.key_id,
                    "generator": _generator(entry, head),
                }
            )
        return rows


def _generator(entry: ToolEntry | None, head: Card | None) -> str | None:
    if entry is not None:
        return entry.generator
    return head.provenance.generator if head is not None else None


def keyword_rank(cards: Mapping[str, Card], task: str, k: int) -> list[Hit]:
    """Jaccard of the task's words against each tool's card text (the no-index fallback)."""
    from cartograph.index.documents import card_documents
    from cartograph.index.lexical import jaccard_scores, token_set

    docs = card_documents(cards)
    if not docs:
        return []
    scores = jaccard_scores(task, [token_set(d.lexical) for d in docs])
    order = np.argsort(-scores, kind="stable")[:k]
    return [Hit(docs[i].server, docs[i].tool, float(scores[i])) for i in order]
