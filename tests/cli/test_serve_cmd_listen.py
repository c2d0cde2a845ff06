"""`cartograph serve` tells a 2026-07-28 client that its lists changed on the client's own
``subscriptions/listen`` stream (SEP-2575), over stdio and over streamable HTTP: a real SDK 2
client pinned to that era opens the streams, the test removes a card from the workspace the
serving process watches, and each stream receives only the kinds of change it asked for. Over
HTTP the stream is behind the same bearer check as every other request, and ends gracefully
when the server stops."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import anyio
import httpx
import pytest
from accesskit import Served
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import Subscription, ToolsListChanged
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from proxykit import Env
from servekit import CARTOGRAPH, start_serve, stop_serve

from cartograph.storage import open_store

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ALL_THREE = {
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
}


class Frames:
    """Every stamped frame the client received, by the listen stream it came on."""

    def __init__(self) -> None:
        self.by_stream: dict[Any, list[str]] = defaultdict(list)

    async def __call__(self, message: Any) -> None:
        if not isinstance(message, types.ServerNotification):
            return
        params = getattr(message, "params", None)
        meta = getattr(params, "meta", None) or {}
        stream = meta.get(SUBSCRIPTION_ID_META_KEY)
        if stream is not None:
            self.by_stream[stream].append(message.method)


async def _hear_a_card_removed(client: Client, env: Env, frames: Frames) -> Subscription:
    """Open a tools-only stream and an all-lists stream, remove a card, and check what each
    heard; returns the tools-only stream, still open."""
    with anyio.fail_after(60):  # a pinned client adopts no capabilities: ask for them
        raw = await client.session.send_discover(MODERN)
    caps = types.DiscoverResult.model_validate(raw).capabilities
    assert caps.tools is not None and caps.tools.list_changed  # served: subscriptions/listen
    assert caps.prompts is not None and caps.prompts.list_changed
    async with (
        client.listen(tools_list_changed=True) as only_tools,
        client.listen(
            tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
        ) as every_list,
    ):
        assert only_tools.honored == types.SubscriptionFilter(tools_list_changed=True)
        assert open_store(env.ws).remove_card("crashy")  # as `cartograph cards prune` does
        with anyio.fail_after(30):
            first = await anext(only_tools)
            heard = {type(await anext(every_list)).__name__ for _ in range(3)}
            listed = await client.session.list_tools()  # a round trip behind the change
    assert isinstance(first, ToolsListChanged)
    assert heard == {"ToolsListChanged", "PromptsListChanged", "ResourcesListChanged"}
    discover = next(t for t in listed.tools if t.name == "discover")
    assert "crashy" not in (discover.description or "")
    assert set(frames.by_stream[every_list.subscription_id]) == ALL_THREE
    assert frames.by_stream[only_tools.subscription_id] == ["notifications/tools/list_changed"]
    return only_tools


async def test_a_2026_client_over_stdio_hears_tools_list_changed_on_its_listen_stream(
    env: Env,
) -> None:
    params = StdioServerParameters(
        command=CARTOGRAPH,
        args=["--home", str(env.ws.root), "serve", "--config", str(env.config())],
    )
    frames = Frames()
    async with Client(params, mode=MODERN, message_handler=frames) as client:
        await _hear_a_card_removed(client, env, frames)
    assert len(frames.by_stream) == 2  # the two streams, and no stamped frame besides


async def test_a_2026_client_over_http_hears_tools_list_changed_until_the_server_stops(
    env: Env,
) -> None:
    proc, url, _ = start_serve(env, "--transport", "http", "--insecure-open", "--port", "0")
    frames = Frames()
    try:
        async with (
            Client(url, mode=MODERN, message_handler=frames) as client,
            client.listen(tools_list_changed=True) as later,
        ):
            await _hear_a_card_removed(client, env, frames)
            proc.terminate()  # SIGTERM: the open stream ends with its result
            with anyio.fail_after(30):
                rest = [event async for event in later]
    finally:
        logged = stop_serve(proc)
    assert rest == [ToolsListChanged()]  # then a graceful end: an abrupt one raises
    assert frames.by_stream[later.subscription_id] == ["notifications/tools/list_changed"]
    assert "Traceback" not in logged


def _listen_request(asked: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    body = {
        "jsonrpc": "2.0",
        "id": "listen-raw",
        "method": "subscriptions/listen",
        "params": {
            "notifications": asked,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    return body, headers


async def test_a_listen_request_without_credentials_is_refused(served: Served) -> None:
    body, headers = _listen_request({"toolsListChanged": True})
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.post(served.url, json=body, headers=headers)
    assert answer.status_code == 401
    assert "Bearer" in answer.headers["www-authenticate"]


async def test_an_authenticated_client_listens_over_http(served: Served) -> None:
    key = served.keys["limited"]
    http = httpx.AsyncClient(headers={"authorization": f"Bearer {key}"}, timeout=60)
    transport = streamable_http_client(served.url, http_client=http)
    async with (
        http,
        Client(transport, mode=MODERN) as client,
        client.listen(resources_list_changed=True) as stream,
    ):
        honored = stream.honored
    assert honored == types.SubscriptionFilter(resources_list_changed=True)


async def test_a_limited_client_may_not_watch_a_resource_its_policy_hides(served: Served) -> None:
    body, headers = _listen_request(
        {"resourceSubscriptions": ["cartograph://calm/chaos%3A%2F%2Fx"]}
    )
    headers["authorization"] = f"Bearer {served.keys['limited']}"
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.post(served.url, json=body, headers=headers)
    raw = answer.text
    if raw.lstrip().startswith(("event:", "data:")):  # an SSE reply: its data line
        raw = next(line[5:] for line in raw.splitlines() if line.startswith("data:"))
    error = json.loads(raw)["error"]
    assert error["code"] == -32002 and "no resource" in error["message"]
