"""`cartograph serve`: run the proxy (discover / status / call) over stdio or streamable HTTP.

Nothing but MCP goes to stdout (it carries the stdio transport); logs go to stderr. Over HTTP
every request needs an API key or a JWT unless ``--insecure-open`` (loopback only) is given;
over stdio the client runs under the policy named by ``--client`` or ``--policy``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
import click

from cartograph.access import (
    ALLOW_ALL,
    Caller,
    ClientStore,
    JwtSettings,
    http_access,
    load_policy,
)
from cartograph.cli.common import AppContext, handle_errors, pass_app
from cartograph.config import load_config
from cartograph.errors import ConfigError, UsageError
from cartograph.gateway.base import GatewayMode, Limits
from cartograph.gateway.connector import fleet_connector
from cartograph.index.methods import Method
from cartograph.proxy.core import MODES, Proxy, ProxySettings
from cartograph.proxy.server import bind_socket, serve_http, serve_stdio
from cartograph.workspace import read_settings


@click.command()
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option(
    "--port", type=int, default=8765, show_default=True, help="HTTP port (0: pick a free one)."
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="mcp.json that says how to reach each upstream. Default: the one recorded in the "
    "workspace by bootstrap.",
)
@click.option(
    "--gateway",
    "mode",
    type=click.Choice(MODES),
    default="pooled",
    show_default=True,
    help="pooled: one persistent session per upstream; one-shot: a fresh one per call.",
)
@click.option(
    "--per-client",
    multiple=True,
    metavar="SERVER",
    help="Stateful upstream: give each MCP client its own session with it. Repeatable.",
)
@click.option("--call-timeout", type=float, default=60.0, show_default=True, help="Seconds.")
@click.option("--start-timeout", type=float, default=30.0, show_default=True, help="Seconds.")
@click.option(
    "--idle-timeout",
    type=float,
    default=300.0,
    show_default=True,
    help="Close a pooled session after this many idle seconds.",
)
@click.option(
    "--max-in-flight", type=int, default=8, show_default=True, help="Calls at once per session."
)
@click.option("--method", default=None, help="Ranking method (default: the index's default).")
@click.option(
    "--insecure-open",
    is_flag=True,
    help="HTTP without authentication (loopback hosts only; for local development).",
)
@click.option(
    "--client",
    "client_name",
    metavar="NAME",
    help="stdio: run as registered client NAME, under its policy and limits.",
)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False),
    help="Policy JSON: for the stdio client, for --insecure-open, or for JWT clients that are "
    "not registered by name.",
)
@click.option("--auth-issuer", metavar="URL", help="Authorization server whose JWTs are accepted.")
@click.option(
    "--auth-jwks", metavar="FILE|URL", help="The issuer's signing keys (JWKS file or URL)."
)
@click.option(
    "--auth-audience",
    metavar="URI",
    help="Audience JWTs must carry. Default: --resource-url.",
)
@click.option(
    "--resource-url",
    metavar="URL",
    help="This server's public MCP URL (protected-resource metadata). Default: http://HOST:PORT/mcp",
)
@pass_app
@handle_errors
def serve(
    app: AppContext,
    transport: str,
    host: str,
    port: int,
    config_path: str | None,
    mode: GatewayMode,
    per_client: tuple[str, ...],
    call_timeout: float,
    start_timeout: float,
    idle_timeout: float,
    max_in_flight: int,
    method: Method | None,
    insecure_open: bool,
    client_name: str | None,
    policy_file: str | None,
    auth_issuer: str | None,
    auth_jwks: str | None,
    auth_audience: str | None,
    resource_url: str | None,
) -> None:
    """Serve the proxy: three tools (discover, status, call) in front of every upstream."""
    ws = app.workspace
    settings = read_settings(ws)
    chosen = config_path or settings.mcp_config
    if not chosen:
        raise ConfigError(
            "no mcp.json to reach the upstreams: pass --config FILE, or run "
            "`cartograph bootstrap --config FILE` first",
            file=str(ws.config_file),
        )
    fleet = load_config(Path(str(chosen)))
    stateful = set(per_client) | set(settings.per_client)
    limits = Limits(
        call_timeout=call_timeout,
        start_timeout=start_timeout,
        idle_timeout=idle_timeout,
        max_in_flight=max(1, max_in_flight),
    )
    proxy = Proxy(
        ws,
        fleet_connector(fleet, start_timeout=start_timeout),
        ProxySettings(
            mode=mode,
            limits=limits,
            per_client=frozenset(stateful),
            method=method,
            config_path=str(fleet.path),
        ),
        configured=set(fleet.servers),
    )
    store = ClientStore.of(ws)
    policy = load_policy(Path(policy_file)) if policy_file else None
    if transport == "stdio":
        if client_name and policy is not None:
            raise UsageError("give --client NAME or --policy FILE, not both")
        caller = None
        if client_name:
            caller = Caller(client_name, store.policy_of(client_name), "stdio")
        elif policy is not None:
            caller = Caller("stdio", policy, "stdio")
        anyio.run(serve_stdio, proxy, caller)
        return
    if client_name:
        raise UsageError("--client is for stdio; HTTP clients are named by their credentials")
    if (auth_issuer or auth_jwks) and not (auth_issuer and auth_jwks):
        raise UsageError("JWT authentication needs both --auth-issuer and --auth-jwks")
    sock = bind_socket(host, port)
    where = f"[{host}]" if ":" in host else host
    resource_url = resource_url or f"http://{where}:{sock.getsockname()[1]}/mcp"
    jwt = None
    if auth_issuer and auth_jwks:
        jwt = JwtSettings(
            issuer=auth_issuer, audience=auth_audience or resource_url, jwks=auth_jwks
        )
    access = http_access(
        host=host,
        store=store,
        insecure_open=insecure_open,
        open_policy=policy or ALLOW_ALL,
        jwt=jwt,
        jwt_policy=policy or ALLOW_ALL,
    )
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(
            lambda: serve_http(proxy, host, port, sock=sock, access=access, resource=resource_url)
        )
