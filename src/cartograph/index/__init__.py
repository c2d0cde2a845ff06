"""Retrieval over signed capability cards: embedders, the tool index, methods, open_index.

Public API (stable; other packages import from here only)::

    Embedder, load_embedder, DEFAULT_SPEC
    ToolIndex, Hit, METHODS, DEFAULT_METHOD
    open_index(ws, store) -> ToolIndex   (the store: cartograph.storage.open_store(ws))

Names resolve on first access, so that importing a submodule (the CLI's option lists) does
not load the whole package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # resolved lazily at run time, see __getattr__
    from cartograph.index.embedders import DEFAULT_SPEC, Embedder, embed_queries, load_embedder
    from cartograph.index.methods import DEFAULT_METHOD, METHODS, stage_one_width
    from cartograph.index.store import IndexStatus, open_index, open_index_with_status
    from cartograph.index.tool_index import Hit, ToolIndex, card_digest
    from cartograph.index.vectors import MatrixVectors, ToolVectors

    Retriever = ToolIndex

_EXPORTS: dict[str, tuple[str, str]] = {
    "DEFAULT_SPEC": ("cartograph.index.embedders", "DEFAULT_SPEC"),
    "Embedder": ("cartograph.index.embedders", "Embedder"),
    "embed_queries": ("cartograph.index.embedders", "embed_queries"),
    "load_embedder": ("cartograph.index.embedders", "load_embedder"),
    "DEFAULT_METHOD": ("cartograph.index.methods", "DEFAULT_METHOD"),
    "METHODS": ("cartograph.index.methods", "METHODS"),
    "stage_one_width": ("cartograph.index.methods", "stage_one_width"),
    "IndexStatus": ("cartograph.index.store", "IndexStatus"),
    "open_index": ("cartograph.index.store", "open_index"),
    "open_index_with_status": ("cartograph.index.store", "open_index_with_status"),
    "Hit": ("cartograph.index.tool_index", "Hit"),
    "ToolIndex": ("cartograph.index.tool_index", "ToolIndex"),
    "card_digest": ("cartograph.index.tool_index", "card_digest"),
    "Retriever": ("cartograph.index.tool_index", "ToolIndex"),
    "MatrixVectors": ("cartograph.index.vectors", "MatrixVectors"),
    "ToolVectors": ("cartograph.index.vectors", "ToolVectors"),
}

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


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
