"""Which MCP client a request comes from, in either protocol era, and what it may be told.

The proxy keys per-client state (``--per-client`` upstream sessions, subscriptions, audit) by a
client key. A 2025-era client opens a connection with ``initialize``: its key is minted on the
connection's first request, and when the connection ends its upstream sessions are released
(pushed on the connection's exit stack). A 2026-07-28 client has no connection and no session:
every request stands alone, so its key is ``stateless`` (``stateless:<caller>`` when the
request is authenticated) and nothing is held for it between requests.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcp.server.connection import Connection

    from cartograph.access.guard import Caller
    from cartograph.proxy.core import Proxy

Ctx = ServerRequestContext[Any, Any]

STATELESS = "stateless"
_KEY = "cartograph.client"
_NUMBERS = itertools.count(1)  # unique per process, whatever server object serves
RELEASE_TIMEOUT = 15.0
"""Seconds a disconnected client's upstream sessions may take to close."""


def is_modern(ctx: Ctx) -> bool:
    """Whether the request was sent in the 2026-07-28 (sessionless) era."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def connection_of(ctx: Ctx) -> Connection:
    """The connection a request arrived on (one per 2025-era client; one per request in the
    2026-07-28 era). The SDK keeps it on the request's session only."""
    return ctx.session._connection  # pyright: ignore[reportPrivateUsage]


class Clients:
    """Mints client keys and releases a 2025-era client's sessions when it disconnects."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy

    def key(self, ctx: Ctx, caller: Caller | None = None) -> str:
        if is_modern(ctx):
            return f"{STATELESS}:{caller.name}" if caller is not None else STATELESS
        connection = connection_of(ctx)
        key = connection.state.get(_KEY)
        if not isinstance(key, str):
            key = f"client-{next(_NUMBERS)}"
            connection.state[_KEY] = key
            connection.exit_stack.push_async_callback(self._release, key)
        return key

    async def _release(self, key: str) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(RELEASE_TIMEOUT):
            await self.proxy.release_client(key)
