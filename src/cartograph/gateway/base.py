"""The gateway's seams: how an upstream session is opened, what a gateway offers, shared limits.

A :class:`Connector` opens one upstream session (an async context manager yielding a
:class:`Connection`); gateways never know which transport is underneath. Failures an upstream
causes are mapped to :class:`~cartograph.errors.UpstreamError` in one place,
:mod:`cartograph.upstream.failures`, which both gateways use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio
from mcp import ClientSession, types
from mcp.shared.session import RequestResponder
from pydantic import ValidationError

from cartograph.errors import UpstreamError
from cartograph.upstream.connect import list_tools_raw
from cartograph.upstream.failures import protocol_error

IncomingMessage = (
    RequestResponder[types.ServerRequest, types.ClientResult] | types.ServerNotification | Exception
)
MessageHandler = Callable[[IncomingMessage], Awaitable[None]]

GatewayMode = Literal["pooled", "one-shot"]
SessionState = Literal["idle", "starting", "ready", "backoff", "closing", "closed", "one-shot"]

# Errors that mean "the connection is gone before the request went out": safe to resend.
CLOSED_ERRORS: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
)


class Connection(Protocol):
    """One live upstream session."""

    @property
    def session(self) -> ClientSession: ...

    def stderr_tail(self) -> str: ...


class Connector(Protocol):
    """Opens a session to the named upstream; ``message_handler`` sees its notifications."""

    def __call__(
        self, server: str, *, message_handler: MessageHandler | None = None
    ) -> AbstractAsyncContextManager[Connection]: ...


class Guard(Protocol):
    """The drift guard as the gateway sees it."""

    def check(self, server: str, tools: list[dict[str, Any]]) -> None:
        """Compare a server's live tools/list with its signed card (session start, list_changed)."""
        ...

    def admit(self, server: str, tool: str) -> None:
        """Raise :class:`~cartograph.errors.ToolQuarantined` if the tool is held back."""
        ...


@dataclass(frozen=True)
class Limits:
    """Timeouts and bounds shared by both gateway modes (seconds, bytes)."""

    call_timeout: float = 60.0
    start_timeout: float = 30.0
    list_timeout: float = 15.0
    max_result_bytes: int = 8 * 1024 * 1024
    max_in_flight: int = 8
    idle_timeout: float = 300.0
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    max_client_sessions: int = 32


@dataclass(frozen=True)
class SessionHealth:
    """What status shows for one upstream session slot."""

    server: str
    client: str | None
    state: SessionState
    starts: int
    crashes: int
    in_flight: int
    last_error: str | None
    idle_for: float | None
    retry_in: float | None


class Gateway(Protocol):
    """Routes one tool call to its upstream."""

    mode: GatewayMode

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        client: str | None = None,
    ) -> types.CallToolResult: ...

    def health(self) -> list[SessionHealth]: ...


async def list_live_tools(session: ClientSession, *, timeout: float) -> list[dict[str, Any]]:
    """Every tool the upstream lists now (all pages), as the JSON objects it sent."""
    with anyio.fail_after(timeout):
        return await list_tools_raw(session)


async def forward_call(
    server: str, session: ClientSession, tool: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """tools/call as a pass-through: unlike ``ClientSession.call_tool`` it neither lists the
    tools with the SDK's strict models (some publishers' schemas fail them) nor re-validates
    structured output (the agent's own client does that). A result that is not a
    CallToolResult at all becomes an :class:`UpstreamError`."""
    request = types.ClientRequest(
        types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=arguments))
    )
    try:
        return await session.send_request(request, types.CallToolResult)
    except ValidationError as exc:
        raise protocol_error(server, exc, "tools/call") from None


def result_size(result: types.CallToolResult) -> int:
    """A cheap upper estimate of the bytes a result carries (text, data, structured)."""
    size = 0
    for block in result.content:
        if isinstance(block, types.TextContent):
            size += len(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            size += len(block.data)
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            size += len(res.text) if isinstance(res, types.TextResourceContents) else len(res.blob)
        else:
            size += 256
    if result.structuredContent is not None:
        size += len(str(result.structuredContent))
    return size


def check_result_size(server: str, result: types.CallToolResult, limit: int) -> None:
    size = result_size(result)
    if size > limit:
        raise UpstreamError(
            server,
            f"the reply is {size / 1e6:.1f} MB, over the proxy's {limit / 1e6:.1f} MB limit; "
            "ask for less (narrower query, paging, a smaller range)",
        )


def backoff_delay(failures: int, limits: Limits) -> float:
    """Exponential backoff after ``failures`` consecutive failures (0 -> no wait)."""
    if failures <= 0:
        return 0.0
    return min(limits.backoff_cap, limits.backoff_base * 2 ** (failures - 1))
