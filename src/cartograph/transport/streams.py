"""Transports: async context managers that yield the SDK's (read, write) streams.

One per kind of upstream: a child process on stdio, streamable HTTP, and HTTP+SSE, all from
the official SDK. The config models in :mod:`cartograph.config` choose one; session code above
them never knows which it got.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TextIO

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from cartograph.tracing import inject_headers_async
from cartograph.transport.stdio_bounded import bounded_stdio_client

__all__ = ["TransportStreams", "http_transport", "sse_transport", "stdio_transport"]


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    errlog: TextIO,
) -> AsyncIterator[TransportStreams]:
    """Start ``command``; ``env`` is laid over the SDK's safe defaults (PATH, HOME, ...)."""
    params = StdioServerParameters(command=command, args=list(args), env=dict(env) or None, cwd=cwd)
    async with bounded_stdio_client(params, errlog=errlog) as (read, write):
        yield read, write


@asynccontextmanager
async def http_transport(
    url: str, headers: Mapping[str, str], timeout: float
) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP; ``timeout`` bounds connect and write, reads may wait for held streams."""
    # The SDK's defaults, with our connect timeout: a long read timeout for held-open streams.
    client = httpx2.AsyncClient(
        headers=dict(headers),
        timeout=httpx2.Timeout(timeout, read=300.0),
        event_hooks={"request": [inject_headers_async]},  # traceparent, when tracing is on
    )
    async with client, streamable_http_client(url, http_client=client) as (read, write):
        yield read, write


@asynccontextmanager
async def sse_transport(
    url: str, headers: Mapping[str, str], timeout: float
) -> AsyncIterator[TransportStreams]:
    """The older HTTP+SSE transport (a GET event stream plus POSTs to the endpoint it names)."""
    async with sse_client(url, headers=dict(headers) or None, timeout=timeout) as streams:
        yield streams
