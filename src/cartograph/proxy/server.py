"""The MCP server an agent connects to: exactly three tools (:mod:`cartograph.proxy.handlers`),
over stdio or streamable HTTP, the upstreams' prompts and resources under server-qualified
names (:mod:`cartograph.proxy.front`), and ``subscriptions/listen`` for 2026-07-28 clients
(:mod:`cartograph.proxy.listen`).

A thin shell over :class:`~cartograph.proxy.core.Proxy`: this module builds the server and
serves it on a transport. At the tool-call boundary domain errors become MCP tool errors
(``isError``) with their message, timeouts already say "retry", and anything unexpected is
logged and masked so the proxy keeps serving. An upstream's
result of ``call`` is returned whole, as the upstream sent it (``content`` of every type,
``structuredContent``, ``isError``, ``_meta``); the SDK checks a result against an output schema
only for a tool it lists with one, and ``call`` has none. Its progress reaches the agent when
the agent asked for progress (:mod:`cartograph.proxy.progress`); the agent's cancellation
reaches the upstream (:func:`cartograph.gateway.base.forward_call`).
"""

from __future__ import annotations

import logging
import signal
import socket
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import anyio.abc
import uvicorn
from mcp import types
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from cartograph.access.guard import Access, Caller
from cartograph.access.http import CALLER_KEY, AuthMiddleware
from cartograph.metrics import CONTENT_TYPE
from cartograph.proxy.core import Proxy
from cartograph.proxy.front import FrontServer, answering, register_federation
from cartograph.proxy.handlers import ToolHandlers
from cartograph.proxy.http_limit import BodyLimit
from cartograph.proxy.listen import Listens
from cartograph.proxy.stdio import bounded_stdio_server
from cartograph.proxy.telemetry import metrics_text

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Many tools sit behind this server. Use discover with your task to get the right tools and "
    "their input schemas, then call one with server, tool and arguments."
)


def _version() -> str:
    try:
        return version("cartograph")
    except PackageNotFoundError:
        return "0"


CACHE_HINTS: dict[CacheableMethod, CacheHint] = {
    method: CacheHint(ttl_ms=30_000, scope="private")
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
}
"""On the 2026-07-28 era, how long a client may reuse a list: a client that holds no
``subscriptions/listen`` stream hears of no list change, so 30 s bounds how stale its view of
the catalog gets. Private: what is listed depends on the caller's policy."""


def build_server(
    proxy: Proxy, access: Access | None = None, caller: Caller | None = None
) -> FrontServer:
    """The low-level MCP server exposing discover, call and status for ``proxy`` (and the
    upstreams' prompts and resources), to clients of both protocol eras.

    With ``access``, every request runs as a :class:`Caller` (the one the HTTP middleware
    attached to the request, else ``caller``) under its policy and limits; without it, as
    before: no policy, no limits.
    """
    tools = ToolHandlers(proxy, access, caller)
    server = FrontServer(
        "cartograph",
        version=_version(),
        instructions=INSTRUCTIONS,
        cache_hints=CACHE_HINTS,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )
    server.subscribe = proxy.settings.mode == "pooled"
    register_federation(server, proxy, access, tools.current_caller, tools.clients)
    listens = Listens(proxy, tools.watch, access, tools.current_caller, tools.clients)
    server.add_request_handler(
        "subscriptions/listen",
        types.SubscriptionsListenRequestParams,
        answering(proxy, listens.listen, True),
    )
    server.listens = listens
    return server


