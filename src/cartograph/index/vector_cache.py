"""Embedding caches keyed by the text's hash and the model's id.

* Documents: :func:`embed_documents` embeds only the texts whose (model id, sha256) is not in the
  ``known`` map, so rebuilding the index after one server's cards changed embeds only that
  server's tools. :func:`known_vectors` makes that map from an index built with the same model.
* Queries: :class:`QueryCache`, a small LRU of query vectors (an agent repeats itself; benchmarks
  and `status` ask the same task again), keyed the same way.

A vector is only ever reused for the exact text under the exact model (``Embedder.model`` names
the weights, so a new model misses every entry).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from cartograph.index.embedders import Embedder

QUERY_CACHE_SIZE = 512


def text_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()


def known_vectors(model: str, texts: Sequence[str], vectors: np.ndarray) -> dict[str, np.ndarray]:
    """``{text_key: vector}`` for texts embedded by ``model`` (rows of ``vectors``)."""
    return {text_key(model, t): vectors[i] for i, t in enumerate(texts)}


def embed_documents(
    embedder: Embedder, texts: Sequence[str], known: dict[str, np.ndarray] | None = None
) -> tuple[np.ndarray, int]:
    """Vectors of ``texts`` (unit rows), reusing ``known`` ones; also how many were embedded."""
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    keys = [text_key(embedder.model, t) for t in texts]
    todo = [i for i, k in enumerate(keys) if known is None or k not in known]
    for i, k in enumerate(keys):
        if known is not None and k in known:
            out[i] = known[k]
    if todo:
        out[todo] = embedder.embed([texts[i] for i in todo])
    return out, len(todo)


class QueryCache:
    """An LRU of query vectors keyed by (model id, query text, whether steps were split)."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = 0

    def peek(self, model: str, query: str, steps: bool) -> np.ndarray | None:
        """The cached value, if any, without touching the order (any thread may ask)."""
        return self._items.get(text_key(f"{model}|{int(steps)}", query))

    def get(self, model: str, query: str, steps: bool, make: Callable[[], np.ndarray]):
        key = text_key(f"{model}|{int(steps)}", query)
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
            self.hits += 1
            return found
        value = make()
        value.setflags(write=False)
        self._items[key] = value
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value


QUERIES = QueryCache()
"""The process's query vectors: keyed by model id, so every index and the reorder stage share it."""
