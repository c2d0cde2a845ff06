"""``subscriptions/listen`` on the proxy's front: how a 2026-07-28 client hears that the proxy's
lists changed and that a resource it watches was updated (SEP-2575).

That era has no connection to notify on: a client opts in with a ``subscriptions/listen``
request whose response is the stream. Each stream is served by the SDK's
:class:`~mcp.server.subscriptions.ListenHandler`, which acknowledges the filter the client asked
for, then sends only the kinds of event it asked for, stamped with the request's id, until the
client goes away or the proxy stops (:meth:`Listens.close` ends every stream gracefully).

- List changes: the front's :class:`~cartograph.proxy.brief.ListWatch` publishes tools, prompts
  and resources ``list_changed`` on its bus when the verified card set changes, the trigger the
  2025-era sessions are told on.
- Resource updates: each URI of ``resourceSubscriptions`` is subscribed as ``resources/subscribe``
  is (:class:`~cartograph.proxy.subscriptions.Subscriptions`: a wrapped ``cartograph://`` URI,
  checked like a read, the upstream subscribed on its pooled session when its capabilities offer
  ``resources.subscribe``), under a client key of the stream's own, and unsubscribed when the
  stream ends. An update reaches that stream alone, under the URI as the client wrote it. A URI
  that cannot be subscribed refuses the whole request with the reason ``resources/subscribe``
  gives (one-shot mode refuses any).

The request runs as the caller: its policy decides which URIs it may watch, and opening a stream
counts against its rate limits. A 2025-era client never gets here (the SDK answers it "method not
found"): it is told on its connection.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import anyio
from mcp import MCPError, types
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
)

from cartograph.errors import CartographError
from cartograph.proxy.addresses import wrap_uri
from cartograph.proxy.clients import RELEASE_TIMEOUT, Clients, Ctx

if TYPE_CHECKING:
    from cartograph.access.guard import Access, Caller
    from cartograph.proxy.brief import ListWatch
    from cartograph.proxy.core import Proxy

logger = logging.getLogger(__name__)

MAX_STREAMS = 1024
"""Open listen streams per front server (the SDK's own default); one more is refused."""

_NUMBERS = itertools.count(1)  # a client key per stream, unique per process


class _StreamBus:
    """One stream's :class:`SubscriptionBus`: the front's list changes, and the updates of the
    resources this stream subscribed to (published here only, so no other stream hears them)."""

    def __init__(self, shared: SubscriptionBus) -> None:
        self._shared = shared
        self._own = InMemorySubscriptionBus()

    async def publish(self, event: ServerEvent) -> None:
        await self._own.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        drops = (self._shared.subscribe(listener), self._own.subscribe(listener))

        def unsubscribe() -> None:
            for drop in drops:
                drop()

        return unsubscribe


class _Forward:
    """A listen stream as a :class:`~cartograph.proxy.subscriptions.Subscriber`: the update of a
    wrapped URI, published under every URI the client wrote for that resource."""

    def __init__(self, bus: _StreamBus) -> None:
        self.bus = bus
        self.asked: dict[str, list[str]] = {}  # wrapped URI -> the URIs as the client wrote them

    async def send_resource_updated(self, uri: Any) -> None:
        for asked in self.asked.get(str(uri), ()):
            await self.bus.publish(ResourceUpdated(uri=asked))


class Listens:
    """The ``subscriptions/listen`` streams of one front server."""

    def __init__(
        self,
        proxy: Proxy,
        watch: ListWatch,
        access: Access | None,
        current_caller: Callable[[Ctx], Caller | None],
        clients: Clients,
    ) -> None:
        self.proxy = proxy
        self.watch = watch
        self.access = access
        self.current_caller = current_caller
        self.clients = clients
        self._open: set[ListenHandler] = set()

    async def listen(
        self, ctx: Ctx, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """Serve one stream until the client leaves or :meth:`close`."""
        who = self.current_caller(ctx)
        if len(self._open) >= MAX_STREAMS:
            raise MCPError(types.INTERNAL_ERROR, "Subscription limit reached")
        bus = _StreamBus(self.watch.bus)
        handler = ListenHandler(bus, max_subscriptions=1)
        uris = params.notifications.resource_subscriptions or []
        client = f"{self.clients.key(ctx, who)}/listen-{next(_NUMBERS)}"
        self._open.add(handler)
        try:
            async with self._resources(uris, _Forward(bus), client, who):
                return await handler(ctx, params)
        finally:
            self._open.discard(handler)

    def close(self) -> None:
        """End every open stream gracefully (its result is its last frame): the proxy stops."""
        for handler in list(self._open):
            handler.close()

    @asynccontextmanager
    async def _resources(
        self, uris: Sequence[str], forward: _Forward, client: str, who: Caller | None
    ) -> AsyncIterator[None]:
        """The stream's resource subscriptions, held for the block."""
        done: list[str] = []
        try:
            with self._slot(who):
                for uri in uris:
                    server, upstream, _ = self.proxy.federation.resource_target(uri, who)
                    forward.asked.setdefault(wrap_uri(server, upstream), []).append(uri)
                    await self.proxy.subscriptions.subscribe(
                        uri, forward, client=client, caller=who
                    )
                    done.append(uri)
            yield
        finally:
            if uris:
                await self._release(done, client, who)

    async def _release(self, uris: Sequence[str], client: str, who: Caller | None) -> None:
        subs = self.proxy.subscriptions
        with anyio.CancelScope(shield=True), anyio.move_on_after(RELEASE_TIMEOUT):
            for uri in uris:
                try:
                    await subs.unsubscribe(uri, client=client, caller=who)
                except CartographError as exc:  # the card or the upstream may be gone
                    logger.info("listen stream %s: unsubscribe %s: %s", client, uri, exc)
            await self.proxy.release_client(client)

    def _slot(self, who: Caller | None) -> AbstractContextManager[object]:
        if self.access is None or who is None:
            return nullcontext()
        policy = who.policy
        return self.access.limiter.slot(who.name, policy.calls_per_minute, policy.max_concurrent)
