"""Resource subscriptions on a 2026-07-28 ``subscriptions/listen`` stream, through the proxy to
the real ``everything`` server of the example fleet (needs scripts/install-fleet.sh): checked
like a read, forwarded upstream on the pooled session, heard by that stream alone under the URI
it asked for, released when the stream ends; refused in one-shot mode and by policy, and not a
method of a 2025-era session. A real SDK 2 client pinned to the era, in process."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, types
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from proxykit import Env, sign_server

from cartograph.access import Access, Caller, Policy
from cartograph.proxy.addresses import wrap_uri
from cartograph.proxy.memory import session_on
from cartograph.proxy.server import build_server
from cartograph.storage.file_state import FileAuditLog as AuditLog
from cartograph.upstream.snapshot import ServerSnapshot

pytestmark = [pytest.mark.anyio, pytest.mark.fleet]

MODERN = "2026-07-28"
DOC = "demo://resource/static/document/architecture.md"
TOGGLE = {"server": "everything", "tool": "toggle-subscriber-updates"}


class Frames:
    """The methods of the stamped frames the client received, by listen stream."""

    def __init__(self) -> None:
        self.by_stream: dict[Any, list[str]] = defaultdict(list)

    async def __call__(self, message: Any) -> None:
        meta = getattr(getattr(message, "params", None), "meta", None) or {}
        if isinstance(message, types.ServerNotification) and SUBSCRIPTION_ID_META_KEY in meta:
            self.by_stream[meta[SUBSCRIPTION_ID_META_KEY]].append(message.method)


async def test_a_listen_stream_hears_updates_of_the_resource_it_asked_for_alone(
    env: Env, example_config: Any, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    proxy = env.proxy(example_config)
    wrapped, frames = wrap_uri("everything", DOC), Frames()
    async with proxy.running():
        async with (
            Client(build_server(proxy), mode=MODERN, message_handler=frames) as client,
            client.listen(resource_subscriptions=[wrapped]) as watching,
            client.listen(tools_list_changed=True) as other,
        ):
            held = proxy.subscriptions.count()
            with anyio.fail_after(60):
                await client.call_tool("call", TOGGLE)  # updates of what is subscribed
                heard = await anext(watching)
                await client.call_tool("call", TOGGLE)  # and no more
        left = proxy.subscriptions.count()  # the server's handlers have ended with the client
    assert held == 1 and left == 0 and heard == ResourceUpdated(uri=wrapped)
    assert set(frames.by_stream[watching.subscription_id]) == {"notifications/resources/updated"}
    assert other.subscription_id not in frames.by_stream  # asked for no resource
    subscribed = [e for e in _audit(env) if e["event"] == "subscribe"]
    assert [(e["server"], e["upstream_uri"]) for e in subscribed] == [("everything", DOC)]


async def test_one_shot_mode_refuses_a_listen_that_asks_for_resources(
    env: Env, example_config: Any, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    proxy = env.proxy(example_config, mode="one-shot")
    async with proxy.running(), Client(build_server(proxy), mode=MODERN) as client:
        with anyio.fail_after(60):
            raw = await client.session.send_discover(MODERN)
            async with client.listen(tools_list_changed=True) as lists:
                honored = lists.honored
            with pytest.raises(MCPError) as caught:
                async with client.listen(resource_subscriptions=[wrap_uri("everything", DOC)]):
                    pass
    caps = types.DiscoverResult.model_validate(raw).capabilities
    assert caps.resources is not None and not caps.resources.subscribe
    assert caps.resources.list_changed and honored.tools_list_changed
    assert "pooled" in caught.value.error.message


async def test_a_policy_that_hides_the_server_refuses_its_resources_on_listen(
    env: Env, example_config: Any, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    proxy = env.proxy(example_config)
    caller = Caller("limited", Policy(allow=("chaos.*",)))
    server = build_server(proxy, Access(), caller)
    async with proxy.running(), Client(server, mode=MODERN) as client:
        with anyio.fail_after(60), pytest.raises(MCPError) as caught:
            async with client.listen(resource_subscriptions=[wrap_uri("everything", DOC)]):
                pass
    assert caught.value.error.code == -32002  # as resources/subscribe and reads answer
    assert proxy.subscriptions.count() == 0


async def test_a_2025_session_still_finds_no_listen_method(env: Env) -> None:
    proxy = env.proxy()
    request = types.SubscriptionsListenRequest(
        params=types.SubscriptionsListenRequestParams(
            notifications=types.SubscriptionFilter(tools_list_changed=True)
        )
    )
    async with proxy.running(), session_on(build_server(proxy)) as client:
        with anyio.fail_after(30), pytest.raises(MCPError) as caught:
            await client.send_request(request, types.SubscriptionsListenResult)
    assert caught.value.error.code == types.METHOD_NOT_FOUND  # it is told on its session


def _audit(env: Env) -> list[dict[str, Any]]:
    return AuditLog(env.ws.logs_dir / "audit.jsonl").read()
