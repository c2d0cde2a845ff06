"""The one-shot gateway: spawn (or connect), initialize, check drift, invoke, tear down.

Every call gets a fresh session that is closed before the call returns, so nothing outlives a
call: no child process, no file descriptor, no state shared between agents.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Generic

import anyio
from mcp import MCPError, types
from mcp.shared.dispatcher import ProgressFnT

from cartograph.errors import CartographError, UpstreamError
from cartograph.gateway.base import (
    CLOSED_ERRORS,
    Ask,
    Connector,
    GatewayMode,
    Guard,
    Limits,
    SessionHealth,
    T,
    call_ask,
    check_live,
    check_result_size,
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
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        client: str | None = None,
        meta: dict[str, Any] | None = None,
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        ask = call_ask(server, tool, arguments, meta, progress)
        result = await self.request(server, ask, client=client)
        check_result_size(server, result, self.limits.max_result_bytes)
        return result

    async def request(self, server: str, ask: Ask[T], *, client: str | None = None) -> T:
        """Send ``ask`` on a session of its own, after the drift guard admitted ``ask.key``."""
        stats = self._stats.setdefault(
            server, {"starts": 0, "failures": 0, "in_flight": 0, "last_error": None}
        )
        stats["starts"] += 1
        stats["in_flight"] += 1
        try:
            return await self._send(server, ask)
        except UpstreamError as exc:
            stats["failures"] += 1
            stats["last_error"] = str(exc)
            raise
        finally:
            stats["in_flight"] -= 1

    async def _send(self, server: str, ask: Ask[T]) -> T:
        limits = self.limits
        phase = "start"
        result: _Box[T] | None = None
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + limits.start_timeout) as scope:
                async with self._connector(server) as conn:
                    if self.check_drift and self._guard is not None:
                        await check_live(self._guard, server, conn, limits.list_timeout)
                    if self._guard is not None:
                        self._guard.admit(server, ask.key)
                    phase = "call"
                    scope.deadline = anyio.current_time() + limits.call_timeout
                    try:
                        result = _Box(await ask.send(conn.session))
                    except MCPError as exc:
                        raise mcp_error(server, exc, conn.stderr_tail()) from None
                    phase = "close"
                    scope.deadline = math.inf
        except CartographError:
            raise
        except TimeoutError:
            raise timeout_error(server, "listing", limits.list_timeout) from None
        except CLOSED_ERRORS:
            raise UpstreamError(server, "the connection closed during the call; retry") from None
        except Exception as exc:  # boundary: nothing an upstream does may crash the proxy
            if result is not None:
                logger.warning("%s: error while closing the session: %r", server, exc)
                return result.value
            raise UpstreamError(server, f"failed during {phase}: {_first_line(exc)}") from None
        if scope.cancelled_caught:
            if phase == "start":
                raise timeout_error(server, "start and initialize", limits.start_timeout)
            if phase == "call":
                raise timeout_error(server, ask.doing, limits.call_timeout)
        if result is None:
            raise UpstreamError(server, f"the session ended during {phase}; retry")
        return result.value

    def owned(self) -> int:
        """Upstream sessions open now: one per call in flight."""
        return sum(s["in_flight"] for s in self._stats.values())

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
                owned=s["in_flight"],
            )
            for name, s in sorted(self._stats.items())
        ]


@dataclass(frozen=True)
class _Box(Generic[T]):
    """A result that arrived (it may itself be falsy or None)."""

    value: T


def _first_line(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]
