"""discover: a task in plain words -> the top-k tools, rendered from signed cards only.

Ranking comes from the retrieval index (:func:`cartograph.index.open_index`); when no index has
been built, a keyword ranking over the verified cards stands in and the answer says so. Every
hit is re-checked against the cards that verify *now* (a hit whose card is gone, tampered or
whose tool is quarantined is dropped), and the schema, summary and examples in the answer come
from that card, never from live upstream text.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cartograph.cards.model import Card
from cartograph.errors import CartographError, IndexError_
from cartograph.proxy.catalog import CardCatalog, CardGuard
from cartograph.storage import Store
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

FALLBACK_METHOD = "keyword-fallback"
MAX_K = 20
MAX_EXAMPLES = 2
CACHE_SIZE = 1024


class Searcher(Protocol):
    """What the resolver needs of the index: ``search(query, k, method) -> [Hit]``."""

    def search(self, query: str, k: int, method: str) -> list[Any]: ...


@dataclass(frozen=True)
class Ranked:
    """One discover result with the card that stands behind it."""

    server: str
    tool: str
    score: float


@dataclass(frozen=True)
class Answer:
    """What discover returns and records."""

    method: str
    results: list[Ranked]
    note: str | None = None
    all_hits: list[Ranked] = field(default_factory=list, compare=False, repr=False)
    exhausted: bool = field(default=True, compare=False, repr=False)


def default_opener(ws: Workspace, store: Store) -> Searcher:
    """The store's index (rebuilt by the index package when the verified cards changed)."""
    from cartograph.index import open_index_with_status  # heavy import: only when first needed

    index, status = open_index_with_status(ws, store)
    if status.action == "rebuilt":
        logger.info("retrieval index rebuilt: %s", status.reason)
    return index


def default_method() -> str:
    from cartograph.index import DEFAULT_METHOD

    return DEFAULT_METHOD


