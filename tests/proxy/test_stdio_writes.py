"""The proxy's stdio writer: whole messages in order to a slow reader, the loop never blocked."""

from __future__ import annotations

import json
import os
import threading
import time

import anyio
import pytest
from mcp import types
from mcp.shared.message import SessionMessage

from cartograph.proxy.stdio import bounded_stdio_server

pytestmark = pytest.mark.anyio


def _reply(i: int, size: int) -> SessionMessage:
    text = "x" * size
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=i, result={"text": text}))


async def test_a_slow_reader_gets_every_message_whole_while_the_loop_runs() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    received = bytearray()

    def slow_reader() -> None:
        while chunk := os.read(out_r, 8192):
            received.extend(chunk)
            time.sleep(0.002)

    reader = threading.Thread(target=slow_reader)
    reader.start()
    sizes = [10, 300_000, 50, 1_000_000, 10]  # larger than a pipe's 64 KiB buffer
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.005)

    try:
        async with (
            bounded_stdio_server(2**20, stdin_fd=in_r, stdout_fd=out_w) as (_, write),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(ticker)
            for i, size in enumerate(sizes):
                await write.send(_reply(i, size))
            with anyio.fail_after(30):
                while received.count(b"\n") < len(sizes):
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    finally:
        os.close(out_w)
        os.close(in_w)
        reader.join(timeout=10)
        os.close(in_r)
        os.close(out_r)
    lines = bytes(received).splitlines()
    assert [json.loads(line)["id"] for line in lines] == list(range(len(sizes)))
    assert [len(json.loads(line)["result"]["text"]) for line in lines] == sizes
    assert ticks > 10  # the loop kept running while the pipe was full
