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
from typing import Any, Generic, Literal, Protocol, TypeVar

import anyio
from mcp import ClientSession, types
from mcp.shared.dispatcher import ProgressFnT
from pydantic import ValidationError

from cartograph.errors import UpstreamError
from cartograph.upstream.connect import list_tools_raw
from cartograph.upstream.failures import protocol_error
from cartograph.upstream.listings import advertised, list_listings, send_raw

IncomingMessage = types.ServerNotification | Exception
MessageHandler = Callable[[IncomingMessage], Awaitable[None]]

T = TypeVar("T")
GatewayMode = Literal["pooled", "one-shot"]
SessionState = Literal["idle", "starting", "ready", "backoff", "closing", "closed", "one-shot"]

LIST_CHANGED = (
    types.ToolListChangedNotification,
    types.PromptListChangedNotification,
    types.ResourceListChangedNotification,
)
"""Notifications after which the drift guard looks at the upstream's listings again."""

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

    @property
    def closed(self) -> anyio.Event:
        """Set when the upstream's side has ended: nothing sent after that is answered."""
        ...

    @property
    def initialize_result(self) -> types.InitializeResult: ...

    def stderr_tail(self) -> str: ...


class Connector(Protocol):
    """Opens a session to the named upstream; ``message_handler`` sees its notifications."""

    def __call__(
        self, server: str, *, message_handler: MessageHandler | None = None
    ) -> AbstractAsyncContextManager[Connection]: ...


class Guard(Protocol):
    """The drift guard as the gateway sees it."""

    def check(
        self,
        server: str,
        tools: list[dict[str, Any]],
        listings: dict[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        """Compare a server's live tools/list (and its prompts and resources listings, when
        given) with its signed card (session start, list_changed)."""
        ...

    def admit(self, server: str, tool: str) -> None:
        """Raise :class:`~cartograph.errors.ToolQuarantined` if the tool is held back."""
        ...


class UpstreamEvents(Protocol):
    """What a pooled gateway tells about its sessions: one is ``ready`` (before any request is
    sent on it; the place to subscribe again), and an upstream resource was ``updated``
    (``notifications/resources/updated``). ``client`` names a per-client session's client."""

    async def ready(self, server: str, client: str | None, session: ClientSession) -> None: ...

    async def updated(self, server: str, client: str | None, uri: str) -> None: ...


@dataclass(frozen=True)
class Ask(Generic[T]):
    """One request to forward to an upstream: what it is (``doing``, for errors, e.g.
    ``prompts/get 'x'``), what the drift guard must admit first (``key``: a tool name, or a
    :mod:`cartograph.cards.listing` key), and how to send it on a live session."""

    doing: str
    key: str
    send: Callable[[ClientSession], Awaitable[T]]


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
    owned: int = 0  # upstream sessions (for stdio: processes) open for this slot, closing ones too


class Gateway(Protocol):
    """Routes one tool call (or another request: :meth:`request`) to its upstream."""

    mode: GatewayMode

    async def request(self, server: str, ask: Ask[T], *, client: str | None = None) -> T: ...

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        client: str | None = None,
        meta: dict[str, Any] | None = None,
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult: ...

    def health(self) -> list[SessionHealth]: ...

    def owned(self) -> int:
        """Upstream sessions open now (for stdio upstreams: child processes)."""
        ...


async def list_live_tools(session: ClientSession, *, timeout: float) -> list[dict[str, Any]]:
    """Every tool the upstream lists now (all pages), as the JSON objects it sent."""
    with anyio.fail_after(timeout):
        return await list_tools_raw(session)


async def check_live(guard: Guard | None, server: str, conn: Connection, timeout: float) -> int:
    """List the upstream's tools (and its prompts and resources, where it advertises them) and
    hand them to the drift guard; returns how many tools it lists."""
    tools = await list_live_tools(conn.session, timeout=timeout)
    listings: dict[str, list[dict[str, Any]]] | None = None
    caps = conn.initialize_result.capabilities
    if any(advertised(caps)):
        with anyio.fail_after(timeout):
            found = await list_listings(conn.session, server, caps)
        listings = {
            "prompts": found.prompts or [],
            "resources": found.resources or [],
            "resourceTemplates": found.resource_templates or [],
        }
    if guard is not None:
        guard.check(server, tools, listings)
    return len(tools)


async def forward_call(
    server: str,
    session: ClientSession,
    tool: str,
    arguments: dict[str, Any],
    meta: dict[str, Any] | None = None,
    progress: ProgressFnT | None = None,
) -> types.CallToolResult:
    """tools/call as a pass-through: unlike ``ClientSession.call_tool`` it neither lists the
    tools with the SDK's strict models (some publishers' schemas fail them) nor checks the
    result against the revision's wire models (the agent's own client does that; a result
    field the era does not define reaches the agent as sent). ``meta`` goes out as the
    request's ``_meta``. A result that is not a CallToolResult at all becomes an
    :class:`UpstreamError`.

    With ``progress``, the request carries a progress token of the session's own and each
    ``notifications/progress`` the upstream sends for it is handed to ``progress``. When the
    caller is cancelled (the agent cancelled its request, or the call timed out), the upstream
    is sent ``notifications/cancelled`` for the request (the SDK's dispatcher does that when the
    waiting scope is cancelled)."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    raw = await send_raw(session, "tools/call", params, progress=progress)
    try:
        return types.CallToolResult.model_validate(raw, by_name=False)
    except ValidationError as exc:
        raise protocol_error(server, exc, "tools/call") from None


def call_ask(
    server: str,
    tool: str,
    arguments: dict[str, Any],
    meta: dict[str, Any] | None = None,
    progress: ProgressFnT | None = None,
) -> Ask[types.CallToolResult]:
    """tools/call as an :class:`Ask` (admitted by the tool's name), sent by :func:`forward_call`:
    what both gateways' ``call`` hands to their ``request``."""

    async def send(session: ClientSession) -> types.CallToolResult:
        return await forward_call(server, session, tool, arguments, meta, progress)

    return Ask(f"tools/call {tool!r}", tool, send)


def result_size(result: types.CallToolResult) -> int:
    """A cheap upper estimate of the bytes a result carries (text, data, structured, _meta)."""
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
    if result.structured_content is not None:
        size += len(str(result.structured_content))
    if result.meta:
        size += len(str(result.meta))
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
