"""Cartograph: a federated MCP proxy that ranks tools by signed capability cards.

The curated public API is :data:`__all__`; names resolve lazily on first access so that
``import cartograph`` (and the CLI) stays cheap. ``tests/package/test_public_api.py`` fails when
the list changes by accident.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below resolve lazily at run time, see __getattr__
    from cartograph.cards.model import Card
    from cartograph.cards.seal import sign_card, verify_card
    from cartograph.config import load_config
    from cartograph.errors import CartographError
    from cartograph.generate.bootstrap.generator import generate_card
    from cartograph.index import Hit, ToolIndex, load_embedder
    from cartograph.proxy import Proxy
    from cartograph.storage import load_verified, open_index
    from cartograph.trust.keys import OperatorKey
    from cartograph.trust.store import TrustStore
    from cartograph.upstream.snapshot import Snapshot, load_snapshot
    from cartograph.workspace import Workspace

    __version__: str

_EXPORTS: dict[str, str] = {
    "CartographError": "cartograph.errors",
    "Workspace": "cartograph.workspace",
    "load_config": "cartograph.config",
    "Snapshot": "cartograph.upstream.snapshot",
    "load_snapshot": "cartograph.upstream.snapshot",
    "Card": "cartograph.cards.model",
    "OperatorKey": "cartograph.trust.keys",
    "TrustStore": "cartograph.trust.store",
    "sign_card": "cartograph.cards.seal",
    "verify_card": "cartograph.cards.seal",
    "load_verified": "cartograph.storage",
    "generate_card": "cartograph.generate.bootstrap.generator",
    "ToolIndex": "cartograph.index",
    "Hit": "cartograph.index",
    "open_index": "cartograph.storage",
    "load_embedder": "cartograph.index",
    "Proxy": "cartograph.proxy",
}

__all__ = [
    "Card",
    "CartographError",
    "Hit",
    "OperatorKey",
    "Proxy",
    "Snapshot",
    "ToolIndex",
    "TrustStore",
    "Workspace",
    "__version__",
    "generate_card",
    "load_config",
    "load_embedder",
    "load_snapshot",
    "load_verified",
    "open_index",
    "sign_card",
    "verify_card",
]


def _version() -> str:
    """The installed distribution's version (importlib.metadata costs ~20 ms: only on demand)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cartograph")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'cartograph' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | {"__version__"})
