"""What ``cartograph serve`` is told, as one value: upstreams, routing, limits, transport, access.

Kept free of MCP and the index on purpose: the CLI builds :class:`ServeSettings` from its options
(and shows :data:`MODES` in ``--help``) without loading them; :mod:`cartograph.proxy.app` turns
it into a serving proxy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from cartograph.index.names import Method

if TYPE_CHECKING:  # the gateway loads MCP; its modes are only a type here
    from cartograph.gateway.base import GatewayMode

ServeTransport = Literal["stdio", "http"]

MODES: tuple[GatewayMode, ...] = ("pooled", "one-shot")
TRANSPORTS: tuple[ServeTransport, ...] = ("stdio", "http")


@dataclass(frozen=True)
class ServeSettings:
    """Everything a serving proxy is built from, beyond its workspace.

    ``config`` None means the mcp.json recorded in the workspace by bootstrap; ``per_client``
    adds to the stateful servers recorded there.
    """

    config: str | None = None
    mode: GatewayMode = "pooled"
    per_client: frozenset[str] = frozenset()
    call_timeout: float = 60.0
    start_timeout: float = 30.0
    idle_timeout: float = 300.0
    max_in_flight: int = 8
    method: Method | None = None
    transport: ServeTransport = "stdio"
    host: str = "127.0.0.1"
    port: int = 8765
    insecure_open: bool = False
    client: str | None = None
    policy_file: str | None = None
    auth_issuer: str | None = None
    auth_jwks: str | None = None
    auth_audience: str | None = None
    resource_url: str | None = None
    otlp_endpoint: str | None = None  # None: $OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, if set