class Resolver:
    """Ranks tools for a task and renders the answer from the verified cards."""

    def __init__(
        self,
        ws: Workspace,
        catalog: CardCatalog,
        guard: CardGuard,
        *,
        opener: Callable[[Workspace, Store], Searcher] = default_opener,
        method: str | None = None,
    ) -> None:
        self.ws = ws
        self.catalog = catalog
        self.guard = guard
        self._opener = opener
        self._method = method
        self._index: Searcher | None = None
        self._index_generation: int | None = None
        self._open_lock = threading.Lock()
        self.index_error: str | None = None
        self.index_seconds: float | None = None
        self.index_opened_at: float | None = None
        # Ranked hits by (task, k, method, index generation); quarantine is applied after.
        self._cache: OrderedDict[tuple[str, int, str, int | None], list[Ranked]] = OrderedDict()

    @property
    def method(self) -> str:
        return self._method or default_method()

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
                self._index = self._opener(self.ws, self.catalog.store)
                self.index_error = None
            except (CartographError, ImportError, OSError, ValueError) as exc:
                self._index = None
                self.index_error = str(exc) or type(exc).__name__
                logger.warning("retrieval index unavailable (%s); using keyword ranking", exc)
            self.index_seconds = time.perf_counter() - started
            self.index_opened_at = time.time()
            self._index_generation = generation
        return self._index

    def index_state(self) -> dict[str, Any]:
        """Index freshness for status, without opening it (that may take seconds)."""
        if self._index_generation is None:
            return {"state": "not loaded yet (loads in the background and on first discover)"}
        out: dict[str, Any] = {"method": self.method}
        if self._index is None:
            out.update(state="missing", method=FALLBACK_METHOD, error=self.index_error)
        elif self._index_generation != self.catalog.generation:
            out["state"] = "stale: cards changed; it is rebuilt on the next discover"
        else:
            out["state"] = "fresh: matches the verified cards"
        if self.index_opened_at is not None:
            out["opened_s_ago"] = round(time.time() - self.index_opened_at, 1)
            out["open_seconds"] = round(self.index_seconds or 0.0, 2)
        size = getattr(self._index, "tool_ids", None)
        if size is not None:
            out["tools"] = len(size)
        return out

    def rank(self, task: str, k: int, allow: Callable[[str, str], bool] | None = None) -> Answer:
        """Top-k callable tools for ``task`` (blocking: embeds the query); with ``allow``, the
        top-k of the tools it permits: the index is asked for more until k are found."""
        k = max(1, min(MAX_K, k))
        want = k + 10  # room for hits dropped below (quarantined, card gone)
        while True:
            answer = self._rank(task, k, want)
            if allow is None:
                return answer
            results = [h for h in answer.all_hits if allow(h.server, h.tool)][:k]
            if len(results) >= k or answer.exhausted:
                return Answer(answer.method, results, answer.note)
            want *= 4

    def _rank(self, task: str, k: int, want: int) -> Answer:
        self.catalog.refresh()
        searcher = self.searcher()
        method, note = self.method, None
        if searcher is not None:
            key = (task, want, self.method, self._index_generation)
            hits = self._cache.get(key)
            if hits is None:
                try:
                    hits = [
                        Ranked(str(h.server), str(h.tool), float(h.score))
                        for h in searcher.search(task, want, self.method)
                    ]
                except CartographError as exc:
                    raise IndexError_(f"the retrieval index failed: {exc}") from exc
                with self._open_lock:
                    self._cache[key] = hits
                    while len(self._cache) > CACHE_SIZE:
                        self._cache.popitem(last=False)
        else:
            hits = keyword_rank(self.catalog.cards, task, want)
            method = FALLBACK_METHOD
            note = "no retrieval index: ranked by keywords (run `cartograph index build`)"
        callable_hits = [h for h in hits if self._callable(h.server, h.tool)]
        return Answer(
            method, callable_hits[:k], note, all_hits=callable_hits, exhausted=len(hits) < want
        )

    def _callable(self, server: str, tool: str) -> bool:
        card = self.catalog.cards.get(server)
        return (
            card is not None and card.tool(tool) is not None and not self.guard.held(server, tool)
        )

    def render(self, answer: Answer) -> dict[str, Any]:
        """The JSON an agent reads: tools with signed schemas and examples, and how to call."""
        tools = []
        for hit in answer.results:
            card = self.catalog.cards[hit.server]
            entry = card.tool(hit.tool)
            assert entry is not None
            item: dict[str, Any] = {
                "server": hit.server,
                "tool": hit.tool,
                "summary": entry.summary,
            }
            if entry.usage:
                item["usage"] = _agent_usage(entry.usage)
            item["input_schema"] = _lean_schema(entry.input_schema)
            examples: list[dict[str, Any]] = []
            for ex in entry.examples:
                if ex.arguments and ex.arguments not in examples:
                    examples.append(ex.arguments)
            if examples:
                item["examples"] = examples[:MAX_EXAMPLES]
            tools.append(item)
        out: dict[str, Any] = {"tools": tools}
        if answer.note:
            out["note"] = answer.note
        if not tools:
            out["note"] = (answer.note + "; " if answer.note else "") + (
                "no callable tool matched; rephrase the task or check status"
            )
        return out

    def audit_fields(self, answer: Answer) -> list[dict[str, Any]]:
        """Per returned tool: the card digest, version, key id and generator of the text that
        ranked it (``cartograph cards show SERVER --version N`` opens that exact card)."""
        rows = []
        for hit in answer.results:
            card = self.catalog.cards[hit.server]
            ref = self.catalog.refs[hit.server]
            entry = card.tool(hit.tool)
            rows.append(
                {
                    "server": hit.server,
                    "tool": hit.tool,
                    "score": round(hit.score, 4),
                    "card_digest": ref.digest,
                    "card_version": self.catalog.card_version(hit.server),
                    "key_id": ref.key_id,
                    "generator": entry.generator if entry else card.provenance.generator,
                }
            )
        return rows


def keyword_rank(cards: dict[str, Card], task: str, k: int) -> list[Ranked]:
    """Jaccard of the task's words against each tool's card text (the no-index fallback)."""
    from cartograph.index.documents import card_documents
    from cartograph.index.lexical import jaccard_scores, token_set

    docs = card_documents(cards)
    if not docs:
        return []
    scores = jaccard_scores(task, [token_set(d.lexical) for d in docs])
    order = np.argsort(-scores, kind="stable")[:k]
    return [Ranked(docs[i].server, docs[i].tool, float(scores[i])) for i in order]


def _lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The signed schema without keys that cost tokens and tell an agent nothing."""
    return {k: v for k, v in schema.items() if k != "$schema"}


_RELATED = re.compile(r"\s*Related: [^.]*\.$")


def _agent_usage(usage: str) -> str:
    """The card's usage without the trailing ``Related: ...`` keywords the bootstrap generator
    adds for ranking (the index keeps them); they do not help an agent call the tool."""
    return _RELATED.sub("", usage)