async def serve_stdio(proxy: Proxy, caller: Caller | None = None) -> None:
    """Serve one client on this process's stdin/stdout until it disconnects or a signal;
    with ``caller``, under its policy and limits."""
    server = build_server(proxy, Access() if caller else None, caller)
    limit = proxy.settings.inputs.max_message_bytes
    proxy.endpoint = "stdio"
    async with (
        proxy.running(),
        bounded_stdio_server(limit) as (read, write),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_cancel_on_signal, tg.cancel_scope)
        await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def _cancel_on_signal(scope: anyio.CancelScope) -> None:
    """SIGTERM/SIGINT end serving through cancellation, so every upstream is closed and reaped
    on the way out (the default handler would leave them running)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            logger.info("signal %s: shutting down", signum)
            scope.cancel()
            return


class QuietUvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: it re-raises a caught SIGTERM after serving,
    which would kill the process before the gateway closes its upstreams."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket for uvicorn. Made with ``IPPROTO_TCP`` named: asyncio sets
    ``TCP_NODELAY`` on an accepted connection only when its socket says so, and without it a
    response written in two parts (uvicorn: head, then body) waited for the client's delayed ACK,
    about 40 ms a request on Linux (docs/console.md, Speed)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(512)
    sock.set_inheritable(True)
    return sock


def http_app(
    proxy: Proxy,
    host: str,
    access: Access | None = None,
    resource: str | None = None,
    mounts: Mapping[str, Any] | None = None,
) -> tuple[Any, StreamableHTTPSessionManager]:
    """An ASGI app serving MCP at ``/mcp`` and its session manager (run it around serving).

    With ``access``, requests pass :class:`~cartograph.access.http.AuthMiddleware` first
    (``resource`` is this server's public ``/mcp`` URL, for the protected-resource metadata).
    ``mounts`` (path prefix -> ASGI app, e.g. the console at ``/console``) are served before
    the bearer check: such an app authenticates its own users (the console by login session).
    """
    loopback = host in ("127.0.0.1", "localhost", "::1")
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=loopback,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    manager = StreamableHTTPSessionManager(
        app=build_server(proxy, access),
        security_settings=security,
        session_idle_timeout=3600,
        json_response=True,  # plain JSON answers cost less; subscriptions/listen streams SSE
    )

    async def app(scope: Any, receive: Any, send: Any) -> None:
        path = scope["path"].rstrip("/") if scope["type"] == "http" else ""
        if path == "/mcp":
            await manager.handle_request(scope, receive, send)
            return
        if path == "/metrics":
            await _metrics(proxy, scope, send)
            return
        if scope["type"] == "http":
            body = b"not found: MCP is served at /mcp, metrics at /metrics\n"
            await send(
                {
                    "type": "http.response.start",
                    "status": 404,
                    "headers": [(b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": body})

    limit = proxy.settings.inputs.max_message_bytes
    front: Any = BodyLimit(app, limit)
    if access is not None:
        counts = proxy.metrics
        front = AuthMiddleware(
            front,
            access,
            resource or f"http://{host}/mcp",
            unauthorized=counts.auth_failures,
            limited=counts.rate_limited,
        )
    return _with_mounts(front, {k: BodyLimit(v, limit) for k, v in (mounts or {}).items()}), manager


def _with_mounts(front: Any, mounts: Mapping[str, Any]) -> Any:
    if not mounts:
        return front

    async def dispatch(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        for prefix, mounted in mounts.items():
            if path == prefix or path.startswith(prefix + "/"):
                await mounted(scope, receive, send)
                return
        await front(scope, receive, send)

    return dispatch


async def _metrics(proxy: Proxy, scope: Any, send: Any) -> None:
    """``GET /metrics``: the Prometheus text, as the authenticated client may see it."""
    if scope.get("method") not in ("GET", "HEAD"):
        status, body, kind = 405, b"/metrics answers GET\n", b"text/plain"
    else:
        caller = scope.get("state", {}).get(CALLER_KEY)
        text = metrics_text(proxy, caller)  # on the loop, as status is: it reads the gateway
        status, body, kind = 200, text.encode(), CONTENT_TYPE.encode()
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send(
        {"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body}
    )


async def serve_http(
    proxy: Proxy,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    sock: socket.socket | None = None,
    ready: anyio.Event | None = None,
    access: Access | None = None,
    resource: str | None = None,
    mounts: Mapping[str, Any] | None = None,
) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until cancelled; with ``access``,
    only to clients it authenticates; ``mounts`` beside it (see :func:`http_app`)."""
    sock = sock or bind_socket(host, port)
    bound = sock.getsockname()[1]
    where = f"[{host}]" if ":" in host else host
    url = resource or f"http://{where}:{bound}/mcp"
    app, manager = http_app(proxy, host, access, url, mounts)
    # A client's open event stream (GET /mcp) ends only when its MCP session does: on SIGTERM
    # the sessions are closed first, then uvicorn finishes; 1 s more is the backstop.
    config = uvicorn.Config(
        app, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=1
    )
    web = QuietUvicorn(config)
    url = f"http://{host}:{bound}/mcp"
    proxy.endpoint = url
    logger.info("serving MCP over streamable HTTP at %s", url)
    print(f"cartograph: serving MCP at {url}", file=sys.stderr, flush=True)
    for prefix in mounts or {}:
        print(f"cartograph: {prefix.strip('/')} at http://{host}:{bound}{prefix}", file=sys.stderr)
    stopping = anyio.Event()

    async def sessions(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        async with manager.run():  # entered and left in this task, as the SDK needs
            task_status.started()
            await stopping.wait()

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                logger.info("signal %s: shutting down", signum)
                if isinstance(manager.app, FrontServer) and manager.app.listens is not None:
                    manager.app.listens.close()  # listen streams end with their result
                stopping.set()
                web.should_exit = True
                return

    async with proxy.running(), anyio.create_task_group() as tg:
        await tg.start(sessions)
        tg.start_soon(stop_on_signal)
        if ready is not None:
            ready.set()
        try:
            await web.serve(sockets=[sock])
        finally:
            stopping.set()
        tg.cancel_scope.cancel()
