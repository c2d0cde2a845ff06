"""Retrieval over signed capability cards: embedders, the tool index, methods, open_index.

Public API (stable; other packages import from here only)::

    Embedder, load_embedder, DEFAULT_SPEC
    ToolIndex, Hit, METHODS, DEFAULT_METHOD, Method
    open_index(ws, store) -> ToolIndex   (the store: cartograph.storage.open_store(ws))
    DiscoverAnswer, render_answer        the discover answer (cartograph.index.answer)

Names resolve on first access, so that importing a submodule (the CLI's option lists, the
discover answer the proxy renders with) does not load the whole package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cartograph.lazy import exports

if TYPE_CHECKING:  # resolved lazily at run time, see __getattr__
    from cartograph.index.answer import DiscoverAnswer, Hit, render_answer
    from cartograph.index.embedders import DEFAULT_SPEC, Embedder, embed_queries, load_embedder
    from cartograph.index.manifest import card_set_digest
    from cartograph.index.methods import stage_one_width
    from cartograph.index.names import DEFAULT_METHOD, METHODS, Method
    from cartograph.index.store import IndexStatus, open_index, open_index_with_status
    from cartograph.index.tool_index import ToolIndex
    from cartograph.index.vectors import MatrixVectors, ToolVectors

    Retriever = ToolIndex

_EXPORTS: dict[str, tuple[str, str]] = {
    "DEFAULT_SPEC": ("cartograph.index.embedders", "DEFAULT_SPEC"),
    "Embedder": ("cartograph.index.embedders", "Embedder"),
    "embed_queries": ("cartograph.index.embedders", "embed_queries"),
    "load_embedder": ("cartograph.index.embedders", "load_embedder"),
    "DEFAULT_METHOD": ("cartograph.index.names", "DEFAULT_METHOD"),
    "METHODS": ("cartograph.index.names", "METHODS"),
    "Method": ("cartograph.index.names", "Method"),
    "stage_one_width": ("cartograph.index.methods", "stage_one_width"),
    "IndexStatus": ("cartograph.index.store", "IndexStatus"),
    "open_index": ("cartograph.index.store", "open_index"),
    "open_index_with_status": ("cartograph.index.store", "open_index_with_status"),
    "DiscoverAnswer": ("cartograph.index.answer", "DiscoverAnswer"),
    "Hit": ("cartograph.index.answer", "Hit"),
    "render_answer": ("cartograph.index.answer", "render_answer"),
    "ToolIndex": ("cartograph.index.tool_index", "ToolIndex"),
    "card_set_digest": ("cartograph.index.manifest", "card_set_digest"),
    "Retriever": ("cartograph.index.tool_index", "ToolIndex"),
    "MatrixVectors": ("cartograph.index.vectors", "MatrixVectors"),
    "ToolVectors": ("cartograph.index.vectors", "ToolVectors"),
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


__getattr__, __dir__ = exports(__name__, globals(), _EXPORTS)
