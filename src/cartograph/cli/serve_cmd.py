"""`cartograph serve`: run the proxy (discover / status / call) over stdio or streamable HTTP.

Nothing but MCP goes to stdout (it carries the stdio transport); logs go to stderr.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
import click

from cartograph.cli.common import AppContext, handle_errors, pass_app
from cartograph.config import load_config
from cartograph.errors import ConfigError
from cartograph.gateway.base import Limits
from cartograph.gateway.connector import fleet_connector
from cartograph.proxy.core import MODES, Proxy, ProxySettings
from cartograph.proxy.server import serve_http, serve_stdio
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
@pass_app
@handle_errors
def serve(
    app: AppContext,
    transport: str,
    host: str,
    port: int,
    config_path: str | None,
    mode: str,
    per_client: tuple[str, ...],
    call_timeout: float,
    start_timeout: float,
    idle_timeout: float,
    max_in_flight: int,
    method: str | None,
) -> None:
    """Serve the proxy: three tools (discover, status, call) in front of every upstream."""
    ws = app.workspace
    settings = read_settings(ws)
    chosen = config_path or settings.get("mcp_config")
    if not chosen:
        raise ConfigError(
            "no mcp.json to reach the upstreams: pass --config FILE, or run "
            "`cartograph bootstrap --config FILE` first",
            file=str(ws.config_file),
        )
    fleet = load_config(Path(str(chosen)))
    stateful = set(per_client)
    recorded = settings.get("per_client")
    if isinstance(recorded, list):
        stateful |= {str(s) for s in recorded}
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
    if transport == "stdio":
        anyio.run(serve_stdio, proxy)
    else:
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(lambda: serve_http(proxy, host, port))
