"""The proxy's three tools through a real SDK client, against our real chaos upstream."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from proxykit import Env, call, chaos_entry, connected, data, text, write_config

from cartograph.access import Caller, Policy
from cartograph.cards.seal import card_version_digest
from cartograph.proxy.status import StatusAnswer
from cartograph.storage import open_store
from cartograph.storage.file_state import FileAuditLog

pytestmark = pytest.mark.anyio


async def test_the_proxy_lists_exactly_discover_call_and_status(env: Env) -> None:
    async with connected(env.proxy()) as client:
        listed = await client.list_tools()
    assert sorted(t.name for t in listed.tools) == ["call", "discover", "status"]


async def test_call_reaches_the_upstream_and_pooled_calls_reuse_one_session(env: Env) -> None:
    async with connected(env.proxy()) as client:
        echoed = await call(client, "chaos", "echo", {"text": "hello"})
        first = await call(client, "chaos", "pid")
        second = await call(client, "chaos", "pid")
    assert not echoed.is_error and text(echoed) == "hello"
    assert text(first) == text(second)


async def test_one_shot_calls_use_a_fresh_process_each_time(env: Env) -> None:
    async with connected(env.proxy(mode="one-shot")) as client:
        first = await call(client, "chaos", "pid")
        second = await call(client, "chaos", "pid")
        added = await call(client, "chaos", "add", {"a": 2, "b": 3})
    assert not first.is_error and not second.is_error
    assert text(first) != text(second)
    assert text(added) == "5"


async def test_discover_answers_from_signed_cards_and_is_audited(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        result = await client.call_tool("discover", {"task": "add two integers", "k": 3})
    answer = data(result)
    assert 1 <= len(answer["tools"]) <= 3
    top = answer["tools"][0]
    assert (top["server"], top["tool"]) in {("chaos", "add"), ("calm", "add")}
    card = proxy.catalog.cards[top["server"]]
    entry = card.tool("add")
    assert entry is not None
    assert top["input_schema"]["properties"] == entry.input_schema["properties"]
    assert top["summary"] == entry.summary
    records = [
        r for r in FileAuditLog(env.ws.logs_dir / "audit.jsonl").read() if r["event"] == "discover"
    ]
    assert records[-1]["query"] == "add two integers"
    first = records[-1]["results"][0]
    assert first["card_digest"] == proxy.catalog.refs[top["server"]].digest
    assert first["key_id"] == card.signature.key_id if card.signature else False
    assert first["generator"] == entry.generator
    assert first["card_version"] == 1  # the exact signed card that ranked it can be opened
    ranked = open_store(env.ws).read_version(top["server"], first["card_version"])
    assert card_version_digest(ranked) == first["card_digest"]


async def test_a_tool_without_a_signed_card_cannot_be_called(env: Env) -> None:
    config = env.config(stranger=env_entry())
    async with connected(env.proxy(config)) as client:
        missing_tool = await call(client, "chaos", "rm_rf")
        missing_server = await call(client, "stranger", "echo", {"text": "x"})
    assert missing_tool.is_error and "no tool 'rm_rf' in its signed card" in text(missing_tool)
    assert missing_server.is_error and "no signed card for server 'stranger'" in text(
        missing_server
    )


def env_entry() -> dict[str, object]:
    from proxykit import chaos_entry

    return chaos_entry()


async def test_wrong_arguments_are_listed_field_by_field_and_nothing_is_sent(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        result = await call(client, "chaos", "add", {"a": "two"})
        status = data(await client.call_tool("status", {}))
    assert result.is_error
    message = text(result)
    assert "arguments.a: 'two' is not of type 'integer'" in message
    assert "'b' is a required property" in message
    assert "nothing was sent" in message
    chaos = next(s for s in status["servers"] if s["server"] == "chaos")
    assert chaos["sessions"] == "not started"


async def test_status_shows_servers_tools_keys_sessions_and_index(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        await call(client, "chaos", "echo", {"text": "warm"})
        status = data(await client.call_tool("status", {}))
    assert status["gateway"] == "pooled"
    names = {s["server"]: s for s in status["servers"]}
    assert set(names) == {"chaos", "calm", "crashy"}
    chaos = names["chaos"]
    assert chaos["tools"] == len(proxy.catalog.cards["chaos"].tools)
    assert chaos["key_id"].startswith("ed25519:")
    assert chaos["card_age_h"] is not None and chaos["card_age_h"] >= 0
    assert chaos["sessions"][0]["state"] == "ready"
    assert names["calm"]["sessions"] == "not started"
    assert "state" in status["index"]
    assert status["totals"]["quarantined"] == 0
    assert StatusAnswer.model_validate(status).to_json() == status  # the one status model
    assert "in_flight" not in chaos["sessions"][0]  # nothing in flight: left out, not 0


async def test_discover_and_status_texts_are_compact_json(env: Env) -> None:
    async with connected(env.proxy()) as client:
        result = await client.call_tool("discover", {"task": "echo some text"})
    raw = text(result)
    assert json.loads(raw) and ", " not in raw[:50] and "\n" not in raw


async def test_call_arguments_sent_as_a_json_string_are_accepted(env: Env) -> None:
    async with connected(env.proxy()) as client:
        as_string = await client.call_tool(
            "call", {"server": "crashy", "tool": "hello", "arguments": '{"name": "str"}'}
        )
        not_json = await client.call_tool(
            "call", {"server": "crashy", "tool": "hello", "arguments": "name=str"}
        )
    assert text(as_string).startswith("hello str")
    assert not_json.is_error and "arguments: 'name=str' is not of type 'object'" in text(not_json)


class Counter:
    """Counts calls of a real function and calls it through."""

    def __init__(self, func: Any) -> None:
        self.func = func
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.func(*args, **kwargs)


async def test_a_discover_after_a_card_change_verifies_the_cards_once(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cartograph.cards.codec as card_store
    import cartograph.proxy.catalog as catalog_module

    monkeypatch.setattr(catalog_module, "REFRESH_INTERVAL", 0.0)  # look at every refresh
    proxy = env.proxy()
    async with proxy.running():
        await proxy.discover("add two numbers", 3)
        verified = Counter(card_store.verify_texts)
        monkeypatch.setattr(card_store, "verify_texts", verified)
        card = env.ws.card_path("calm")
        card.write_bytes(card.read_bytes())  # the store changed: reload, reopen the index
        card_stamp = card.stat().st_mtime_ns
        os.utime(card, ns=(card_stamp, card_stamp + 1_000_000))
        generation = proxy.catalog.generation
        answer = await proxy.discover("add two numbers", 3)
    assert proxy.catalog.generation == generation + 1 and answer.tools
    assert verified.calls == 1  # by the catalog; the index opens over the cards it verified


async def test_a_call_refreshes_the_catalog_once(env: Env) -> None:
    proxy = env.proxy()
    refreshes = Counter(proxy.catalog.refresh)
    proxy.catalog.refresh = refreshes  # type: ignore[method-assign]
    only_calm = Caller("c", Policy(allow=("calm.*",)))
    async with connected(proxy) as client:
        first = await call(client, "chaos", "echo", {"text": "a"})  # starts the session
        assert refreshes.calls == 1, "the first call (and its session start) refreshed again"
        second = await call(client, "chaos", "echo", {"text": "b"})
        assert refreshes.calls == 2
        await proxy.discover("add two numbers", 5, caller=only_calm)  # looks deeper for k
        assert refreshes.calls == 3
    assert text(first) == "a" and text(second) == "b"


async def test_a_carded_server_missing_from_the_config_is_refused_before_the_gateway(
    env: Env,
) -> None:
    config = write_config(env.config_dir, {"chaos": chaos_entry(), "calm": chaos_entry()})
    proxy = env.proxy(config)
    async with connected(proxy) as client:
        refused = await call(client, "crashy", "hello", {"name": "x"})
        status = data(await client.call_tool("status", {}))
    assert refused.is_error and f"no entry in {config}" in text(refused)
    assert "crashy" not in {h.server for h in proxy.gateway.health()}  # nothing was started
    assert "crashy" not in {s["server"] for s in status["servers"]}  # configured ones only
    assert status["cards_not_in_config"]["servers"] == ["crashy"]
