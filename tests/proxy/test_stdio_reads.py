"""The proxy's stdio reader: messages parsed as the upstream side parses them, and a client's
broken reply answered at once instead of left to time out."""

from __future__ import annotations

import os

import anyio
import pytest
from mcp import types
from mcp.shared.message import SessionMessage

from cartograph.proxy.stdio import bounded_stdio_server

pytestmark = pytest.mark.anyio


async def _read(lines: list[bytes]) -> list[SessionMessage | Exception]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.write(in_w, b"".join(lines))
    os.close(in_w)
    got: list[SessionMessage | Exception] = []
    try:
        async with bounded_stdio_server(2**20, stdin_fd=in_r, stdout_fd=out_w) as (read, _):
            with anyio.fail_after(10):
                async for item in read:
                    got.append(item)
    finally:
        for fd in (in_r, out_r, out_w):
            os.close(fd)
    return got


async def test_requests_and_a_broken_reply_from_the_client() -> None:
    got = await _read(
        [
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
            b'{"jsonrpc":"2.0","id":7}\n',  # a reply with neither result nor error
            b"not json\n",
        ]
    )
    assert len(got) == 3
    first, second, third = got
    assert isinstance(first, SessionMessage)
    assert isinstance(first.message, types.JSONRPCRequest) and first.message.method == "ping"
    assert isinstance(second, SessionMessage)
    assert isinstance(second.message, types.JSONRPCError) and second.message.id == 7
    assert "the client sent a malformed JSON-RPC reply" in second.message.error.message
    assert isinstance(third, Exception)
