"""Retrieval over signed capability cards: embedders, the tool index, methods, open_index.

Public API (stable; other packages import from here only)::

    Embedder, load_embedder, DEFAULT_SPEC
    ToolIndex, Hit, METHODS, DEFAULT_METHOD
    open_index(ws, store) -> ToolIndex   (the store: cartograph.storage.open_store(ws))
"""

from __future__ import annotations

from cartograph.index.embedders import DEFAULT_SPEC, Embedder, embed_queries, load_embedder
from cartograph.index.methods import DEFAULT_METHOD, METHODS, stage_one_width
from cartograph.index.store import IndexStatus, open_index, open_index_with_status
from cartograph.index.tool_index import Hit, ToolIndex, card_digest
from cartograph.index.vectors import MatrixVectors, ToolVectors

Retriever = ToolIndex

__all__ = [
    "DEFAULT_METHOD",
    "DEFAULT_SPEC",
    "METHODS",
    "Embedder",
    "Hit",
    "IndexStatus",
    "MatrixVectors",
    "Retriever",
    "ToolIndex",
    "ToolVectors",
    "card_digest",
    "embed_queries",
    "load_embedder",
    "open_index",
    "open_index_with_status",
    "stage_one_width",
]
