"""discover: a task in plain words -> the top-k tools, rendered from signed cards only.

Ranking comes from the retrieval index (:func:`cartograph.index.open_index`); when no index has
been built, a keyword ranking over the verified cards stands in and the answer says so. Every
hit is re-checked against the cards that verify *now* (a hit whose card is gone, tampered or
whose tool is quarantined is dropped), and the schema, summary and examples in the answer come
from that card, never from live upstream text.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cartograph.cards.model import Card
from cartograph.errors import CartographError, IndexError_
from cartograph.index.documents import card_documents
from cartograph.index.lexical import jaccard_scores, token_set
from cartograph.proxy.catalog import CardCatalog, CardGuard
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

FALLBACK_METHOD = "keyword-fallback"
MAX_K = 20
MAX_EXAMPLES = 2


class Searcher(Protocol):
    """What the resolver needs of the index: ``search(query, k, method) -> [Hit]``."""

    def search(self, query: str, k: int, method: str | None = None) -> list[Any]: ...


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


def default_opener(ws: Workspace) -> Searcher:
    module = importlib.import_module("cartograph.index")
    return module.open_index(ws)


def default_method() -> str:
    try:
        module = importlib.import_module("cartograph.index")
        return str(module.DEFAULT_METHOD)
    except (ImportError, AttributeError):
        return "hybrid"


class Resolver:
    """Ranks tools for a task and renders the answer from the verified cards."""

    def __init__(
        self,
        ws: Workspace,
        catalog: CardCatalog,
        guard: CardGuard,
        *,
        opener: Callable[[Workspace], Searcher] = default_opener,
        method: str | None = None,
    ) -> None:
        self.ws = ws
        self.catalog = catalog
        self.guard = guard
        self._opener = opener
        self.method = method or default_method()
        self._index: Searcher | None = None
        self._index_stamp: float | None = None
        self.index_error: str | None = None

    def searcher(self) -> Searcher | None:
        stamp = _dir_mtime(self.ws.index_dir)
        if self._index is not None and stamp == self._index_stamp:
            return self._index
        try:
            self._index = self._opener(self.ws)
            self._index_stamp = stamp
            self.index_error = None
        except (CartographError, ImportError, AttributeError, OSError, ValueError) as exc:
            self._index = None
            self.index_error = str(exc) or type(exc).__name__
            logger.warning("retrieval index unavailable (%s); using keyword ranking", exc)
        return self._index

    def rank(self, task: str, k: int) -> Answer:
        """Top-k callable tools for ``task`` (blocking: embeds the query)."""
        self.catalog.refresh()
        k = max(1, min(MAX_K, k))
        searcher = self.searcher()
        method, note = self.method, None
        want = k + 10  # room for hits dropped below (quarantined, card gone)
        if searcher is not None:
            try:
                hits = [
                    Ranked(str(h.server), str(h.tool), float(h.score))
                    for h in searcher.search(task, want, self.method)
                ]
            except CartographError as exc:
                raise IndexError_(f"the retrieval index failed: {exc}") from exc
        else:
            hits = keyword_rank(self.catalog.cards, task, want)
            method = FALLBACK_METHOD
            note = "no retrieval index: ranked by keywords (run `cartograph index build`)"
        results = [h for h in hits if self._callable(h.server, h.tool)][:k]
        return Answer(method, results, note)

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
                item["usage"] = entry.usage
            item["input_schema"] = _lean_schema(entry.input_schema)
            if entry.examples:
                item["examples"] = [ex.arguments for ex in entry.examples[:MAX_EXAMPLES]]
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
        """Per returned tool: the card digest, key id and generator of the text that ranked it."""
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
                    "key_id": ref.key_id,
                    "generator": entry.generator if entry else card.provenance.generator,
                }
            )
        return rows


def keyword_rank(cards: dict[str, Card], task: str, k: int) -> list[Ranked]:
    """Jaccard of the task's words against each tool's card text (the no-index fallback)."""
    docs = card_documents(cards)
    if not docs:
        return []
    scores = jaccard_scores(task, [token_set(d.lexical) for d in docs])
    order = np.argsort(-scores, kind="stable")[:k]
    return [Ranked(docs[i].server, docs[i].tool, float(scores[i])) for i in order]


def _lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The signed schema without keys that cost tokens and tell an agent nothing."""
    return {k: v for k, v in schema.items() if k != "$schema"}


def _dir_mtime(path: os.PathLike[str]) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None
