"""`cartograph serve`: run the proxy (discover / status / call) over stdio or streamable HTTP.

Nothing but MCP goes to stdout (it carries the stdio transport); logs go to stderr. Over HTTP
every request needs an API key or a JWT unless ``--insecure-open`` (loopback only) is given;
over stdio the client runs under the policy named by ``--client`` or ``--policy``. The options
become one :class:`~cartograph.proxy.settings.ServeSettings`; :mod:`cartograph.proxy.app` builds
and runs the proxy from it.
"""

from __future__ import annotations

from typing import Any

import click

from cartograph.cli.common import AppContext, config_option, handle_errors, pass_app, policy_option
from cartograph.proxy.settings import MODES, TRANSPORTS, ServeSettings

_DEFAULT = ServeSettings()


@click.command()
@click.option(
    "--transport", type=click.Choice(TRANSPORTS), default=_DEFAULT.transport, show_default=True
)
@click.option("--host", default=_DEFAULT.host, show_default=True, help="HTTP bind address.")
@click.option(
    "--port",
    type=int,
    default=_DEFAULT.port,
    show_default=True,
    help="HTTP port (0: pick a free one).",
)
@config_option(
    "mcp.json that says how to reach each upstream. Default: the one recorded in the "
    "workspace by bootstrap."
)
@click.option(
    "--gateway",
    "mode",
    type=click.Choice(MODES),
    default=_DEFAULT.mode,
    show_default=True,
    help="pooled: one persistent session per upstream; one-shot: a fresh one per call.",
)
@click.option(
    "--per-client",
    multiple=True,
    metavar="SERVER",
    help="Stateful upstream: give each MCP client its own session with it. Repeatable.",
)
@click.option(
    "--call-timeout", type=float, default=_DEFAULT.call_timeout, show_default=True, help="Seconds."
)
@click.option(
    "--start-timeout",
    type=float,
    default=_DEFAULT.start_timeout,
    show_default=True,
    help="Seconds.",
)
@click.option(
    "--idle-timeout",
    type=float,
    default=_DEFAULT.idle_timeout,
    show_default=True,
    help="Close a pooled session after this many idle seconds.",
)
@click.option(
    "--max-in-flight",
    type=int,
    default=_DEFAULT.max_in_flight,
    show_default=True,
    help="Calls at once per session.",
)
@click.option("--method", default=None, help="Ranking method (default: the index's default).")
@click.option(
    "--insecure-open",
    is_flag=True,
    help="HTTP without authentication (loopback hosts only; for local development).",
)
@click.option(
    "--client",
    metavar="NAME",
    help="stdio: run as registered client NAME, under its policy and limits.",
)
@policy_option(
    "Policy JSON: for the stdio client, for --insecure-open, or for JWT clients that are "
    "not registered by name."
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
@click.option(
    "--otlp-endpoint",
    metavar="URL",
    help="Export OpenTelemetry traces over OTLP/HTTP to URL (http://collector:4318; needs the "
    "otel extra). Default: $OTEL_EXPORTER_OTLP_ENDPOINT, if set; else no traces.",
)
@click.option(
    "--no-console",
    is_flag=True,
    help="HTTP: do not serve the operator's console at /console.",
)
@pass_app
@handle_errors
def serve(
    app: AppContext,
    config_path: str | None,
    per_client: tuple[str, ...],
    no_console: bool,
    **options: Any,
) -> None:
    """Serve the proxy: three tools (discover, status, call) in front of every upstream.

    Over HTTP also the operator's console at /console and Prometheus metrics at /metrics."""
    from cartograph.proxy.app import build_app, run

    settings = ServeSettings(config=config_path, per_client=frozenset(per_client), **options)
    served = build_app(app.workspace, settings)
    if served.access is not None and settings.transport == "http" and not no_console:
        import dataclasses

        from cartograph.console import build_console

        secure = (served.resource or "").startswith("https://")
        console = build_console(served.proxy, served.access, secure=secure)
        served = dataclasses.replace(served, mounts={"/console": console})
    run(served)
