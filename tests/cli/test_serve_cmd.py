"""`cartograph serve` as a child process, driven by the official SDK client over stdio and over
streamable HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from proxykit import Env, call, data, text

pytestmark = pytest.mark.anyio

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))
UPSTREAM_PIDS: list[int] = []


async def _exercise(client: ClientSession) -> None:
    with anyio.fail_after(60):
        await client.initialize()
        listed = await client.list_tools()
        found = data(await client.call_tool("discover", {"task": "add two numbers", "k": 2}))
    assert sorted(t.name for t in listed.tools) == ["call", "discover", "status"]
    assert found["tools"] and found["tools"][0]["tool"] == "add"
    assert text(await call(client, "chaos", "add", {"a": 1, "b": 2})) == "3"
    assert text(await call(client, "crashy", "hello", {"name": "cli"})).startswith("hello cli")
    bad = await call(client, "chaos", "add", {"a": 1})
    assert bad.is_error and "'b' is a required property" in text(bad)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_serve_over_stdio_and_its_upstreams_end_with_it(env: Env) -> None:
    config = env.config()
    params = StdioServerParameters(
        command=CARTOGRAPH, args=["--home", str(env.ws.root), "serve", "--config", str(config)]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await _exercise(client)
        upstream = int(text(await call(client, "chaos", "pid")))
        assert _alive(upstream)
    assert not _alive(upstream)


@pytest.fixture
def http_proxy(env: Env) -> Iterator[str]:
    config = env.config()
    proc = subprocess.Popen(
        [
            CARTOGRAPH,
            "--home",
            str(env.ws.root),
            "serve",
            "--transport",
            "http",
            "--insecure-open",
            "--port",
            "0",
            "--config",
            str(config),
            "--per-client",
            "chaos",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    url = None
    for line in proc.stderr:  # ends at EOF if the server dies
        if "serving MCP at " in line:
            url = line.rsplit(" ", 1)[1].strip()
            break
    try:
        assert url, "serve --transport http did not report its URL"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()
        for pid in UPSTREAM_PIDS:
            assert not _alive(pid), f"upstream {pid} outlived `serve`"
        UPSTREAM_PIDS.clear()


async def test_serve_over_streamable_http_with_per_client_sessions(http_proxy: str) -> None:
    async with (
        streamable_http_client(http_proxy) as (read, write),
        ClientSession(read, write) as alice,
    ):
        await _exercise(alice)
        first = await call(alice, "chaos", "counter")
        async with (
            streamable_http_client(http_proxy) as (read2, write2),
            ClientSession(read2, write2) as bob,
        ):
            await bob.initialize()
            bobs = await call(bob, "chaos", "counter")
            status = data(await bob.call_tool("status", {}))
        second = await call(alice, "chaos", "counter")
        UPSTREAM_PIDS.append(int(text(await call(alice, "chaos", "pid"))))
    assert (text(first), text(bobs), text(second)) == ("1", "1", "2")
    chaos = next(s for s in status["servers"] if s["server"] == "chaos")
    assert len(chaos["sessions"]) == 2  # one per client
    assert json.dumps(status)


async def test_many_concurrent_http_clients_get_no_errors(http_proxy: str) -> None:
    failures: list[str] = []

    async def agent(n: int) -> None:
        async with (
            streamable_http_client(http_proxy) as (read, write),
            ClientSession(read, write) as s,
        ):
            with anyio.fail_after(120):
                await s.initialize()
                for i in range(3):
                    found = await s.call_tool("discover", {"task": f"add numbers {n} {i}"})
                    added = await call(s, "calm", "add", {"a": n, "b": i})
                    if found.is_error or text(added) != str(n + i):
                        failures.append(f"{n}/{i}: {text(found)[:80]} {text(added)[:80]}")

    async with anyio.create_task_group() as tg:
        for n in range(12):
            tg.start_soon(agent, n)
    assert failures == []
