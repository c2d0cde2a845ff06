"""The proxy's three operations, independent of MCP: discover, status and call (and, in
:mod:`cartograph.proxy.federated`, the upstreams' prompts and resources).

:class:`Proxy` wires the verified cards, the drift guard and quarantine, the resolver, the
audit log and a gateway together. The MCP server in :mod:`cartograph.proxy.server` is a thin
shell over it. Domain errors propagate as :class:`~cartograph.errors.CartographError`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import types
from mcp.shared.dispatcher import ProgressFnT

from cartograph import heap
from cartograph.access.guard import Caller
from cartograph.access.policy import ALLOW_ALL
from cartograph.errors import (
    AccessDenied,
    CartographError,
    ConfigError,
    GatewayError,
    LoopRefused,
    ToolNotFound,
)
from cartograph.gateway.base import Connector, GatewayMode, Limits
from cartograph.gateway.connector import not_configured
from cartograph.gateway.drift import Quarantine
from cartograph.gateway.oneshot import OneShotGateway
from cartograph.gateway.pool import PooledGateway
from cartograph.index.answer import DiscoverAnswer
from cartograph.index.names import Method
from cartograph.proxy.brief import ListWatch, watch_catalog
from cartograph.proxy.catalog import CardCatalog, CardGuard
from cartograph.proxy.federated import Federation
from cartograph.proxy.health import publish_health
from cartograph.proxy.limits import (
    BoundedAudit,
    InputLimits,
    check_arguments,
    check_k,
    check_keywords,
    check_names,
    check_task,
    text_for_audit,
)
from cartograph.proxy.offers import OfferBook, new_discover_id
from cartograph.proxy.resolver import Opener, Resolver
from cartograph.proxy.settings import MODES
from cartograph.proxy.status import StatusAnswer, build_status
from cartograph.proxy.subscriptions import Subscriptions
from cartograph.proxy.telemetry import UNKNOWN_SERVER, ProxyMetrics
from cartograph.proxy.validate import validate_arguments
from cartograph.storage import Store, open_store
from cartograph.tracing import span
from cartograph.upstream.chain import call_meta, loop_problem, workspace_id
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProxySettings:
    """How the proxy routes calls and ranks tools."""

    mode: GatewayMode = "pooled"
    limits: Limits = field(default_factory=Limits)
    per_client: frozenset[str] = frozenset()
    method: Method | None = None
    config_path: str | None = None
    check_drift_one_shot: bool = True
    inputs: InputLimits = field(default_factory=InputLimits)
    publish_health: bool = True  # on the store's health board (proxy.health); off: the console


class Proxy:
    """discover / status / call over one workspace's store and one gateway.

    ``store`` is the workspace's store (:func:`~cartograph.storage.open_store`), opened here
    when the caller does not hand one in.
    """

    def __init__(
        self,
        ws: Workspace,
        connector: Connector,
        settings: ProxySettings | None = None,
        *,
        opener: Opener | None = None,
        configured: set[str] | None = None,
        store: Store | None = None,
    ) -> None:
        self.ws = ws
        self.settings = settings or ProxySettings()
        if self.settings.mode not in MODES:
            raise ConfigError(f"gateway mode must be one of {', '.join(MODES)}")
        # the workspace files, or the store shared by every replica
        self.store = store = store if store is not None else open_store(ws)
        self.audit = BoundedAudit(store.audit_log(), self.settings.inputs)
        self.metrics = ProxyMetrics()
        self.instance = workspace_id(ws)  # for loop refusal (cartograph.upstream.chain)
        self.offers = OfferBook()
        self.quarantine = Quarantine(store.quarantine_ledger())
        self.quarantine.listeners.append(self._drift_event)
        self.catalog = CardCatalog(ws, store)
        self.guard = CardGuard(self.catalog, self.quarantine)
        self.resolver = Resolver(
            ws, self.catalog, self.guard, opener=opener, method=self.settings.method
        )
        self.configured = configured
        self.started = time.time()
        self.endpoint: str | None = None  # where it serves ("stdio", the MCP URL): for health
        self.federation = Federation(self)  # the upstreams' prompts and resources
        self.list_watches: list[ListWatch] = []  # one per MCP server object (proxy/brief.py)
        self.briefs: dict[tuple[Any, ...], str] = {}  # discover's catalog paragraph, by policy
        self.subscriptions = Subscriptions(self)
        limits = self.settings.limits
        self.gateway: PooledGateway | OneShotGateway
        if self.settings.mode == "pooled":
            self.gateway = PooledGateway(
                connector,
                limits=limits,
                guard=self.guard,
                per_client=self.settings.per_client,
                events=self.subscriptions,
            )
        else:
            self.gateway = OneShotGateway(
                connector,
                limits=limits,
                guard=self.guard,
                check_drift=self.settings.check_drift_one_shot,
            )
        self._rank_limiter = anyio.CapacityLimiter(2)

    def _drift_event(self, record: dict[str, Any]) -> None:
        fields = dict(record)
        self.audit.write(str(fields.pop("event")), **fields)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Proxy]:
        """Keep the gateway's sessions alive for the duration of the block."""
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._warm_index)
                tg.start_soon(watch_catalog, self)
                if self.settings.publish_health:
                    tg.start_soon(publish_health, self)
                async with self.gateway:
                    yield self
                tg.cancel_scope.cancel()
        finally:
            self.resolver.closing.set()
            self.audit.close()

    async def release_client(self, client: str) -> None:
        """A client disconnected: close the upstream sessions that were its own."""
        self.offers.forget(client)
        self.subscriptions.release(client)
        if isinstance(self.gateway, PooledGateway):
            await self.gateway.release_client(client)

    async def _warm_index(self) -> None:
        """Open (or rebuild) the retrieval index off the event loop before the first discover."""
        await anyio.to_thread.run_sync(
            self.resolver.searcher, limiter=self._rank_limiter, abandon_on_cancel=True
        )
        heap.release()  # verifying the cards again and loading the index freed tens of MB

    # -- discover -----------------------------------------------------------------------------

    async def discover(
        self,
        task: str,
        k: int = 5,
        *,
        caller: Caller | None = None,
        client: str | None = None,
        keywords: Any = None,
    ) -> DiscoverAnswer:
        """The top-k tools for ``task`` among the configured servers that ``caller``'s policy
        lets it see; ``keywords`` (product names, identifiers) weigh in the lexical channel;
        ``client`` (the MCP session) remembers what was offered, for the audit.
        Refused tasks are audited too (``outcome``), as a bounded excerpt and a hash."""
        discover_id = new_discover_id()
        with span("cartograph discover", **{"cartograph.discover_id": discover_id}) as current:
            answer = await self._counted_discover(discover_id, task, k, caller, client, keywords)
            if current is not None:
                top = answer.tools[0] if answer.tools else None
                current.set_attribute("cartograph.results", len(answer.tools))
                if top is not None:
                    current.set_attribute("cartograph.top", f"{top.server}/{top.tool}")
            return answer

    async def _counted_discover(
        self,
        discover_id: str,
        task: str,
        k: int,
        caller: Caller | None,
        client: str | None,
        keywords: Any,
    ) -> DiscoverAnswer:
        """Discover, timed, counted and audited under ``discover_id``."""
        limits = self.settings.inputs
        started = time.perf_counter()
        record: dict[str, Any] = {"client": caller.name if caller else None, "session": client}
        try:
            check_task(task, limits)
            record["k"] = k = check_k(k, limits)
            words = check_keywords(keywords)
            if words:
                record["keywords"] = list(words)
            task = task.strip()
            if not task:
                raise GatewayError("discover needs a task in plain words, e.g. 'read a file'")
            ranking = await anyio.to_thread.run_sync(
                self.resolver.rank, task, k, self._allow(caller), words, limiter=self._rank_limiter
            )
            answer = self.resolver.render(ranking)
        except CartographError as exc:
            self.audit.write(
                "discover",
                id=discover_id,
                **record,
                query=text_for_audit(task, limits),
                outcome=type(exc).__name__,
            )
            self.metrics.discover_seconds.observe(
                time.perf_counter() - started, outcome=type(exc).__name__
            )
            raise
        self.metrics.discover_seconds.observe(time.perf_counter() - started, outcome="ok")
        self.offers.record(client, discover_id, [(h.server, h.tool) for h in ranking.results])
        self.audit.write(
            "discover",
            id=discover_id,
            **record,
            query=text_for_audit(task, limits),
            method=ranking.method,
            results=self.resolver.audit_fields(ranking),
        )
        return answer

    def _allow(self, caller: Caller | None) -> Callable[[str, str], bool] | None:
        """What discover may offer: tools of configured servers that the caller may see."""
        policy = caller.policy if caller is not None and caller.policy != ALLOW_ALL else None
        configured = self.configured
        if policy is None and configured is None:
            return None

        def allow(server: str, tool: str) -> bool:
            if configured is not None and server not in configured:
                return False
            return policy is None or policy.permits(server, tool)

        return allow

    # -- status -------------------------------------------------------------------------------

    def status(self, caller: Caller | None = None) -> StatusAnswer:
        self.catalog.refresh()
        return build_status(self, caller.policy if caller else None)

    # -- call ---------------------------------------------------------------------------------

    async def call(
        self,
        server: str,
        tool: str,
        arguments: Any,
        *,
        client: str | None = None,
        caller: Caller | None = None,
        chain: tuple[str, ...] = (),
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        """Run ``server``/``tool``; ``client`` keys per-client sessions, ``caller`` is checked,
        ``chain`` names the Cartograph proxies the request passed before this one. The
        upstream's result comes back whole, as it sent it; ``progress`` hears its progress
        notifications for the call. Cancelling the caller cancels the upstream's request."""
        where = {"cartograph.server": self._server_label(server), "cartograph.tool": tool}
        with span("cartograph call", **where) as current:
            return await self._counted_call(
                server, tool, arguments, client, caller, chain, progress, current
            )

    async def _counted_call(
        self,
        server: str,
        tool: str,
        arguments: Any,
        client: str | None,
        caller: Caller | None,
        chain: tuple[str, ...],
        progress: ProgressFnT | None,
        current: Any,
    ) -> types.CallToolResult:
        """The call, timed, counted and audited (``current``: its span, or None)."""
        started = time.perf_counter()
        outcome = "ok"
        try:
            self._admit_call(server, tool, arguments, caller, chain)
            result = await self.gateway.call(
                server,
                tool,
                arguments,
                client=client,
                meta=call_meta((*chain, self.instance)),
                progress=progress,
            )
            if result.is_error:
                outcome = "tool-error"
            return result
        except Exception as exc:
            outcome = type(exc).__name__
            raise
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        finally:
            elapsed = time.perf_counter() - started
            if current is not None:
                current.set_attribute("cartograph.outcome", outcome)
            self.metrics.call_seconds.observe(
                elapsed, server=self._server_label(server), outcome=outcome
            )
            self.audit.write(
                "call",
                server=server,
                tool=tool,
                outcome=outcome,
                ms=round(elapsed * 1000, 2),
                client=caller.name if caller else None,
                session=client,
                **self._offer_fields(client, server, tool),
            )

    def _admit_call(
        self,
        server: str,
        tool: str,
        arguments: Any,
        caller: Caller | None,
        chain: tuple[str, ...],
    ) -> None:
        """Every check before a call goes upstream: names, loops, policy, arguments (size and
        signed schema), the drift guard, the config; raises the refusal."""
        check_names(server, tool)  # before the names go into any error message
        problem = loop_problem(chain, self.instance)
        if problem is not None:
            raise LoopRefused(f"{server}/{tool}: refused: {problem}")
        hidden = ToolNotFound(f"no tool {tool!r} on server {server!r} for you; use discover")
        if caller is not None and not caller.policy.permits(server, tool):
            raise AccessDenied(str(hidden))  # the same text as for a missing tool
        check_arguments(server, tool, arguments, self.settings.inputs)
        self.catalog.refresh()  # the one refresh of this call; the guard reads what it loaded
        try:
            entry = self.catalog.entry(server, tool)
        except ToolNotFound:
            if caller is not None and caller.policy != ALLOW_ALL:
                raise hidden from None  # no list of other servers for a restricted client
            raise
        self.guard.admit(server, tool)
        validate_arguments(
            server, tool, entry.input_schema, arguments, schema_key=entry.input_schema_hash
        )
        if self.configured is not None and server not in self.configured:
            raise not_configured(server, self.settings.config_path)

    def _server_label(self, server: str) -> str:
        """``server`` for a configured, carded server; else one label for all the others."""
        configured = self.configured is None or server in self.configured
        return server if configured and server in self.catalog.cards else UNKNOWN_SERVER

    def _offer_fields(self, client: str | None, server: str, tool: str) -> dict[str, Any]:
        """Which discover answer of this session offered the tool, at which rank, and the
        version of the signed card the call was checked against (the console links both)."""
        offer = self.offers.lookup(client, server, tool)
        fields: dict[str, Any] = (
            {"undiscovered": True}
            if offer is None
            else {"offered_by": offer.discover_id, "rank": offer.rank}
        )
        version = self.catalog.card_version(server)  # None for a server without a card
        if version is not None:
            fields["card_version"] = version
        return fields
