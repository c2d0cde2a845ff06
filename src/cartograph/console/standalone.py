"""``cartograph console``: the operator's console served alone, without an MCP endpoint.

For a fleet of replicas (several ``cartograph serve`` processes on one home, or on one
PostgreSQL store) the console runs as its own process: it reads what the replicas share (the
verified cards, the index, the quarantine, the audit trail) and what each publishes on the
store's health board (:mod:`cartograph.storage.health`), and never reaches an upstream itself:
its proxy's connector refuses, so the servers page shows the replicas' sessions, not its own.
Logins take the same API keys and JWTs as ``serve --transport http`` (the workspace's clients).
"""

from __future__ import annotations

import logging
import signal
import socket
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import uvicorn

from cartograph.access import Access
from cartograph.config import load_config
from cartograph.console.app import build_console
from cartograph.errors import UpstreamError
from cartograph.proxy.core import Proxy, ProxySettings
from cartograph.proxy.http_limit import BodyLimit
from cartograph.proxy.server import QuietUvicorn
from cartograph.workspace import Workspace, read_settings

logger = logging.getLogger(__name__)


def _no_upstreams(server: str, **_: Any) -> AbstractAsyncContextManager[Any]:
    raise UpstreamError(server, "the standalone console does not reach upstreams")


def console_proxy(ws: Workspace, config: str | None = None) -> Proxy:
    """A proxy over ``ws``'s store that calls no upstream and publishes no health of its own;
    the servers of ``config`` (default: the recorded mcp.json, if any) count as configured."""
    chosen = config or read_settings(ws).mcp_config
    configured = set(load_config(Path(str(chosen))).servers) if chosen else None
    settings = ProxySettings(mode="one-shot", check_drift_one_shot=False, publish_health=False)
    return Proxy(ws, _no_upstreams, settings, configured=configured)


def console_app(proxy: Proxy, access: Access, *, secure: bool = False) -> Any:
    """The ASGI app: ``/`` redirects to ``/console``; anything else not under it is a 404."""
    console = BodyLimit(
        build_console(proxy, access, secure=secure), proxy.settings.inputs.max_message_bytes
    )

    async def app(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == "/console" or path.startswith("/console/"):
            await console(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        status, headers, body = (
            404,
            [(b"content-type", b"text/plain")],
            b"not found: the console is at /console\n",
        )
        if path in ("", "/"):
            status, headers, body = 303, [(b"location", b"/console")], b""
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


async def serve_console(
    proxy: Proxy,
    access: Access,
    sock: socket.socket,
    *,
    secure: bool = False,
    ready: anyio.Event | None = None,
) -> None:
    """Serve the console on ``sock`` until cancelled or SIGTERM/SIGINT."""
    config = uvicorn.Config(
        console_app(proxy, access, secure=secure),
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    web = QuietUvicorn(config)
    host, port = sock.getsockname()[:2]
    where = f"[{host}]" if ":" in host else host
    print(f"cartograph: console at http://{where}:{port}/console", file=sys.stderr, flush=True)

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                logger.info("signal %s: shutting down", signum)
                web.should_exit = True
                return

    async with proxy.running(), anyio.create_task_group() as tg:
        tg.start_soon(stop_on_signal)
        if ready is not None:
            ready.set()
        await web.serve(sockets=[sock])
        tg.cancel_scope.cancel()


__all__ = ["console_app", "console_proxy", "serve_console"]
