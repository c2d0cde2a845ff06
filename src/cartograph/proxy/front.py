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
from typing import Any

from mcp import McpError, types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions

from cartograph.access.guard import Access, Caller
from cartograph.errors import AccessDenied, CartographError, ToolNotFound, UpstreamError
from cartograph.proxy.core import Proxy

logger = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002
"""The MCP specification's code for a resource that does not exist."""

MASKED = "internal error in the proxy (details are in its log); it keeps serving: retry"

Handler = Callable[[Any], Awaitable[types.ServerResult]]


def register_federation(
    server: Server[Any, Any],
    proxy: Proxy,
    access: Access | None,
    current_caller: Callable[[], Caller | None],
    client_key: Callable[[], str],
) -> None:
    """Answer the prompts and resources requests on ``server`` for ``proxy``."""
    fed, subs = proxy.federation, proxy.subscriptions

    async def list_prompts(_: types.ListPromptsRequest) -> types.ServerResult:
        return types.ServerResult(types.ListPromptsResult(prompts=fed.prompts(current_caller())))

    async def list_resources(_: types.ListResourcesRequest) -> types.ServerResult:
        found = fed.resources(current_caller())
        return types.ServerResult(types.ListResourcesResult(resources=found))

    async def list_templates(_: types.ListResourceTemplatesRequest) -> types.ServerResult:
        found = fed.templates(current_caller())
        return types.ServerResult(types.ListResourceTemplatesResult(resourceTemplates=found))

    async def get_prompt(req: types.GetPromptRequest) -> types.ServerResult:
        who = current_caller()
        name, arguments = req.params.name, req.params.arguments
        with _limited(access, who):
            result = await fed.get_prompt(name, arguments, caller=who, client=client_key())
        return types.ServerResult(result)

    async def read_resource(req: types.ReadResourceRequest) -> types.ServerResult:
        who = current_caller()
        with _limited(access, who):
            result = await fed.read_resource(str(req.params.uri), caller=who, client=client_key())
        return types.ServerResult(result)

    async def subscribe(req: types.SubscribeRequest) -> types.ServerResult:
        who, session = current_caller(), server.request_context.session
        with _limited(access, who):
            await subs.subscribe(str(req.params.uri), session, client=client_key(), caller=who)
        return types.ServerResult(types.EmptyResult())

    async def unsubscribe(req: types.UnsubscribeRequest) -> types.ServerResult:
        who = current_caller()
        await subs.unsubscribe(str(req.params.uri), client=client_key(), caller=who)
        return types.ServerResult(types.EmptyResult())

    handlers: dict[type, tuple[Handler, bool]] = {
        types.ListPromptsRequest: (list_prompts, False),
        types.GetPromptRequest: (get_prompt, False),
        types.ListResourcesRequest: (list_resources, True),
        types.ListResourceTemplatesRequest: (list_templates, True),
        types.ReadResourceRequest: (read_resource, True),
        types.SubscribeRequest: (subscribe, True),
        types.UnsubscribeRequest: (unsubscribe, True),
    }
    for request_type, (handler, resource) in handlers.items():
        server.request_handlers[request_type] = _answering(proxy, handler, resource)


class FrontServer(Server[Any, Any]):
    """The low-level server, advertising ``resources.subscribe`` when ``subscribe`` is set
    (the SDK's own capabilities never do)."""

    subscribe: bool = False

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """Advertise ``listChanged`` for tools, prompts and resources: the proxy tells listed
        sessions when its card set changes (:mod:`cartograph.proxy.brief`)."""
        if notification_options is None:
            notification_options = NotificationOptions(
                prompts_changed=True, resources_changed=True, tools_changed=True
            )
        return super().create_initialization_options(
            notification_options, experimental_capabilities
        )

    def get_capabilities(
        self, notification_options: NotificationOptions, experimental_capabilities: dict[str, Any]
    ) -> types.ServerCapabilities:
        caps = super().get_capabilities(notification_options, experimental_capabilities)
        if caps.resources is not None and self.subscribe:
            caps.resources.subscribe = True
        return caps


def _limited(access: Access | None, who: Caller | None) -> AbstractContextManager[object]:
    if access is None or who is None:
        return nullcontext()
    return access.limiter.slot(who.name, who.policy.calls_per_minute, who.policy.max_concurrent)


def _answering(proxy: Proxy, handler: Handler, resource: bool) -> Handler:
    """``handler`` with domain errors as JSON-RPC errors and the unexpected masked."""

    async def answer(req: Any) -> types.ServerResult:
        try:
            return await handler(req)
        except CartographError as exc:
            if isinstance(exc, AccessDenied | ToolNotFound):
                code = RESOURCE_NOT_FOUND if resource else types.INVALID_PARAMS
            elif isinstance(exc, UpstreamError):
                code = types.INTERNAL_ERROR
            else:
                code = types.INVALID_PARAMS
            raise McpError(types.ErrorData(code=code, message=str(exc))) from None
        except McpError:
            raise
        except Exception:  # boundary: log and mask the unexpected
            logger.exception("unexpected error in %s", type(req).__name__)
            raise McpError(types.ErrorData(code=types.INTERNAL_ERROR, message=MASKED)) from None

    return answer
