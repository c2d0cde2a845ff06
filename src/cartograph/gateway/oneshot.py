"""The one-shot gateway: spawn (or connect), initialize, check drift, invoke, tear down.

Every call gets a fresh session that is closed before the call returns, so nothing outlives a
call: no child process, no file descriptor, no state shared between agents.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import anyio
from mcp import McpError, types

from cartograph.errors import CartographError, UpstreamError
from cartograph.gateway.base import (
    CLOSED_ERRORS,
    Connector,
    GatewayMode,
    Guard,
    Limits,
    SessionHealth,
    check_result_size,
    forward_call,
    list_live_tools,
)
from cartograph.upstream.failures import mcp_error, timeout_error

logger = logging.getLogger(__name__)


class OneShotGateway:
    """A new upstream session for every call."""

    mode: GatewayMode = "one-shot"

    def __init__(
        self,
        connector: Connector,
        *,
        limits: Limits | None = None,
        guard: Guard | None = None,
        check_drift: bool = True,
    ) -> None:
        self._connector = connector
        self.limits = limits or Limits()
        self._guard = guard
        self.check_drift = check_drift
        self._stats: dict[str, dict[str, Any]] = {}

    async def __aenter__(self) -> OneShotGateway:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], *, client: str | None = None
    ) -> types.CallToolResult:
        stats = self._stats.setdefault(
            server, {"starts": 0, "failures": 0, "in_flight": 0, "last_error": None}
        )
        stats["starts"] += 1
        stats["in_flight"] += 1
        try:
            result = await self._call(server, tool, arguments)
        except UpstreamError as exc:
            stats["failures"] += 1
            stats["last_error"] = str(exc)
            raise
        finally:
            stats["in_flight"] -= 1
        check_result_size(server, result, self.limits.max_result_bytes)
        return result

    async def _call(
        self, server: str, tool: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        limits = self.limits
        phase = "start"
        result: types.CallToolResult | None = None
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + limits.start_timeout) as scope:
                async with self._connector(server) as conn:
                    if self.check_drift and self._guard is not None:
                        tools = await list_live_tools(conn.session, timeout=limits.list_timeout)
                        self._guard.check(server, tools)
                    if self._guard is not None:
                        self._guard.admit(server, tool)
                    phase = "call"
                    scope.deadline = anyio.current_time() + limits.call_timeout
                    try:
                        result = await forward_call(server, conn.session, tool, arguments)
                    except McpError as exc:
                        raise mcp_error(server, exc, conn.stderr_tail()) from None
                    phase = "close"
                    scope.deadline = math.inf
        except CartographError:
            raise
        except TimeoutError:
            raise timeout_error(server, "tools/list", limits.list_timeout) from None
        except CLOSED_ERRORS:
            raise UpstreamError(server, "the connection closed during the call; retry") from None
        except Exception as exc:  # boundary: nothing an upstream does may crash the proxy
            if result is not None:
                logger.warning("%s: error while closing the session: %r", server, exc)
                return result
            raise UpstreamError(server, f"failed during {phase}: {_first_line(exc)}") from None
        if scope.cancelled_caught:
            if phase == "start":
                raise timeout_error(server, "start and initialize", limits.start_timeout)
            if phase == "call":
                raise timeout_error(server, f"tools/call {tool!r}", limits.call_timeout)
        if result is None:
            raise UpstreamError(server, f"the session ended during {phase}; retry")
        return result

    def health(self) -> list[SessionHealth]:
        return [
            SessionHealth(
                server=name,
                client=None,
                state="one-shot",
                starts=s["starts"],
                crashes=s["failures"],
                in_flight=s["in_flight"],
                last_error=s["last_error"],
                idle_for=None,
                retry_in=None,
            )
            for name, s in sorted(self._stats.items())
        ]


def _first_line(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]
