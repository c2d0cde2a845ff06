"""A real proxy in memory: an SDK client session on the real MCP server over a workspace,
calling no upstream. Token accounting (:mod:`cartograph.evaluate.tokens`) reads the proxy's
answers through it; tests use it to see what an agent sees without a process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client._memory import InMemoryTransport
from mcp.server import Server

from cartograph.errors import GatewayError
from cartograph.evaluate.tokenizers import Tokenizer
from cartograph.evaluate.tokens import TokenReport, direct_side, measure
from cartograph.proxy.core import Proxy
from cartograph.proxy.server import build_server
from cartograph.workspace import Workspace


@asynccontextmanager
async def in_memory_client(ws: Workspace) -> AsyncIterator[ClientSession]:
    """A real SDK client session (in memory) on a real proxy over ``ws`` that never calls out."""

    def no_upstreams(server: str, **_: Any) -> AbstractAsyncContextManager[Any]:
        raise GatewayError(f"token accounting does not call upstreams (asked for {server})")

    proxy = Proxy(ws, no_upstreams)
    async with proxy.running(), session_on(build_server(proxy)) as client:
        yield client


@asynccontextmanager
async def session_on(server: Server[Any], **options: Any) -> AsyncIterator[ClientSession]:
    """An initialized 2025-era SDK client session on ``server``, in memory; ``options`` go to
    ``ClientSession`` (e.g. ``message_handler``)."""
    async with (
        InMemoryTransport(server) as (read, write),
        ClientSession(read, write, **options) as session,
    ):
        await session.initialize()
        yield session


async def measure_tokens(
    ws: Workspace,
    tasks: Sequence[str],
    tok: Tokenizer,
    ks: Sequence[int] = (5,),
    *,
    snapshot_path: Path | None = None,
) -> list[TokenReport]:
    """:func:`cartograph.evaluate.tokens.measure` over a proxy in memory on ``ws``."""
    side = direct_side(ws, tasks, tok, snapshot_path)  # bad input is refused before serving
    async with in_memory_client(ws) as client:
        return await measure(client, side, tasks, tok, ks)
