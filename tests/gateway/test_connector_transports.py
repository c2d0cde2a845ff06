"""Calls through the proxy to upstreams on each transport: stdio (the example fleet), streamable
HTTP and SSE (our chaos server in a child process)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from proxykit import (
    Env,
    attest,
    call,
    connected,
    data,
    start_http_upstream,
    stop_process,
    text,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["http", "sse"])
def web_upstream(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    transport = request.param
    proc, port = start_http_upstream(transport)
    path = "mcp" if transport == "http" else "sse"
    try:
        yield transport, f"http://127.0.0.1:{port}/{path}"
    finally:
        stop_process(proc)


@pytest.mark.parametrize("mode", ["pooled", "one-shot"])
async def test_calls_reach_an_upstream_over_http_and_sse(
    env: Env, web_upstream: tuple[str, str], mode: str
) -> None:
    transport, url = web_upstream
    config = env.config(web={"type": transport, "url": url})
    await attest(env.ws.root, config, ["web"])
    async with connected(env.proxy(config, mode=mode)) as client:
        added = await call(client, "web", "add", {"a": 20, "b": 22})
        echoed = await call(client, "web", "echo", {"text": f"over {transport}"})
        status = data(await client.call_tool("status", {}))
    assert text(added) == "42"
    assert text(echoed) == f"over {transport}"
    web = next(s for s in status["servers"] if s["server"] == "web")
    assert web["tools"] >= 2


async def test_a_drift_over_http_is_caught_when_the_session_starts(
    env: Env, web_upstream: tuple[str, str]
) -> None:
    transport, url = web_upstream
    config = env.config(web={"type": transport, "url": url})
    await attest(env.ws.root, config, ["web"])
    # another client changes the server's tool behind the proxy's back
    async with connected(env.proxy(config)) as client:
        await call(client, "web", "mutate", {"what": "description"})
    async with connected(env.proxy(config)) as client:
        refused = await call(client, "web", "echo", {"text": "x"})
    assert refused.is_error and "quarantined" in text(refused)


@pytest.mark.fleet
async def test_calls_reach_real_fleet_servers_over_stdio(env: Env, example_config: Path) -> None:
    await attest(env.ws.root, example_config, ["time", "everything"])
    async with connected(env.proxy(example_config)) as client:
        now = await call(client, "time", "get_current_time", {"timezone": "UTC"})
        echoed = await call(client, "everything", "echo", {"message": "fleet"})
        wrong = await call(client, "time", "get_current_time", {"timezone": 7})
    assert not now.is_error and "UTC" in text(now)
    assert not echoed.is_error and "fleet" in text(echoed)
    assert wrong.is_error and "arguments.timezone" in text(wrong)
