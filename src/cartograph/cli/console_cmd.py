"""`cartograph console`: the operator's console alone, over the store every replica shares.

``serve --transport http`` already serves the console at ``/console`` beside ``/mcp``; this
command is for a fleet of replicas, where one console should show them all (their health comes
from the store's board) without being an MCP endpoint itself. Logins take the workspace's API
keys (``cartograph clients add``) or the JWTs of ``--auth-issuer``.
"""

from __future__ import annotations

import click

from cartograph.cli.common import AppContext, config_option, handle_errors, pass_app


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
@click.option(
    "--port", type=int, default=8766, show_default=True, help="Port (0: pick a free one)."
)
@config_option(
    "mcp.json whose servers count as configured. Default: the one recorded by bootstrap."
)
@click.option("--auth-issuer", metavar="URL", help="Authorization server whose JWTs are accepted.")
@click.option(
    "--auth-jwks", metavar="FILE|URL", help="The issuer's signing keys (JWKS file or URL)."
)
@click.option(
    "--auth-audience",
    metavar="URI",
    help="Audience JWTs must carry (the replicas' MCP URL). Default: --public-url.",
)
@click.option(
    "--public-url",
    metavar="URL",
    help="The console's public URL, when behind a proxy (https:// makes cookies Secure).",
)
@pass_app
@handle_errors
def console(
    app: AppContext,
    host: str,
    port: int,
    config_path: str | None,
    auth_issuer: str | None,
    auth_jwks: str | None,
    auth_audience: str | None,
    public_url: str | None,
) -> None:
    """Serve the operator's console alone: every replica's health, cards, audit and Rift.

    It reads the store the replicas share and never calls an upstream."""
    import contextlib

    import anyio

    from cartograph.access import ClientStore, JwtSettings, http_access
    from cartograph.console.standalone import console_proxy, serve_console
    from cartograph.errors import ConfigError, UsageError
    from cartograph.proxy.server import bind_socket

    if (auth_issuer or auth_jwks) and not (auth_issuer and auth_jwks):
        raise UsageError("JWT logins need both --auth-issuer and --auth-jwks")
    ws = app.workspace
    proxy = console_proxy(ws, config_path)
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port "
            "(0: any free one) or stop what holds it"
        ) from None
    jwt = None
    if auth_issuer and auth_jwks:
        audience = auth_audience or public_url
        if not audience:
            raise UsageError("JWT logins need --auth-audience: the MCP URL the tokens name")
        jwt = JwtSettings(issuer=auth_issuer, audience=audience, jwks=auth_jwks)
    access = http_access(host=host, store=ClientStore.of(ws), insecure_open=False, jwt=jwt)
    secure = (public_url or "").startswith("https://")
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(lambda: serve_console(proxy, access, sock, secure=secure))
