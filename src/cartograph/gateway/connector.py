"""The real connector: upstream sessions opened from the fleet config by name.

Sessions come from :func:`cartograph.upstream.connect.open_session`, the one transport layer
(stdio, streamable HTTP, SSE); the gateway only chooses when to open and close them. Whether a
server is in the config is checked once per call, by the proxy, before the gateway is asked;
:func:`not_configured` is the one wording of that refusal.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from cartograph.config import FleetConfig
from cartograph.errors import UpstreamError
from cartograph.gateway.base import Connection, Connector, MessageHandler
from cartograph.upstream.connect import open_session


def not_configured(server: str, config_path: object) -> UpstreamError:
    """The refusal for a server that has a signed card but no entry in the config."""
    return UpstreamError(
        server,
        f"has a signed card but no entry in {config_path or 'the config (none given)'}, so it "
        "cannot be reached; add it there, or serve with --config pointing at the file it was "
        "bootstrapped from",
    )


def fleet_connector(fleet: FleetConfig, *, start_timeout: float = 30.0) -> Connector:
    """A :class:`Connector` for every server of ``fleet``; unknown names raise UpstreamError."""

    def connect(
        server: str, *, message_handler: MessageHandler | None = None
    ) -> AbstractAsyncContextManager[Connection]:
        cfg = fleet.servers.get(server)
        if cfg is None:  # only without a proxy in front (it refuses these before the gateway)
            raise not_configured(server, fleet.path)
        return open_session(cfg, timeout=start_timeout, message_handler=message_handler)

    return connect
