"""Streamable HTTP and SSE: real servers in subprocesses on loopback ports, listed and called."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.text import TextReceiveStream
from sdk1 import sdk1_python

from cartograph.config import HttpUpstream
from cartograph.errors import UpstreamError, UpstreamTimeout
from cartograph.upstream.connect import list_tools_raw, open_session, snapshot_servers

SERVERS = Path(__file__).resolve().parent / "servers"
pytestmark = pytest.mark.anyio


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@asynccontextmanager
async def serving(
    argv: Sequence[str], marker: str, env: dict[str, str] | None = None
) -> AsyncIterator[None]:
    """Run a server process until it prints ``marker`` on stderr; stop and reap it after."""
    process = await anyio.open_process(
        list(argv), env={**os.environ, **(env or {})}, stdout=None, stderr=-1
    )
    seen = ""
    try:
        assert process.stderr is not None
        with anyio.fail_after(60):
            async for chunk in TextReceiveStream(process.stderr):
                seen += chunk
                if marker in seen:
                    break
        assert marker in seen, f"server did not start:\n{seen[-2000:]}"

        async def drain() -> None:  # keep the pipe from filling while we test
            assert process.stderr is not None
            async for _ in process.stderr:
                pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            yield
            tg.cancel_scope.cancel()
    finally:
        process.terminate()
        with anyio.fail_after(10):
            await process.wait()
        await process.aclose()


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_fastmcp_server_is_listed_and_called_over_http(
    transport: str, no_leftover_children: None
) -> None:
    port = free_port()
    path = "/mcp" if transport == "http" else "/sse"
    argv = [sdk1_python(), str(SERVERS / "fastmcp_server.py"), str(port), transport]
    async with serving(argv, "Uvicorn running on"):
        cfg = HttpUpstream(
            name="demo",
            url=f"http://127.0.0.1:{port}{path}",
            headers={"X-Test": "secret-value"},
            transport="sse" if transport == "sse" else "http",
        )
        async with open_session(cfg, timeout=15) as up:
            assert up.initialize_result.server_info.name == "http-demo"
            tools = await list_tools_raw(up)
            assert {t["name"] for t in tools} == {"add", "echo"}
            add = next(t for t in tools if t["name"] == "add")
            assert add["inputSchema"]["required"] == ["a", "b"]
            result = await up.session.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}
            assert up.stderr_tail() == ""
        outcome = await snapshot_servers([cfg], timeout=15)
    server = outcome.snapshot.servers["demo"]
    assert server.transport == transport
    assert server.endpoint == f"http://127.0.0.1:{port}{path}"
    assert len(server.tools) == 2


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_nothing_listening_is_reported_not_hung(transport: str) -> None:
    port = free_port()
    cfg = HttpUpstream(
        name="nobody",
        url=f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}",
        transport="sse" if transport == "sse" else "http",
    )
    outcome = await snapshot_servers([cfg], timeout=5)
    assert list(outcome.failures) == ["nobody"]
    assert isinstance(outcome.failures["nobody"], UpstreamError)
    assert f"127.0.0.1:{port}" in str(outcome.failures["nobody"])


@pytest.mark.fleet
@pytest.mark.parametrize("transport", ["streamableHttp", "sse"])
async def test_everything_server_is_listed_over_http(
    transport: str, fleet_dir: Path, no_leftover_children: None
) -> None:
    port = free_port()
    script = fleet_dir / "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    marker = "listening on port" if transport == "streamableHttp" else "running on port"
    home = str(fleet_dir / "home" / "everything")
    async with serving(["node", str(script), transport], marker, {"PORT": str(port), "HOME": home}):
        path = "/mcp" if transport == "streamableHttp" else "/sse"
        cfg = HttpUpstream(
            name="everything",
            url=f"http://127.0.0.1:{port}{path}",
            transport="sse" if transport == "sse" else "http",
        )
        outcome = await snapshot_servers([cfg], timeout=20)
    assert not outcome.failures, outcome.failures
    tools = outcome.snapshot.servers["everything"].tools
    assert "echo" in {t["name"] for t in tools}


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_http_server_that_accepts_but_never_answers_times_out(transport: str) -> None:
    """An in-process TCP listener that reads requests and never answers."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def silent(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    await stream.receive()

    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, silent)
        cfg = HttpUpstream(
            name="silent",
            url=f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}",
            transport="sse" if transport == "sse" else "http",
        )
        outcome = await snapshot_servers([cfg], timeout=1.0)
        tg.cancel_scope.cancel()
        assert isinstance(outcome.failures["silent"], UpstreamTimeout)
        assert "within 1s" in str(outcome.failures["silent"])
