"""resources/subscribe through the proxy: who subscribed to which upstream resource, the
upstream's ``notifications/resources/updated`` sent on to them, subscriptions renewed when a
pooled session restarts.

A subscription is checked like a read (:meth:`Federation.resource_target`: the wrapped URI, the
client's policy, the signed card, the drift guard), then forwarded on the server's pooled
session, when that upstream advertises ``resources.subscribe``; it is kept per MCP client
session, and forgotten when the client unsubscribes or disconnects. The gateway reports each
update (:class:`~cartograph.gateway.base.UpstreamEvents`); the clients subscribed to that
resource get ``notifications/resources/updated`` with its wrapped URI. One-shot mode keeps no
session to hear updates on, so it refuses subscriptions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from mcp import ClientSession, MCPError, types

from cartograph.access.guard import Caller
from cartograph.errors import CartographError, GatewayError
from cartograph.gateway.base import Ask
from cartograph.proxy.addresses import wrap_uri

if TYPE_CHECKING:
    from cartograph.proxy.core import Proxy

logger = logging.getLogger(__name__)

NOTIFY_TIMEOUT = 5.0  # seconds to hand one update to one client before giving up on it


class Subscriber(Protocol):
    """The client's side of the proxy's MCP session (the SDK's ``ServerSession``)."""

    async def send_resource_updated(self, uri: Any) -> None: ...


@dataclass(frozen=True)
class _Entry:
    session: Subscriber
    wrapped: str


class Subscriptions:
    """Resource subscriptions of the proxy's clients; the gateway's :class:`UpstreamEvents`."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        # (server, upstream URI) -> client key -> who to tell, under which URI
        self._subs: dict[tuple[str, str], dict[str, _Entry]] = {}

    def count(self) -> int:
        return sum(len(clients) for clients in self._subs.values())

    async def subscribe(
        self, uri: str, session: Subscriber, *, client: str, caller: Caller | None = None
    ) -> None:
        """Subscribe ``client`` to the wrapped ``uri`` (its upstream first, if it is the first)."""
        if self.proxy.settings.mode != "pooled":
            raise GatewayError(
                "resources/subscribe needs pooled upstream sessions (serve --mode pooled); in "
                "one-shot mode no session stays open to hear updates: read the resource again"
            )
        server, upstream, key = self.proxy.federation.resource_target(uri, caller)
        pair = (server, upstream)
        if not self._subs.get(pair):
            await self._send(server, key, upstream, client, subscribe=True)
        self._subs.setdefault(pair, {})[client] = _Entry(session, wrap_uri(server, upstream))
        self.proxy.audit.write("subscribe", server=server, upstream_uri=upstream, session=client)

    async def unsubscribe(self, uri: str, *, client: str, caller: Caller | None = None) -> None:
        server, upstream, key = self.proxy.federation.resource_target(uri, caller, admit=False)
        clients = self._subs.get((server, upstream), {})
        if clients.pop(client, None) is not None and not clients:
            del self._subs[(server, upstream)]
            try:
                await self._send(server, key, upstream, client, subscribe=False)
            except CartographError as exc:  # the upstream may be gone: nothing left to undo
                logger.info("%s: unsubscribe %s: %s", server, upstream, exc)

    def release(self, client: str) -> None:
        """``client`` disconnected: forget its subscriptions (updates for them are dropped)."""
        for pair in list(self._subs):
            self._subs[pair].pop(client, None)
            if not self._subs[pair]:
                del self._subs[pair]

    async def _send(
        self, server: str, key: str, upstream: str, client: str, *, subscribe: bool
    ) -> None:
        method = "resources/subscribe" if subscribe else "resources/unsubscribe"

        async def send(session: ClientSession) -> None:
            caps = session.server_capabilities
            if caps is None or caps.resources is None or not caps.resources.subscribe:
                raise GatewayError(
                    f"server {server!r} does not support resources/subscribe (its capabilities "
                    "do not offer it); read the resource again to see changes"
                )
            await _request(session, upstream, subscribe)

        await self.proxy.gateway.request(
            server, Ask(f"{method} {upstream!r}", key, send), client=client
        )

    # -- UpstreamEvents -----------------------------------------------------------------------

    async def ready(self, server: str, client: str | None, session: ClientSession) -> None:
        """A pooled session (re)started: subscribe it again to what clients subscribed to."""
        for (srv, upstream), clients in list(self._subs.items()):
            if srv != server or (client is not None and client not in clients):
                continue
            try:
                with anyio.fail_after(NOTIFY_TIMEOUT):
                    await _request(session, upstream, True)
            except (MCPError, TimeoutError) as exc:
                logger.warning("%s: could not subscribe again to %s: %s", server, upstream, exc)

    async def updated(self, server: str, client: str | None, uri: str) -> None:
        """The upstream says ``uri`` changed: tell the clients subscribed to it."""
        clients = self._subs.get((server, uri), {})
        for key, entry in list(clients.items()):
            if client is not None and key != client:
                continue  # a per-client session speaks for its own client only
            try:
                with anyio.fail_after(NOTIFY_TIMEOUT):
                    await entry.session.send_resource_updated(entry.wrapped)
            except Exception as exc:  # boundary: a client gone or stuck must not stop the rest
                logger.info("could not tell %s that %s changed: %r", key, entry.wrapped, exc)


async def _request(session: ClientSession, upstream: str, subscribe: bool) -> None:
    if subscribe:
        request: Any = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=upstream))  # pyright: ignore[reportArgumentType]
    else:
        request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=upstream))  # pyright: ignore[reportArgumentType]
    await session.send_request(request, types.EmptyResult)
