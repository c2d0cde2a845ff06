"""Routing tool calls to upstream servers: one-shot and pooled sessions, and the drift guard.

The exports load on first use: ``cartograph.gateway.drift`` (what the stores need) must not pull
in the MCP SDK, whose import loads ``cryptography`` (a verifying proxy needs only libsodium).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cartograph.gateway.base import (
        Connection,
        Connector,
        Gateway,
        Guard,
        Limits,
        SessionHealth,
    )
    from cartograph.gateway.oneshot import OneShotGateway
    from cartograph.gateway.pool import PooledGateway

_HOMES = {
    "Connection": "base",
    "Connector": "base",
    "Gateway": "base",
    "Guard": "base",
    "Limits": "base",
    "SessionHealth": "base",
    "OneShotGateway": "oneshot",
    "PooledGateway": "pool",
}

__all__ = [
    "Connection",
    "Connector",
    "Gateway",
    "Guard",
    "Limits",
    "OneShotGateway",
    "PooledGateway",
    "SessionHealth",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cartograph.gateway' has no attribute {name!r}")
    return getattr(importlib.import_module(f"cartograph.gateway.{home}"), name)
