"""The prompts and resources half of the proxy's MCP front: the request handlers that answer
prompts/list, prompts/get, resources/list, resources/templates/list and resources/read from a
:class:`~cartograph.proxy.federated.Federation`, and resources/subscribe and /unsubscribe from
:class:`~cartograph.proxy.subscriptions.Subscriptions`.

Registered on the low-level server by :func:`register_federation`, which is what makes the
server advertise the ``prompts`` and ``resources`` capabilities; :class:`FrontServer` adds
``resources.subscribe`` in pooled mode (no ``listChanged``: see docs/protocol.md). A domain
error becomes a JSON-RPC error carrying its message (``-32002`` for a resource that is not
there, ``-32602`` for other refusals, ``-32603`` for an upstream's failure); anything unexpected
is logged and masked. Gets, reads and subscriptions run under the caller's rate limits, as tool
calls do.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from mcp import MCPError, types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions

from cartograph.access.guard import Access, Caller
from cartograph.envflags import env_flag
from cartograph.errors import AccessDenied, CartographError, ToolNotFound, UpstreamError
from cartograph.proxy.clients import Clients, Ctx, connection_of
from cartograph.proxy.core import Proxy

if TYPE_CHECKING:
    from cartograph.proxy.listen import Listens

logger = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002
"""The MCP specification's code for a resource that does not exist."""

MASKED = "internal error in the proxy (details are in its log); it keeps serving: retry"

Handler = Callable[[Ctx, Any], Awaitable[Any]]


def register_federation(
    server: Server[Any],
    proxy: Proxy,
    access: Access | None,
    current_caller: Callable[[Ctx], Caller | None],
    clients: Clients,
) -> None:
    """Answer the prompts and resources requests on ``server`` for ``proxy``."""
    fed, subs = proxy.federation, proxy.subscriptions

    async def list_prompts(ctx: Ctx, _: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=fed.prompts(current_caller(ctx)))

    async def list_resources(ctx: Ctx, _: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=fed.resources(current_caller(ctx)))

    async def list_templates(ctx: Ctx, _: Any) -> types.ListResourceTemplatesResult:
        found = fed.templates(current_caller(ctx))
        return types.ListResourceTemplatesResult(resource_templates=found)

    async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        who = current_caller(ctx)
        with _limited(access, who):
            return await fed.get_prompt(
                params.name, params.arguments, caller=who, client=clients.key(ctx, who)
            )

    async def read_resource(
        ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        who = current_caller(ctx)
        with _limited(access, who):
            return await fed.read_resource(
                str(params.uri), caller=who, client=clients.key(ctx, who)
            )

    async def subscribe(ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        who = current_caller(ctx)
        with _limited(access, who):
            await subs.subscribe(
                str(params.uri), connection_of(ctx), client=clients.key(ctx, who), caller=who
            )
        return types.EmptyResult()

    async def unsubscribe(ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        who = current_caller(ctx)
        await subs.unsubscribe(str(params.uri), client=clients.key(ctx, who), caller=who)
        return types.EmptyResult()

    handlers: dict[str, tuple[type[Any], Handler, bool]] = {
        "prompts/list": (types.PaginatedRequestParams, list_prompts, False),
        "prompts/get": (types.GetPromptRequestParams, get_prompt, False),
        "resources/list": (types.PaginatedRequestParams, list_resources, True),
        "resources/templates/list": (types.PaginatedRequestParams, list_templates, True),
        "resources/read": (types.ReadResourceRequestParams, read_resource, True),
        "resources/subscribe": (types.SubscribeRequestParams, subscribe, True),
        "resources/unsubscribe": (types.UnsubscribeRequestParams, unsubscribe, True),
    }
    for method, (params_type, handler, resource) in handlers.items():
        server.add_request_handler(method, params_type, answering(proxy, handler, resource))


_OTEL = "OpenTelemetryMiddleware"  # the span per request SDK 2 installs on every server
TRACING_ENV = "CARTOGRAPH_OTEL"


def tracing_wanted() -> bool:
    """Whether the front keeps SDK 2's OpenTelemetry span around each request: when a tracer
    provider is installed (``opentelemetry-instrument``, or the operator's own code) or
    ``CARTOGRAPH_OTEL=1``. Without one the span records nothing, and it cost about 0.09 ms of a
    proxied call here."""
    flag = env_flag(TRACING_ENV)
    if flag is not None:
        return flag
    from opentelemetry import trace  # the SDK's own dependency

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


class FrontServer(Server[Any]):
    """The low-level server, serving both protocol eras (the SDK's dual-era loop). On the
    2025 era it advertises ``listChanged`` for tools, prompts and resources (the proxy tells
    listed sessions when its card set changes: :mod:`cartograph.proxy.brief`); on the
    2026-07-28 era the SDK derives them from ``subscriptions/listen`` being served
    (``listens``: :mod:`cartograph.proxy.listen`). Either era gets ``resources.subscribe``
    only when ``subscribe`` is set (pooled mode)."""

    subscribe: bool = False
    listens: Listens | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not tracing_wanted():
            self.middleware = [m for m in self.middleware if type(m).__name__ != _OTEL]

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        if notification_options is None:
            notification_options = NotificationOptions(
                prompts_changed=True, resources_changed=True, tools_changed=True
            )
        return super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        caps = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        if caps.resources is not None and not self.subscribe:
            caps.resources.subscribe = False
        return caps


def _limited(access: Access | None, who: Caller | None) -> AbstractContextManager[object]:
    if access is None or who is None:
        return nullcontext()
    return access.limiter.slot(who.name, who.policy.calls_per_minute, who.policy.max_concurrent)


def answering(proxy: Proxy, handler: Handler, resource: bool) -> Handler:
    """``handler`` with domain errors as JSON-RPC errors and the unexpected masked."""

    async def answer(ctx: Ctx, params: Any) -> Any:
        try:
            return await handler(ctx, params)
        except CartographError as exc:
            if isinstance(exc, AccessDenied | ToolNotFound):
                code = RESOURCE_NOT_FOUND if resource else types.INVALID_PARAMS
            elif isinstance(exc, UpstreamError):
                code = types.INTERNAL_ERROR
            else:
                code = types.INVALID_PARAMS
            raise MCPError(code, str(exc)) from None
        except MCPError:
            raise
        except Exception:  # boundary: log and mask the unexpected
            logger.exception("unexpected error in %s", ctx.method)
            raise MCPError(types.INTERNAL_ERROR, MASKED) from None

    return answer
