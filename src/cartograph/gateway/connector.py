"""The real connector: upstream sessions opened from the fleet config by name.

Sessions come from :func:`cartograph.upstream.connect.open_session`, the one transport layer
(stdio, streamable HTTP, SSE); the gateway only chooses when to open and close them. Whether a
server is in the config is checked once per call, by the proxy, before the gateway is asked;
:func:`not_configured` is the one wording of that refusal. A stdio child learns the chain of
proxies above it (:mod:`cartograph.upstream.chain`).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from cartograph.config import FleetConfig
from cartograph.errors import UpstreamError
from cartograph.gateway.base import Connection, Connector, MessageHandler
from cartograph.upstream.chain import with_chain
from cartograph.upstream.connect import open_session


def not_configured(server: str, config_path: object) -> UpstreamError:
    """The refusal for a server that has a signed card but no entry in the config."""
    return UpstreamError(
        server,
        f"has a signed card but no entry in {config_path or 'the config (none given)'}, so it "
        "cannot be reached; add it there, or serve with --config pointing at the file it was "
        "bootstrapped from",
    )


def fleet_connector(
    fleet: FleetConfig, *, start_timeout: float = 30.0, chain: tuple[str, ...] = ()
) -> Connector:
    """A :class:`Connector` for every server of ``fleet``; unknown names raise UpstreamError.

    ``chain`` (the proxies this one is part of, itself last) goes into every stdio child's
    ``$CARTOGRAPH_CHAIN``, so a Cartograph started as an upstream can refuse a loop."""

    def connect(
        server: str, *, message_handler: MessageHandler | None = None
    ) -> AbstractAsyncContextManager[Connection]:
        cfg = fleet.servers.get(server)
        if cfg is None:  # only without a proxy in front (it refuses these before the gateway)
            raise not_configured(server, fleet.path)
        return open_session(
            with_chain(cfg, chain), timeout=start_timeout, message_handler=message_handler
        )

    return connect
