"""The proxy's three tools as MCP request handlers: tools/list (the discover description that
says what is behind the proxy) and tools/call (discover, call, status), for one server.

This is the tool-call boundary: domain errors become MCP tool errors (``isError``) with their
message, and anything unexpected is logged and masked so the proxy keeps serving. With
``access``, every call runs as a :class:`Caller` (the one the HTTP middleware attached to the
request, else the stdio ``caller``) under its policy and limits; without it, no policy and no
limits.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
from mcp import types

from cartograph.access.guard import Access, Caller
from cartograph.access.http import caller_of
from cartograph.errors import AuthError, CartographError, RateLimited
from cartograph.proxy.brief import ListWatch, discover_description, proxy_brief
from cartograph.proxy.clients import Clients, Ctx, connection_of, is_modern
from cartograph.proxy.core import Proxy
from cartograph.proxy.progress import with_progress
from cartograph.proxy.tools import TOOLS, check_input, lenient
from cartograph.upstream.chain import meta_chain

logger = logging.getLogger(__name__)

MASKED = (
    "internal error in the proxy (details are in its log); it keeps serving: retry, or use "
    "another tool"
)


class ToolHandlers:
    """tools/list and tools/call of one front server over ``proxy``."""

    def __init__(self, proxy: Proxy, access: Access | None, caller: Caller | None) -> None:
        self.proxy = proxy
        self.access = access
        self.caller = caller
        self.clients = Clients(proxy)
        self.watch = ListWatch()
        proxy.list_watches.append(self.watch)

    def current_caller(self, ctx: Ctx) -> Caller | None:
        """Who this request runs as (``None``: no access control on this server)."""
        if self.access is None:
            return None
        found = caller_of(ctx.request) or self.caller
        if found is None:
            raise AuthError("no authenticated client for this request")
        return found

    async def list_tools(
        self, ctx: Ctx, _: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if not is_modern(ctx):  # the 2026-07-28 era has no connection to tell
            self.watch.remember(connection_of(ctx))
        brief = await anyio.to_thread.run_sync(proxy_brief, self.proxy, self.current_caller(ctx))
        described = TOOLS[0].model_copy(update={"description": discover_description(brief)})
        return types.ListToolsResult(tools=[described, *TOOLS[1:]])

    async def call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        arguments = lenient(name, params.arguments or {})
        problems = check_input(name, arguments)
        if problems:
            return _error(f"{name}: invalid input: {'; '.join(problems)}")
        who: Caller | None = None
        try:
            who = self.current_caller(ctx)
            if who is None or self.access is None:
                return await self._dispatch(ctx, name, arguments, None)
            policy = who.policy
            with self.access.limiter.slot(who.name, policy.calls_per_minute, policy.max_concurrent):
                return await self._dispatch(ctx, name, arguments, who)
        except RateLimited as exc:
            self.proxy.metrics.rate_limited.inc(kind="tool")
            self.proxy.audit.write("rate-limited", client=who.name if who else None, tool=name)
            return _error(str(exc))
        except CartographError as exc:
            return _error(str(exc))
        except Exception:  # boundary: log and mask the unexpected
            logger.exception("unexpected error in %s", name)
            return _error(MASKED)

    async def _dispatch(
        self, ctx: Ctx, name: str, arguments: dict[str, Any], who: Caller | None
    ) -> types.CallToolResult:
        proxy = self.proxy
        if name == "discover":
            task, k = str(arguments["task"]), int(arguments.get("k", 5))
            client, keywords = self.clients.key(ctx, who), arguments.get("keywords")
            answer = await proxy.discover(task, k, caller=who, client=client, keywords=keywords)
            return _json(answer.to_json())
        if name == "status":
            return _json(proxy.status(who).to_json())
        if name == "call":
            return await self._call(ctx, arguments, who)
        return _error(f"unknown tool {name!r}; this server has discover, call and status")

    async def _call(
        self, ctx: Ctx, arguments: dict[str, Any], who: Caller | None
    ) -> types.CallToolResult:
        meta, client = ctx.meta or {}, self.clients.key(ctx, who)
        # SDK 2 hands _meta over by field name (progress_token); a raw dict keeps the alias
        token = meta.get("progress_token", meta.get("progressToken"))
        return await with_progress(
            ctx.session,
            token,
            ctx.request_id or "",
            lambda progress: self.proxy.call(
                str(arguments["server"]),
                str(arguments["tool"]),
                arguments.get("arguments") or {},
                client=client,
                caller=who,
                chain=meta_chain(meta),
                progress=progress,
            ),
        )


def _json(data: Any) -> types.CallToolResult:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
