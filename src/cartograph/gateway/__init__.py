"""Routing tool calls to upstream servers: one-shot and pooled sessions, and the drift guard."""

from cartograph.gateway.base import Connection, Connector, Gateway, Guard, Limits, SessionHealth
from cartograph.gateway.oneshot import OneShotGateway
from cartograph.gateway.pool import PooledGateway

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
