"""The pooled gateway: one persistent session per upstream (or per upstream and client).

Sessions start lazily on the first call, are checked by the drift guard when they start and on
a ``list_changed`` (tools, prompts, resources), restart with exponential backoff after a crash,
close when idle, and admit a bounded number of calls (or other requests) at a time. Upstreams
named in ``per_client`` get one session per MCP client, so no agent's state leaks to another's.

Each session lives in a runner task of the gateway's own task group (an anyio transport must be
entered and left in the same task); calls borrow the live session from any task.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp import MCPError, types
from mcp.shared.dispatcher import ProgressFnT

from cartograph.errors import CartographError, UpstreamError, UpstreamTimeout
from cartograph.gateway.base import (
    CLOSED_ERRORS,
    LIST_CHANGED,
    Ask,
    Connection,
    Connector,
    GatewayMode,
    Guard,
    IncomingMessage,
    Limits,
    SessionHealth,
    T,
    UpstreamEvents,
    backoff_delay,
    call_ask,
    check_live,
    check_result_size,
)
from cartograph.gateway.lease import (
    Lease,
    Slot,
    answers_ping,
    describe_error,
    lease_tail,
    oldest_idle,
    slot_busy,
    slot_health,
)
from cartograph.upstream.failures import mcp_error, timeout_error

logger = logging.getLogger(__name__)

_SERVE_WAKE = 30.0  # how often an idle runner re-checks its idle deadline (seconds)
_CLOSE_WAIT = 5.0  # how long a restart waits for the session it replaces to close (seconds)
_DRAIN = 5.0  # how long a stopped session waits for its calls in flight to be answered


class PooledGateway:
    """Persistent upstream sessions; use as ``async with PooledGateway(...) as gw``."""

    mode: GatewayMode = "pooled"

    def __init__(
        self,
        connector: Connector,
        *,
        limits: Limits | None = None,
        guard: Guard | None = None,
        per_client: frozenset[str] = frozenset(),
        events: UpstreamEvents | None = None,
    ) -> None:
        self._connector = connector
        self.events = events
        self.limits = limits or Limits()
        self._guard = guard
        self.per_client = per_client
        self._slots: dict[tuple[str, str | None], Slot] = {}
        # Every lease whose runner has not finished, of every slot (dropped ones included).
        self._leases: set[Lease] = set()
        self._tg: TaskGroup | None = None

    async def __aenter__(self) -> PooledGateway:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        tg, self._tg = self._tg, None
        assert tg is not None
        leases = list(self._leases)
        for lease in leases:
            lease.stop()
        with anyio.move_on_after(10):
            for lease in leases:
                await lease.done.wait()
        tg.cancel_scope.cancel()
        await tg.__aexit__(None, None, None)

    # -- calls ---------------------------------------------------------------------------------

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
        """Send ``ask`` on the server's pooled session (started when needed), after the drift
        guard admitted ``ask.key``; bounded like a tool call."""
        slot = self._slot(server, client)
        slot.in_flight += 1
        limits = self.limits
        try:
            try:
                with anyio.fail_after(limits.call_timeout):
                    await slot.sem.acquire()
            except TimeoutError:
                raise slot_busy(slot, limits.max_in_flight, limits.call_timeout) from None
            try:
                return await self._send_on(slot, ask)
            finally:
                slot.sem.release()
        finally:
            slot.in_flight -= 1
            slot.last_used = anyio.current_time()

    async def _send_on(self, slot: Slot, ask: Ask[T]) -> T:
        for attempt in (1, 2):
            lease = await self._ready_lease(slot)
            if lease.recheck:
                # a list_changed arrived: admit nothing until the drift guard has looked.
                with anyio.fail_after(self.limits.list_timeout):
                    await lease.checked.wait()
            if self._guard is not None:
                self._guard.admit(slot.server, ask.key)
            assert lease.conn is not None
            if lease.conn.closed.is_set():  # it died while idle: a request now is never answered
                self._crashed(slot, lease, "the upstream exited while idle")
                if attempt == 1:
                    continue
                raise UpstreamError(slot.server, "the session closed twice in a row; retry later")
            try:
                with anyio.fail_after(self.limits.call_timeout), lease.call():
                    result = await ask.send(lease.conn.session)
            except TimeoutError:
                if self._tg is not None:
                    self._tg.start_soon(self._probe, slot, lease)
                raise timeout_error(slot.server, ask.doing, self.limits.call_timeout) from None
            except CLOSED_ERRORS:
                # The request never left: the session died while idle. Safe to send again.
                self._crashed(slot, lease, "the connection was closed")
                if attempt == 1:
                    continue
                raise UpstreamError(
                    slot.server, "the connection closed twice in a row; retry later"
                ) from None
            except MCPError as exc:
                if exc.error.code == types.CONNECTION_CLOSED:
                    self._crashed(slot, lease, "exited during a call")
                raise mcp_error(slot.server, exc, lease_tail(lease)) from None
            slot.failures = 0
            return result
        raise AssertionError("unreachable")

    async def _ready_lease(self, slot: Slot) -> Lease:
        for _ in range(5):
            lease = slot.lease
            if lease is None or not lease.alive():
                lease = await self._restart(slot, lease)
            # The runner bounds the start by start_timeout; this is only a safety net.
            try:
                with anyio.fail_after(self.limits.start_timeout + 15):
                    await lease.ready.wait()
            except TimeoutError:
                raise timeout_error(slot.server, "start", self.limits.start_timeout) from None
            if lease.usable():
                return lease
            if lease.error is not None:
                if lease.timed_out:
                    raise UpstreamTimeout(
                        slot.server,
                        f"did not start in time ({lease.error}); retry",
                        stderr_tail=lease.tail,
                    )
                raise UpstreamError(slot.server, lease.error, stderr_tail=lease.tail)
        raise UpstreamError(slot.server, "the session kept closing while starting; retry")

    async def _restart(self, slot: Slot, seen: Lease | None) -> Lease:
        """The slot's session, started anew unless another caller already did (one start at a
        time; the lease is looked at again after every wait). ``seen`` is the dead lease the
        caller found; a newer one, even one that failed, is its answer."""
        async with slot.start_lock:
            lease = slot.lease
            if lease is not seen and lease is not None:
                return lease  # started while we waited for the lock: share its outcome
            wait = slot.next_start - anyio.current_time()
            if wait > self.limits.call_timeout:
                raise UpstreamError(
                    slot.server,
                    f"failed {slot.failures} time(s) in a row ({slot.last_error}); "
                    f"the next restart is in {wait:.0f} s: retry then",
                )
            if wait > 0:
                logger.info("%s: waiting %.2f s before restarting", slot.server, wait)
                await anyio.sleep(wait)
                if slot.lease is not lease and slot.lease is not None:
                    return slot.lease
            if lease is not None and not lease.done.is_set():
                # The old session is closing: let its process go before the next one starts.
                with anyio.move_on_after(_CLOSE_WAIT):
                    await lease.done.wait()
            return self._start(slot)

    def _start(self, slot: Slot) -> Lease:
        if self._tg is None:
            raise UpstreamError(slot.server, "the gateway is closed")
        lease = Lease()
        slot.lease = lease
        slot.starts += 1
        slot.owned.add(lease)
        self._leases.add(lease)
        self._tg.start_soon(self._run, slot, lease)
        return lease

    def _crashed(self, slot: Slot, lease: Lease, why: str) -> None:
        if lease.stopping:
            return
        slot.crashes += 1
        slot.failures += 1
        slot.last_error = why
        slot.next_start = anyio.current_time() + backoff_delay(slot.failures, self.limits)
        logger.warning("%s: session lost (%s); restarting on the next call", slot.server, why)
        lease.stop()

    async def _probe(self, slot: Slot, lease: Lease) -> None:
        """After a timeout: if the session no longer answers a ping, replace it."""
        if not await answers_ping(lease, min(5.0, self.limits.call_timeout)):
            self._crashed(slot, lease, "stopped answering after a timed-out call")

    # -- session runner -----------------------------------------------------------------------

    async def _run(self, slot: Slot, lease: Lease) -> None:
        server = slot.server

        async def on_message(message: IncomingMessage) -> None:
            if isinstance(message, LIST_CHANGED):
                lease.request_recheck()
            elif isinstance(message, types.ResourceUpdatedNotification) and self.events:
                await self.events.updated(server, slot.client, str(message.params.uri))
            elif isinstance(message, Exception):
                lease.unreadable(server, message)

        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.limits.start_timeout) as sc:
                async with self._connector(server, message_handler=on_message) as conn:
                    tools = await check_live(self._guard, server, conn, self.limits.list_timeout)
                    if self.events is not None:  # e.g. subscribe again what clients subscribed to
                        await self.events.ready(server, slot.client, conn.session)
                    sc.deadline = math.inf
                    lease.conn = conn
                    lease.ready.set()
                    logger.info("%s: session ready (%d tools)", server, tools)
                    async with anyio.create_task_group() as watch:
                        watch.start_soon(self._watch, slot, lease, conn)
                        await self._serve(slot, lease, conn)
                        watch.cancel_scope.cancel()
                    with anyio.move_on_after(_DRAIN):  # the SDK answers them unless torn down
                        await lease.drained()
            if sc.cancelled_caught and not lease.ready.is_set():
                lease.error = f"did not start within {self.limits.start_timeout:g} s"
                lease.timed_out = True
        except UpstreamError as exc:
            lease.error = exc.reason if exc.server == server else str(exc)
            lease.tail = exc.stderr_tail
            lease.timed_out = isinstance(exc, UpstreamTimeout)
        except CartographError as exc:
            lease.error = str(exc)
            lease.tail = getattr(exc, "stderr_tail", "")
            lease.timed_out = isinstance(exc, UpstreamTimeout)
        except TimeoutError:
            lease.error = f"tools/list did not answer within {self.limits.list_timeout:g} s"
            lease.timed_out = True
        except Exception as exc:  # boundary: nothing an upstream does may crash the proxy
            lease.error = describe_error(exc)
            if not lease.ready.is_set():
                lease.error = f"could not start: {lease.error}"
            logger.debug("%s: session ended with %r", server, exc, exc_info=True)
        finally:
            self._ended(slot, lease)

    def _ended(self, slot: Slot, lease: Lease) -> None:
        """The runner of ``lease`` is done: count a failure, wake every waiter, let go."""
        if lease.error is not None and not lease.stopping:
            if lease.ready.is_set():
                slot.crashes += 1
            slot.failures += 1
            slot.last_error = lease.error
            slot.next_start = anyio.current_time() + backoff_delay(slot.failures, self.limits)
            logger.warning("%s: session failed: %s", slot.server, lease.error)
        lease.conn = None
        lease.recheck = False
        lease.checked.set()
        lease.ready.set()
        lease.done.set()
        slot.owned.discard(lease)
        self._leases.discard(lease)
        if slot.client is not None and slot.lease is lease and slot.in_flight == 0:
            self._slots.pop((slot.server, slot.client), None)

    async def _watch(self, slot: Slot, lease: Lease, conn: Connection) -> None:
        """An upstream that exits between calls is noticed at once, not by the next call."""
        await conn.closed.wait()
        self._crashed(slot, lease, "the upstream exited")

    async def _serve(self, slot: Slot, lease: Lease, conn: Connection) -> None:
        idle = self.limits.idle_timeout
        while not lease.stopping:
            with anyio.move_on_after(min(idle, _SERVE_WAKE)):
                await lease.wake.wait()
            lease.wake = anyio.Event()
            if lease.recheck and not lease.stopping:
                seen = lease.changes
                try:
                    await check_live(self._guard, slot.server, conn, self.limits.list_timeout)
                except (TimeoutError, CartographError, MCPError, *CLOSED_ERRORS) as exc:
                    self._crashed(slot, lease, f"listing failed after list_changed: {exc!r}")
                    break
                if lease.changes == seen:  # else another list_changed came: list again
                    lease.recheck = False
                    lease.checked.set()
                else:
                    lease.wake.set()
            quiet = anyio.current_time() - slot.last_used
            if slot.in_flight == 0 and quiet >= idle:
                logger.info("%s: closing idle session after %.0f s", slot.server, quiet)
                lease.stopping = True

    # -- slots and health ---------------------------------------------------------------------

    def _slot(self, server: str, client: str | None) -> Slot:
        key_client = client if server in self.per_client else None
        key = (server, key_client)
        slot = self._slots.get(key)
        if slot is None:
            if key_client is not None:
                self._evict(server)
            slot = Slot(server, key_client, anyio.Semaphore(self.limits.max_in_flight))
            slot.last_used = anyio.current_time()
            self._slots[key] = slot
        return slot

    def _evict(self, server: str) -> None:
        oldest = oldest_idle(self._slots, server, self.limits.max_client_sessions)
        if oldest is not None:
            if oldest.lease is not None:
                oldest.lease.stop()
            self._slots.pop((oldest.server, oldest.client), None)

    async def release_client(self, client: str) -> None:
        """Close every session that belongs to ``client`` (it disconnected) and forget them."""
        mine = [s for (_, c), s in list(self._slots.items()) if c == client]
        for slot in mine:
            if slot.lease is not None:
                slot.lease.stop()
        for slot in mine:
            if slot.lease is not None:
                await slot.lease.done.wait()
            if slot.in_flight == 0:
                self._slots.pop((slot.server, slot.client), None)

    async def wait_closed(self, server: str, client: str | None = None) -> None:
        """Wait until the upstream's current session, if any, has closed (idle, crash, stop)."""
        slot = self._slots.get((server, client if server in self.per_client else None))
        if slot is not None and slot.lease is not None:
            await slot.lease.done.wait()

    def owned(self) -> int:
        """Upstream sessions (stdio: processes) open now, closing and dropped slots' included."""
        return len(self._leases)

    def health(self) -> list[SessionHealth]:
        now = anyio.current_time()
        return [slot_health(slot, now) for slot in self._slots.values()]
