"""Routing tool calls to upstream servers: one-shot and pooled sessions, and the drift guard.

Names resolve on first access (:mod:`cartograph.lazy`): ``cartograph.gateway.drift``, which the
stores import, must not pull in the MCP SDK, whose import loads ``cryptography`` (a verifying
proxy needs only libsodium).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cartograph.lazy import exports

if TYPE_CHECKING:  # resolved lazily at run time, see __getattr__
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

_BASE = "cartograph.gateway.base"
_EXPORTS = {
    "Connection": (_BASE, "Connection"),
    "Connector": (_BASE, "Connector"),
    "Gateway": (_BASE, "Gateway"),
    "Guard": (_BASE, "Guard"),
    "Limits": (_BASE, "Limits"),
    "SessionHealth": (_BASE, "SessionHealth"),
    "OneShotGateway": ("cartograph.gateway.oneshot", "OneShotGateway"),
    "PooledGateway": ("cartograph.gateway.pool", "PooledGateway"),
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

__getattr__, __dir__ = exports(__name__, globals(), _EXPORTS)
