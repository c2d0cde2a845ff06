"""The app factory: a workspace and :class:`ServeSettings` in, a proxy ready to serve out.

:func:`build_proxy` reads the upstream config (given, or the one bootstrap recorded), merges the
stateful servers recorded in the workspace and wires the gateway limits into a
:class:`~cartograph.proxy.core.Proxy`. :func:`build_app` adds what the transport needs: the
stdio client's identity and policy, or the HTTP socket, the credentials it accepts and its
public URL. :func:`run` serves it until the client leaves or a signal. ``cartograph serve`` and
the tests build their proxies here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from cartograph import heap
from cartograph.access import (
    ALLOW_ALL,
    Access,
    Caller,
    ClientStore,
    JwtSettings,
    Policy,
    http_access,
    load_policy,
)
from cartograph.config import load_config
from cartograph.errors import ConfigError, UsageError
from cartograph.gateway.base import Limits
from cartograph.gateway.connector import fleet_connector
from cartograph.proxy.core import Proxy, ProxySettings
from cartograph.proxy.server import bind_socket, serve_http, serve_stdio
from cartograph.proxy.settings import ServeSettings
from cartograph.tracing import start_tracing, traces_endpoint
from cartograph.upstream.chain import outgoing_chain
from cartograph.workspace import Workspace, read_settings


@dataclass(frozen=True)
class App:
    """A proxy and how it is served: as ``caller`` over stdio, or behind ``access`` on ``sock``."""

    proxy: Proxy
    settings: ServeSettings
    caller: Caller | None = None
    access: Access | None = None
    sock: socket.socket | None = None
    resource: str | None = None
    traces: str | None = None  # the OTLP/HTTP traces URL, when spans are exported
    mounts: dict[str, Any] | None = None  # ASGI apps beside /mcp (the console), HTTP only


def limits_of(settings: ServeSettings) -> Limits:
    return Limits(
        call_timeout=settings.call_timeout,
        start_timeout=settings.start_timeout,
        idle_timeout=settings.idle_timeout,
        max_in_flight=max(1, settings.max_in_flight),
    )


def build_proxy(
    ws: Workspace, settings: ServeSettings, *, limits: Limits | None = None, opener: Any = None
) -> Proxy:
    """The proxy over ``ws``'s cards and the upstreams of the settings' (or recorded) mcp.json;
    ``limits`` replaces the ones the settings give, ``opener`` the index opener (tests)."""
    chain = outgoing_chain(ws, os.environ, "serve")  # a proxy that reaches itself stops here
    recorded = read_settings(ws)
    chosen = settings.config or recorded.mcp_config
    if not chosen:
        raise ConfigError(
            "no mcp.json to reach the upstreams: pass --config FILE, or run "
            "`cartograph bootstrap --config FILE` first",
            file=str(ws.config_file),
        )
    fleet = load_config(Path(str(chosen)))
    stateful = set(settings.per_client) | set(recorded.per_client)
    limits = limits or limits_of(settings)
    extra: dict[str, Any] = {} if opener is None else {"opener": opener}
    return Proxy(
        ws,
        fleet_connector(fleet, start_timeout=limits.start_timeout, chain=chain),
        ProxySettings(
            mode=settings.mode,
            limits=limits,
            per_client=frozenset(stateful),
            method=settings.method,
            config_path=str(fleet.path),
        ),
        configured=set(fleet.servers),
        **extra,
    )


def build_app(ws: Workspace, settings: ServeSettings) -> App:
    """The proxy and its transport's access, checked: a usage error before anything listens."""
    traces = traces_endpoint(settings.otlp_endpoint)
    proxy = build_proxy(ws, settings)
    store = ClientStore.of(ws)
    policy = load_policy(Path(settings.policy_file)) if settings.policy_file else None
    if settings.transport == "stdio":
        app = App(proxy, settings, caller=_stdio_caller(settings, store, policy))
    else:
        app = _http_app(proxy, settings, store, policy)
    return dataclasses.replace(app, traces=traces)


def _stdio_caller(
    settings: ServeSettings, store: ClientStore, policy: Policy | None
) -> Caller | None:
    if settings.client and policy is not None:
        raise UsageError("give --client NAME or --policy FILE, not both")
    if settings.client:
        return Caller(settings.client, store.policy_of(settings.client), "stdio")
    if policy is not None:
        return Caller("stdio", policy, "stdio")
    return None


def _http_app(
    proxy: Proxy, settings: ServeSettings, store: ClientStore, policy: Policy | None
) -> App:
    if settings.client:
        raise UsageError("--client is for stdio; HTTP clients are named by their credentials")
    issuer, jwks = settings.auth_issuer, settings.auth_jwks
    if (issuer or jwks) and not (issuer and jwks):
        raise UsageError("JWT authentication needs both --auth-issuer and --auth-jwks")
    host = settings.host
    try:
        sock = bind_socket(host, settings.port)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{settings.port}: {exc.strerror or exc}; pick another "
            "--port (0: any free one) or stop what holds it"
        ) from None
    where = f"[{host}]" if ":" in host else host
    resource = settings.resource_url or f"http://{where}:{sock.getsockname()[1]}/mcp"
    jwt = None
    if issuer and jwks:
        jwt = JwtSettings(issuer=issuer, audience=settings.auth_audience or resource, jwks=jwks)
    access = http_access(
        host=host,
        store=store,
        insecure_open=settings.insecure_open,
        open_policy=policy or ALLOW_ALL,
        jwt=jwt,
        jwt_policy=policy or ALLOW_ALL,
    )
    return App(proxy, settings, access=access, sock=sock, resource=resource)


def run(app: App) -> None:
    """Serve ``app`` until its stdio client disconnects, or until a signal; spans still
    batched are flushed on the way out."""
    heap.return_large_blocks()  # RSS must not keep what large inputs took
    stop_tracing = start_tracing(app.traces) if app.traces else None
    try:
        _serve(app)
    finally:
        if stop_tracing is not None:
            stop_tracing()


def _serve(app: App) -> None:
    if app.settings.transport == "stdio":
        anyio.run(serve_stdio, app.proxy, app.caller)
        return
    settings = app.settings
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(
            lambda: serve_http(
                app.proxy,
                settings.host,
                settings.port,
                sock=app.sock,
                access=app.access,
                resource=app.resource,
                mounts=app.mounts,
            )
        )


__all__ = ["App", "ServeSettings", "build_app", "build_proxy", "limits_of", "run"]
