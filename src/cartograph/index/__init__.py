"""Retrieval over signed capability cards: embedders, the tool index, methods, open_index.

Public API (stable; other packages import from here only)::

    Embedder, load_embedder, DEFAULT_SPEC
    ToolIndex, Hit, METHODS, DEFAULT_METHOD, Method, ToolVectors, MatrixVectors
    open_index(ws, store) -> ToolIndex   (the store: cartograph.storage.open_store(ws))
    DiscoverAnswer, render_answer        the discover answer (cartograph.index.answer)

Names resolve lazily on first access, so importing a light submodule (``index.answer``, which
the proxy renders with) does not load numpy, BM25 or an embedding model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # resolved lazily at run time, see __getattr__
    from cartograph.index.answer import DiscoverAnswer, Hit, render_answer
    from cartograph.index.embedders import DEFAULT_SPEC, Embedder, embed_queries, load_embedder
    from cartograph.index.methods import DEFAULT_METHOD, METHODS, Method, stage_one_width
    from cartograph.index.store import IndexStatus, open_index, open_index_with_status
    from cartograph.index.tool_index import ToolIndex, card_set_digest
    from cartograph.index.vectors import MatrixVectors, ToolVectors

    Retriever = ToolIndex

_EXPORTS: dict[str, str] = {
    "DEFAULT_METHOD": "cartograph.index.methods",
    "DEFAULT_SPEC": "cartograph.index.embedders",
    "METHODS": "cartograph.index.methods",
    "Method": "cartograph.index.methods",
    "DiscoverAnswer": "cartograph.index.answer",
    "Embedder": "cartograph.index.embedders",
    "Hit": "cartograph.index.answer",
    "IndexStatus": "cartograph.index.store",
    "MatrixVectors": "cartograph.index.vectors",
    "ToolVectors": "cartograph.index.vectors",
    "ToolIndex": "cartograph.index.tool_index",
    "card_set_digest": "cartograph.index.tool_index",
    "embed_queries": "cartograph.index.embedders",
    "load_embedder": "cartograph.index.embedders",
    "open_index": "cartograph.index.store",
    "open_index_with_status": "cartograph.index.store",
    "render_answer": "cartograph.index.answer",
    "stage_one_width": "cartograph.index.methods",
}

__all__ = [
    "DEFAULT_METHOD",
    "DEFAULT_SPEC",
    "METHODS",
    "DiscoverAnswer",
    "Embedder",
    "Hit",
    "IndexStatus",
    "MatrixVectors",
    "Method",
    "Retriever",
    "ToolIndex",
    "ToolVectors",
    "card_set_digest",
    "embed_queries",
    "load_embedder",
    "open_index",
    "open_index_with_status",
    "render_answer",
    "stage_one_width",
]


def __getattr__(name: str) -> Any:
    if name == "Retriever":
        name = "ToolIndex"
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'cartograph.index' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
