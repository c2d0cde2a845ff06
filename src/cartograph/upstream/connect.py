"""Sessions with one upstream MCP server, its tools as sent, and snapshots of many at once.

Owns :func:`open_session` (start or connect the upstream through its config's transport,
negotiate the newest protocol revision it speaks (:func:`negotiate`) with the official SDK's
``ClientSession``, capture a stdio child's stderr, and turn every failure into
:class:`~cartograph.errors.UpstreamError` through :mod:`cartograph.upstream.failures`),
:func:`list_tools_raw` (``tools/list`` with pagination, tools returned as the dicts the server
sent, so schemas the SDK's models would reject still come through; prompts and resources are
listed by :mod:`cartograph.upstream.listings`), and :func:`snapshot_servers` (all upstreams
concurrently, each with its own time budget, failures reported next to the snapshot instead of
aborting it).

Child processes are started by the SDK's ``stdio_client`` in their own process group; leaving
the session closes stdin, waits, then terminates the group, so every child is reaped.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, cast

import anyio
import mcp.types as types
from anyio.abc import ObjectReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import ClientSession, MCPError
from mcp.client.session import MessageHandlerFnT
from mcp_types.version import LATEST_MODERN_VERSION
from pydantic import ValidationError

from cartograph.config import StdioUpstream, UpstreamConfig
from cartograph.errors import UpstreamError
from cartograph.upstream.failures import (
    STDERR_TAIL_CHARS,
    StderrLog,
    describe_noise,
    map_upstream_error,
    single_leaf,
)
from cartograph.upstream.listings import list_listings, list_raw
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot

logger = logging.getLogger(__name__)

MAX_TOOL_PAGES = 1000
# A backstop deadline for the whole start-up, transport connect included (an SSE endpoint that
# never sends its endpoint event). For stdio it lies past the initialize timeout, so a hung
# child is still shut down cleanly (stdin closed, waited for, then its group terminated).
STDIO_CLEANUP_GRACE = 5.0
DISCOVER_WAIT = 5.0
"""Seconds an upstream has to answer ``server/discover`` before it is taken for 2025-era
(some of those never answer a request sent before ``initialize``)."""
_LEGACY: set[str] = set()
"""Upstreams (by name) that did not answer ``server/discover``: initialized straight away."""


def _client_info() -> types.Implementation:
    try:
        ours = version("cartograph")
    except PackageNotFoundError:
        ours = "0"
    return types.Implementation(name="cartograph", version=ours)


@dataclass
class UpstreamSession:
    """A live, initialized session with one upstream. Use ``session`` for any MCP request."""

    config: UpstreamConfig
    session: ClientSession
    initialize_result: types.InitializeResult
    _stderr: StderrLog | None = field(default=None, repr=False)
    _noise: list[str] = field(default_factory=list, repr=False)
    closed: anyio.Event = field(default_factory=anyio.Event, repr=False)
    """Set once the upstream's side of the connection has ended (it exited, or hung up): a
    request sent after that would never be answered, so the gateway starts a new session."""

    @property
    def name(self) -> str:
        return self.config.name

    def stderr_tail(self, max_chars: int = STDERR_TAIL_CHARS) -> str:
        """The last lines the child wrote on stderr ('' for HTTP upstreams)."""
        return self._stderr.tail(max_chars) if self._stderr else ""

    @property
    def stdout_noise(self) -> tuple[str, ...]:
        """Lines the upstream sent that were not JSON-RPC (first few only)."""
        return tuple(self._noise)

    def error(
        self, exc: BaseException, doing: str, *, timeout: float | None = None
    ) -> UpstreamError:
        """Map an exception raised while ``doing`` (e.g. "tools/call x") to an UpstreamError."""
        return map_upstream_error(
            self.config, exc, doing, stderr=self._stderr, noise=self._noise, timeout=timeout
        )


@asynccontextmanager
async def open_session(
    cfg: UpstreamConfig,
    *,
    timeout: float = 30.0,
    message_handler: Callable[[Any], Awaitable[None]] | None = None,
) -> AsyncIterator[UpstreamSession]:
    """Start or connect ``cfg``'s upstream and initialize it within ``timeout`` seconds.

    ``message_handler`` sees what the upstream sends unasked (notifications, server requests)
    and the stdout lines that were not JSON-RPC (as exceptions), as ``ClientSession`` passes them.

    Raises :class:`UpstreamError` (:class:`UpstreamTimeout` when it did not answer in time) if the
    upstream cannot be started, connected or initialized; the message carries the stderr tail's
    hint and ``.stderr_tail`` the text. Errors raised inside the ``async with`` body propagate
    unchanged (only unwrapped from the SDK's exception groups); map them with
    :meth:`UpstreamSession.error`. On exit the session closes and a stdio child is reaped.
    """
    stderr = StderrLog() if isinstance(cfg, StdioUpstream) else None
    noise: list[str] = []
    doing = "start" if stderr is not None else "connect"
    ready = False

    on_message = _noting_noise(cfg.name, noise, message_handler)
    try:
        grace = STDIO_CLEANUP_GRACE if stderr is not None else 0.0
        with anyio.CancelScope(deadline=anyio.current_time() + timeout + grace) as scope:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(
                    cfg.open_transport(errlog=stderr.file if stderr else None, timeout=timeout)
                )
                closed = anyio.Event()
                watched = cast(MemoryObjectReceiveStream[Any], _Watched(read, closed))
                session = await stack.enter_async_context(
                    ClientSession(
                        watched, write, message_handler=on_message, client_info=_client_info()
                    )
                )
                doing = "initialize"
                with anyio.fail_after(timeout):
                    init = await negotiate(session, cfg.name)
                scope.deadline = math.inf
                ready = True
                yield UpstreamSession(cfg, session, init, stderr, noise, closed)
        if scope.cancelled_caught and not ready:
            raise TimeoutError
    except BaseException as exc:
        if ready:  # raised in the body: unwrapped from the SDK's groups, not mapped
            leaf = single_leaf(exc)
            if leaf is exc:
                raise
            raise leaf from exc
        if not _upstreams_fault(exc):
            raise
        raise map_upstream_error(
            cfg, exc, doing, stderr=stderr, noise=noise, timeout=timeout
        ) from exc
    finally:
        if stderr is not None:
            stderr.close()


def _noting_noise(
    name: str, noise: list[str], then: Callable[[Any], Awaitable[None]] | None
) -> MessageHandlerFnT:
    """A ``ClientSession`` message handler that keeps the first five stdout lines that were not
    JSON-RPC (for the error hint) and hands every message on to ``then``."""

    async def on_message(message: types.ServerNotification | Exception) -> None:
        if isinstance(message, Exception):
            if len(noise) < 5:
                noise.append(describe_noise(message))
            logger.debug("upstream %r sent something that is not JSON-RPC: %s", name, message)
        if then is not None:  # e.g. the gateway's drift guard (tools/list_changed)
            await then(message)

    return on_message


def _upstreams_fault(exc: BaseException) -> bool:
    """Whether a failure while starting a session is the upstream's to report; an outer
    cancellation, KeyboardInterrupt or SystemExit, or nothing but cancellations inside the SDK's
    task groups, is not."""
    cancelled = anyio.get_cancelled_exc_class()
    if isinstance(exc, cancelled) or not isinstance(exc, Exception | BaseExceptionGroup):
        return False
    return not (isinstance(exc, BaseExceptionGroup) and exc.split(cancelled)[1] is None)


async def negotiate(session: ClientSession, name: str) -> types.InitializeResult:
    """Speak the newest revision the upstream does: ``server/discover`` first (2026-07-28, no
    handshake, no session), and ``initialize`` when the upstream does not answer it within
    :data:`DISCOVER_WAIT` seconds or refuses it. An upstream found to be 2025-era is asked
    with ``initialize`` at once next time. A dual-era upstream that was only slow to answer
    has fixed its era with that first discover and refuses ``initialize`` as an unsupported
    version: it is asked to discover again. A modern upstream's discover result is returned as
    the :class:`~mcp.types.InitializeResult` it stands for."""
    if name not in _LEGACY:
        with anyio.move_on_after(DISCOVER_WAIT):
            try:
                return _as_initialize(session, name, await session.discover())
            except (MCPError, RuntimeError, ValidationError) as exc:
                logger.debug("upstream %r: no server/discover (%s); initializing", name, exc)
        _LEGACY.add(name)
    try:
        return await session.initialize()
    except MCPError as exc:
        if exc.code != types.UNSUPPORTED_PROTOCOL_VERSION:
            raise
    _LEGACY.discard(name)
    return _as_initialize(session, name, await session.discover())


def _as_initialize(
    session: ClientSession, name: str, found: types.DiscoverResult
) -> types.InitializeResult:
    return types.InitializeResult(
        protocol_version=session.protocol_version or LATEST_MODERN_VERSION,
        capabilities=found.capabilities,
        server_info=session.server_info or types.Implementation(name=name, version=""),
        instructions=found.instructions,
    )


class _Watched(ObjectReceiveStream[Any]):
    """The transport's read stream, setting ``closed`` when it ends (the SDK answers the
    requests pending then with CONNECTION_CLOSED, but none sent later)."""

    def __init__(self, inner: Any, closed: anyio.Event) -> None:
        self.inner = inner
        self.closed = closed

    async def receive(self) -> Any:
        try:
            return await self.inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.closed.set()
            raise

    async def aclose(self) -> None:
        self.closed.set()
        await self.inner.aclose()


async def list_tools_raw(
    upstream: UpstreamSession | ClientSession, *, max_pages: int = MAX_TOOL_PAGES
) -> list[dict[str, Any]]:
    """Every tool the upstream lists, following ``nextCursor``, as the dicts it sent.

    The SDK's ``Tool`` model is bypassed: keys stay camelCase and unknown fields and unusual
    schemas survive. Raises :class:`UpstreamError` on a page that breaks the protocol.
    """
    session = upstream.session if isinstance(upstream, UpstreamSession) else upstream
    name = upstream.name if isinstance(upstream, UpstreamSession) else "upstream"
    return await list_raw(session, name, "tools/list", max_pages=max_pages)


async def snapshot_server(cfg: UpstreamConfig, *, timeout: float = 30.0) -> ServerSnapshot:
    """Connect, initialize and list tools within ``timeout`` seconds in all; then disconnect."""
    started = anyio.current_time()
    async with open_session(cfg, timeout=timeout) as up:
        remaining = max(timeout - (anyio.current_time() - started), 0.001)
        init = up.initialize_result
        doing = "tools/list"
        try:
            with anyio.fail_after(remaining):
                tools = await list_tools_raw(up)
                doing = "prompts/list and resources/list"
                listings = await list_listings(up.session, cfg.name, init.capabilities)
        except Exception as exc:
            raise up.error(exc, doing, timeout=timeout) from exc
        return ServerSnapshot(
            name=cfg.name,
            tools=tools,
            server_info=init.server_info.model_dump(mode="json", by_alias=True, exclude_unset=True),
            instructions=init.instructions,
            protocol_version=str(init.protocol_version),
            transport=cfg.transport,
            endpoint=cfg.public_endpoint(),
            prompts=listings.prompts,
            resources=listings.resources,
            resource_templates=listings.resource_templates,
        )


@dataclass(frozen=True)
class ServerDone:
    """Progress: one server finished (``error`` is None when it succeeded)."""

    name: str
    done: int
    total: int
    seconds: float
    tools: int
    error: UpstreamError | None


@dataclass(frozen=True)
class SnapshotOutcome:
    """What :func:`snapshot_servers` returns: the servers that answered, and those that did not."""

    snapshot: Snapshot
    failures: dict[str, UpstreamError]
    seconds: dict[str, float]  # wall time per server, failures included

    def __iter__(self) -> Iterator[Any]:  # allows `snapshot, failures = outcome`
        return iter((self.snapshot, self.failures))


def _log_done(done: ServerDone) -> None:
    if done.error is not None:
        logger.warning("%s", done.error)
    else:
        logger.info("upstream %r: %d tools in %.2fs", done.name, done.tools, done.seconds)


async def snapshot_servers(
    configs: Iterable[UpstreamConfig] | Mapping[str, UpstreamConfig],
    *,
    timeout: float = 30.0,
    concurrency: int = 8,
    on_progress: Callable[[ServerDone], object] | None = None,
) -> SnapshotOutcome:
    """Snapshot every upstream concurrently (at most ``concurrency`` at a time).

    Each server gets ``timeout`` seconds, counted from when its turn starts, to start, initialize
    and list its tools. A server that fails is reported in ``failures`` (name -> UpstreamError,
    with its stderr tail) and left out of the snapshot; the others are unaffected.
    """
    items = list(configs.values()) if isinstance(configs, Mapping) else list(configs)
    names = [c.name for c in items]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise UpstreamError(",".join(dupes), "two configs share this server name")
    limiter = anyio.CapacityLimiter(max(1, concurrency))
    servers: dict[str, ServerSnapshot] = {}
    failures: dict[str, UpstreamError] = {}
    seconds: dict[str, float] = {}

    async def one(cfg: UpstreamConfig) -> None:
        async with limiter:
            t0 = time.perf_counter()
            error: UpstreamError | None = None
            try:
                servers[cfg.name] = await snapshot_server(cfg, timeout=timeout)
            except UpstreamError as exc:
                error = exc
            except Exception as exc:  # boundary: one server's surprise must not sink the rest
                logger.exception("unexpected failure while snapshotting %r", cfg.name)
                error = UpstreamError(cfg.name, f"unexpected {type(exc).__name__}: {exc}")
            seconds[cfg.name] = time.perf_counter() - t0
        if error is not None:
            failures[cfg.name] = error
        done = ServerDone(
            name=cfg.name,
            done=len(seconds),
            total=len(items),
            seconds=seconds[cfg.name],
            tools=len(servers[cfg.name].tools) if error is None else 0,
            error=error,
        )
        _log_done(done)
        if on_progress is not None:
            on_progress(done)

    async with anyio.create_task_group() as tg:
        for cfg in items:
            tg.start_soon(one, cfg)
    return SnapshotOutcome(
        snapshot=Snapshot(servers=dict(sorted(servers.items()))),
        failures=dict(sorted(failures.items())),
        seconds=seconds,
    )
