"""Progress of a forwarded call, relayed to the agent that asked for it.

When the agent's ``call`` request carries ``_meta.progressToken``, the proxy asks the upstream
for progress (under a token of the upstream session's own: see
:func:`cartograph.gateway.base.forward_call`) and passes each ``notifications/progress`` the
upstream sends for that call on to the agent's session, under the agent's token, as a
notification related to the agent's request. Without a token nothing is asked or sent.

A pooled upstream session is shared by every client, and its reader hands progress over inline:
it must never wait on one agent. So notices go through a small buffer (when it is full, a notice
is dropped: progress is advisory, and the next one says more), and a task of the call's own
sends them. Those still queued when the result is in are sent first (for at most
:data:`DRAIN` seconds), so no progress follows the result.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp import types
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import ProgressFnT

logger = logging.getLogger(__name__)

BUFFER = 32
"""Progress notices held for a slow agent before new ones are dropped."""
DRAIN = 2.0
"""Seconds the queued notices may take to reach the agent once the result is in."""

T = TypeVar("T")
Notice = tuple[float, float | None, str | None]
_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


async def with_progress(
    session: ServerSession,
    token: types.ProgressToken | None,
    request_id: types.RequestId,
    run: Callable[[ProgressFnT | None], Awaitable[T]],
) -> T:
    """``run(progress)``, where ``progress`` relays to ``session`` under ``token`` (None, and
    nothing relayed, when the agent sent no token). ``run``'s errors propagate as they are."""
    if token is None:
        return await run(None)
    send, receive = anyio.create_memory_object_stream[Notice](BUFFER)
    dropped = 0

    async def hear(progress: float, total: float | None, message: str | None) -> None:
        nonlocal dropped
        try:
            send.send_nowait((progress, total, message))
        except anyio.WouldBlock:
            dropped += 1
        except _GONE:
            pass  # the result is in: progress from now on is late

    async def relay() -> None:
        async with receive:
            async for progress, total, message in receive:
                try:
                    await session.send_progress_notification(
                        token, progress, total, message, related_request_id=str(request_id)
                    )
                except _GONE:
                    return  # the agent went away

    failure: Exception | None = None
    result: Any = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        try:
            result = await run(hear)
        except Exception as exc:  # re-raised below, outside the task group (no group wrapping)
            failure = exc
        finally:
            send.close()
            tg.cancel_scope.deadline = anyio.current_time() + DRAIN
    if dropped:
        logger.info(
            "progress of request %s: %d notice(s) dropped (slow client)", request_id, dropped
        )
    if failure is not None:
        raise failure
    return result
