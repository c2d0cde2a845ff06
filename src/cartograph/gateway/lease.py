"""The pooled gateway's bookkeeping: one session lifetime (lease) and one upstream slot.

A :class:`Lease` lives from the start of one upstream session to its close; its events let
calls wait for the session to be ready, for a drift re-check to finish, or for it to be gone.
A :class:`Slot` is one upstream (or one upstream and one client) across restarts: the current
lease, every lease it still owns (a closing session's process is still ours), the start lock,
the concurrency bound, and the counters status reports (:func:`slot_health`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio
from mcp import MCPError

from cartograph.errors import UpstreamTimeout
from cartograph.gateway.base import CLOSED_ERRORS, Connection, SessionHealth
from cartograph.upstream.failures import timeout_error

logger = logging.getLogger("cartograph.gateway.pool")

LATE_ANSWER = "Received response with an unknown request ID"
"""How the SDK 1.x client reports an answer to a request it no longer waits for."""


@dataclass(eq=False)
class Lease:
    """One session lifetime: from start to close."""

    ready: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    wake: anyio.Event = field(default_factory=anyio.Event)
    conn: Connection | None = None
    error: str | None = None
    tail: str = ""
    stopping: bool = False
    recheck: bool = False
    checked: anyio.Event = field(default_factory=anyio.Event)
    timed_out: bool = False
    notices: int = 0
    changes: int = 0  # tools/list_changed notifications seen
    calls: int = 0  # tools/call requests on this session not answered yet
    quiet: anyio.Event = field(default_factory=anyio.Event)  # set when calls drops to 0

    @contextmanager
    def call(self) -> Iterator[None]:
        """Count one request in flight on this session."""
        if self.calls == 0:
            self.quiet = anyio.Event()
        self.calls += 1
        try:
            yield
        finally:
            self.calls -= 1
            if self.calls == 0:
                self.quiet.set()

    async def drained(self) -> None:
        """Until no request is in flight on this session."""
        if self.calls:
            await self.quiet.wait()

    def unreadable(self, server: str, message: Exception) -> None:
        """The session handed over something it could not read: the first three are logged. A
        late answer to a request the proxy gave up on (cancelled, timed out) is expected."""
        if str(message).startswith(LATE_ANSWER):
            logger.debug("%s: answer after the call was cancelled: %.200s", server, message)
            return
        self.notices += 1
        if self.notices <= 3:
            logger.warning("%s: unreadable message from upstream: %s", server, message)

    def request_recheck(self) -> None:
        self.changes += 1
        if not self.recheck:
            self.recheck = True
            self.checked = anyio.Event()
        self.wake.set()

    def stop(self) -> None:
        self.stopping = True
        self.wake.set()

    def usable(self) -> bool:
        return self.conn is not None and not self.stopping and not self.done.is_set()

    def alive(self) -> bool:
        """Starting or serving, and not asked to stop: a caller may wait for it."""
        return not self.stopping and not self.done.is_set()


@dataclass(eq=False)
class Slot:
    """One upstream (or upstream and client): its current lease and its history."""

    server: str
    client: str | None
    sem: anyio.Semaphore
    lease: Lease | None = None
    starts: int = 0
    crashes: int = 0
    failures: int = 0
    next_start: float = 0.0
    last_error: str | None = None
    in_flight: int = 0
    last_used: float = 0.0
    # Only one caller at a time may start a session for this slot (see PooledGateway._restart).
    start_lock: anyio.Lock = field(default_factory=anyio.Lock)
    # Every lease whose runner has not finished: the sessions (processes) this slot owns, the
    # current one and any still closing.
    owned: set[Lease] = field(default_factory=set)


def slot_health(slot: Slot, now: float) -> SessionHealth:
    """What status shows for ``slot`` at ``now`` (the event loop's clock)."""
    lease = slot.lease
    if lease is not None and lease.usable():
        state = "ready"
    elif slot.next_start > now:
        state = "backoff"
    elif lease is not None and not lease.done.is_set():
        state = "closing" if lease.stopping else "starting"
    else:
        state = "idle" if slot.starts == 0 else "closed"
    return SessionHealth(
        server=slot.server,
        client=slot.client,
        state=state,
        starts=slot.starts,
        crashes=slot.crashes,
        in_flight=slot.in_flight,
        last_error=slot.last_error,
        idle_for=None if slot.in_flight else round(now - slot.last_used, 1),
        retry_in=round(slot.next_start - now, 2) if slot.next_start > now else None,
        owned=len(slot.owned),
    )


def lease_tail(lease: Lease) -> str:
    conn = lease.conn
    if conn is None:
        return lease.tail
    try:
        return conn.stderr_tail()
    except Exception:  # boundary: a diagnostic must never fail the call path
        return ""


def describe_error(exc: BaseException) -> str:
    """One line for an exception, unwrapping exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300] if text else type(exc).__name__


def oldest_idle(slots: dict[tuple[str, str | None], Slot], server: str, limit: int) -> Slot | None:
    """The per-client slot of ``server`` to evict for a new one: the least recently used idle
    one, once ``limit`` of them exist (None: room left, or none idle)."""
    mine = [s for (name, c), s in slots.items() if name == server and c is not None]
    if len(mine) < limit:
        return None
    idle = sorted((s for s in mine if s.in_flight == 0), key=lambda s: s.last_used)
    return idle[0] if idle else None


async def answers_ping(lease: Lease, timeout: float) -> bool:
    """Whether the lease's session still answers a ping within ``timeout`` seconds."""
    conn = lease.conn
    if conn is None:
        return True  # already gone: nothing to replace
    try:
        with anyio.fail_after(timeout):
            await conn.session.send_ping()
    except (TimeoutError, MCPError, *CLOSED_ERRORS):
        return False
    return True


def slot_busy(slot: Slot, limit: int, timeout: float) -> UpstreamTimeout:
    """The refusal of a request that waited ``timeout`` seconds for a free place on ``slot``."""
    waiting = f"waiting for a free slot ({slot.in_flight - 1} call(s) in flight, limit {limit})"
    return timeout_error(slot.server, waiting, timeout)
