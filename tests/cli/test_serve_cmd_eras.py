"""`cartograph serve` as a child process, driven by an SDK 2 client pinned to the 2026-07-28
era (stateless: no initialize) over stdio and over streamable HTTP; the 2025-11-25 handshake is
driven in test_serve_cmd.py (SDK 2) and here by an SDK 1.x client."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from proxykit import Env, data, text
from sdk1 import sdk1_python
from servekit import CARTOGRAPH, start_serve, stop_serve

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


async def _exercise_modern(client: Client) -> None:
    with anyio.fail_after(60):
        listed = await client.session.list_tools()
        found = data(await client.call_tool("discover", {"task": "add two numbers", "k": 2}))
        added = await client.call_tool(
            "call", {"server": "chaos", "tool": "add", "arguments": {"a": 1, "b": 2}}
        )
        status = data(await client.call_tool("status", {}))
    assert client.protocol_version == MODERN
    assert sorted(t.name for t in listed.tools) == ["call", "discover", "status"]
    assert (listed.ttl_ms, listed.cache_scope) == (30_000, "private")  # the proxy's cache hint
    assert found["tools"] and found["tools"][0]["tool"] == "add"
    assert text(added) == "3" and not added.is_error
    assert {s["server"] for s in status["servers"]} >= {"chaos"}


async def test_a_2026_client_over_stdio_needs_no_handshake(
    env: Env, capfd: pytest.CaptureFixture[str]
) -> None:
    params = StdioServerParameters(
        command=CARTOGRAPH,
        args=["--home", str(env.ws.root), "serve", "--config", str(env.config())],
    )
    async with Client(params, mode=MODERN) as client:
        await _exercise_modern(client)
    logged = capfd.readouterr().err
    assert "validation error" not in logged.lower()  # the front answered within its schema


async def test_a_2026_client_over_http_is_served_stateless(env: Env) -> None:
    proc, url, _ = start_serve(env, "--transport", "http", "--insecure-open", "--port", "0")
    try:
        async with Client(url, mode=MODERN) as client:
            await _exercise_modern(client)
            counted: list[Any] = []
            for _ in range(2):  # no session: each call is its own, on the pooled upstream
                called = await client.call_tool("call", {"server": "chaos", "tool": "counter"})
                counted.append(text(called))
    finally:
        logged = stop_serve(proc)
    assert counted[1] == str(int(counted[0]) + 1)
    assert "validation error" not in logged.lower()


async def test_an_unsupported_version_over_http_is_refused_naming_the_supported_ones(
    env: Env,
) -> None:
    asked = "2099-01-01"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": asked,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": asked,
        "Mcp-Method": "server/discover",
    }
    proc, url, _ = start_serve(env, "--transport", "http", "--insecure-open", "--port", "0")
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.post(url, json=body, headers=headers)
    finally:
        stop_serve(proc)
    raw = answer.text
    if raw.lstrip().startswith(("event:", "data:")):  # an SSE reply: its data line
        raw = next(line[5:] for line in raw.splitlines() if line.startswith("data:"))
    error = json.loads(raw)["error"]
    assert error["code"] == -32022, error
    assert error["data"]["requested"] == asked
    assert MODERN in error["data"]["supported"]


def test_a_2025_sdk1_client_over_stdio_gets_the_handshake_era(env: Env) -> None:
    command = [CARTOGRAPH, "--home", str(env.ws.root), "serve", "--config", str(env.config())]
    client = Path(__file__).resolve().parents[1] / "support" / "sdk1_client.py"
    done = subprocess.run(
        [sdk1_python(), str(client), *command], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["protocol"] == "2025-11-25"
    assert seen["tools"] == ["call", "discover", "status"]
    assert "ttlMs" not in seen["listed"] and "cacheScope" not in seen["listed"]  # 2026 only
    assert seen["discover"]["tools"][0]["tool"] == "add"
    assert seen["added"] == "5"
    assert "validation error" not in done.stderr.lower()
