"""Fault injection: upstreams of ours that crash, hang, start slowly, speak garbage, send 50 MB
or flood notifications. The proxy answers each with a clear error and keeps serving others."""

from __future__ import annotations

from dataclasses import replace

import anyio
import pytest
from proxykit import FAST, Env, call, chaos_entry, connected, data, text

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["pooled", "one-shot"])
async def test_a_crash_mid_call_is_an_error_and_the_server_comes_back(env: Env, mode: str) -> None:
    async with connected(env.proxy(mode=mode)) as client:
        crashed = await call(client, "chaos", "crash")
        calm = await call(client, "calm", "echo", {"text": "calm"})
        again = await call(client, "chaos", "echo", {"text": "back"})
        status = data(await client.call_tool("status", {}))
    assert crashed.is_error
    assert "upstream 'chaos'" in text(crashed)
    assert "retry" in text(crashed)
    assert text(calm) == "calm"
    assert not again.is_error and text(again) == "back"
    chaos = next(s for s in status["servers"] if s["server"] == "chaos")
    assert chaos["sessions"][0]["crashes"] >= 1


async def test_a_hanging_call_times_out_with_retry_and_others_keep_working(env: Env) -> None:
    proxy = env.proxy(limits=replace(FAST, call_timeout=2.0))
    async with connected(proxy) as client:
        results: dict[str, object] = {}

        async def hang() -> None:
            results["hang"] = await call(client, "chaos", "hang")

        async with anyio.create_task_group() as tg:
            tg.start_soon(hang)
            results["calm"] = await call(client, "calm", "echo", {"text": "fine"})
        same_server = await call(client, "chaos", "echo", {"text": "after"})
    hung = results["hang"]
    assert hung.is_error  # type: ignore[attr-defined]
    assert "did not finish within 2 s; retry" in text(hung)  # type: ignore[arg-type]
    assert text(results["calm"]) == "fine"  # type: ignore[arg-type]
    assert text(same_server) == "after"


async def test_a_slow_start_within_the_timeout_is_served(env: Env) -> None:
    config = env.config(chaos=chaos_entry(env={"CHAOS_START_DELAY": "2"}))
    async with connected(env.proxy(config)) as client:
        echoed = await call(client, "chaos", "echo", {"text": "patient"})
    assert text(echoed) == "patient"


@pytest.mark.parametrize("mode", ["pooled", "one-shot"])
async def test_a_start_slower_than_the_timeout_says_retry(env: Env, mode: str) -> None:
    config = env.config(chaos=chaos_entry(env={"CHAOS_START_DELAY": "30"}))
    proxy = env.proxy(config, mode=mode, limits=replace(FAST, start_timeout=6))
    async with connected(proxy) as client:
        slow = await call(client, "chaos", "echo", {"text": "x"})
        calm = await call(client, "calm", "echo", {"text": "ok"})
    assert slow.is_error and "retry" in text(slow)
    assert text(calm) == "ok"


async def test_garbage_on_stdout_is_skipped_and_the_session_survives(env: Env) -> None:
    config = env.config(chaos=chaos_entry(env={"CHAOS_BANNER": "1"}))
    async with connected(env.proxy(config)) as client:
        answered = await call(client, "chaos", "garbage")
        echoed = await call(client, "chaos", "echo", {"text": "still speaking"})
    assert text(answered) == "ok"
    assert text(echoed) == "still speaking"


async def test_a_50_mb_reply_is_refused_with_advice_and_the_proxy_keeps_serving(env: Env) -> None:
    async with connected(env.proxy()) as client:
        huge = await call(client, "chaos", "big", {"mb": 50})
        small = await call(client, "chaos", "big", {"mb": 1})
        calm = await call(client, "calm", "echo", {"text": "fine"})
    assert huge.is_error
    assert "MB message limit, and was dropped" in text(huge)
    assert "ask for less" in text(huge)
    assert len(text(small)) == 1_000_000
    assert text(calm) == "fine"


async def test_a_reply_over_the_result_limit_is_refused(env: Env) -> None:
    async with connected(env.proxy(limits=replace(FAST, max_result_bytes=500_000))) as client:
        over = await call(client, "chaos", "big", {"mb": 1})
        echoed = await call(client, "chaos", "echo", {"text": "next"})
    assert over.is_error and "over the proxy's 0.5 MB limit; ask for less" in text(over)
    assert text(echoed) == "next"


async def test_a_flood_of_log_notifications_does_not_disturb_calls(env: Env) -> None:
    async with connected(env.proxy()) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, client, "chaos", "flood", {"n": 3000})
            calm = await call(client, "calm", "echo", {"text": "undisturbed"})
        after = await call(client, "chaos", "echo", {"text": "after the flood"})
    assert text(calm) == "undisturbed"
    assert text(after) == "after the flood"


async def test_an_upstream_that_cannot_start_is_named_in_the_error(env: Env) -> None:
    config = env.config(chaos={"command": "/nonexistent/server-binary", "args": []})
    async with connected(env.proxy(config)) as client:
        failed = await call(client, "chaos", "echo", {"text": "x"})
        calm = await call(client, "calm", "echo", {"text": "ok"})
    assert failed.is_error
    assert "upstream 'chaos'" in text(failed) and "/nonexistent/server-binary" in text(failed)
    assert text(calm) == "ok"


async def test_per_client_sessions_keep_one_agents_state_from_another(env: Env) -> None:
    from proxykit import second_client

    proxy = env.proxy(per_client=frozenset({"chaos"}))
    async with connected(proxy) as alice:
        a1 = await call(alice, "chaos", "counter")
        a2 = await call(alice, "chaos", "counter")
        async with second_client(proxy) as bob:
            b1 = await call(bob, "chaos", "counter")
        shared_1 = await call(alice, "calm", "counter")
        async with second_client(proxy) as carol:
            shared_2 = await call(carol, "calm", "counter")
    assert (text(a1), text(a2), text(b1)) == ("1", "2", "1")
    assert (text(shared_1), text(shared_2)) == ("1", "2")  # calm is shared on purpose


async def test_calls_beyond_the_in_flight_limit_wait_their_turn(env: Env) -> None:
    proxy = env.proxy(limits=replace(FAST, max_in_flight=1, call_timeout=3.0))
    finished: list[str] = []
    async with connected(proxy) as client:
        await call(client, "chaos", "echo", {"text": "warm"})

        async def run(name: str, tool: str, arguments: dict[str, object]) -> None:
            await call(client, "chaos", tool, arguments)
            finished.append(name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "hang", "hang", {})
            await anyio.wait_all_tasks_blocked()  # the hang holds the only slot
            tg.start_soon(run, "echo", "echo", {"text": "queued"})
    assert finished == ["hang", "echo"]  # without the bound the echo would finish first


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("bad_shape", "answered tools/call against the protocol (content"),
        ("no_result", "malformed JSON-RPC reply"),
        ("wrong_id", "did not finish within 2 s; retry"),
    ],
)
async def test_malformed_json_rpc_replies_are_clear_errors(
    env: Env, tool: str, expected: str
) -> None:
    async with connected(env.proxy(limits=replace(FAST, call_timeout=2.0))) as client:
        bad = await call(client, "crashy", tool)
        after = await call(client, "crashy", "hello", {"name": "again"})
    assert bad.is_error and expected in text(bad)
    assert text(after).startswith("hello again")


async def test_after_a_crash_the_restart_backs_off_and_says_when(env: Env) -> None:
    proxy = env.proxy(limits=replace(FAST, backoff_base=120.0, backoff_cap=600.0))
    async with connected(proxy) as client:
        crashed = await call(client, "crashy", "boom")
        refused = await call(client, "crashy", "hello")
        status = data(await client.call_tool("status", {}))
    assert crashed.is_error
    assert refused.is_error and "the next restart is in 120 s: retry then" in text(refused)
    crashy = next(s for s in status["servers"] if s["server"] == "crashy")
    assert crashy["sessions"][0]["state"] == "backoff"


async def test_an_idle_pooled_session_is_closed(env: Env) -> None:
    from processkit import child_pids

    proxy = env.proxy(limits=replace(FAST, idle_timeout=0.5))
    async with connected(proxy) as client:
        before = child_pids()
        await call(client, "crashy", "hello")
        assert len(child_pids() - before) == 1
        with anyio.fail_after(20):
            await proxy.gateway.wait_closed("crashy")  # type: ignore[union-attr]
        assert child_pids() <= before
        again = await call(client, "crashy", "hello")  # started again on demand
    assert text(again).startswith("hello you")


async def test_a_clients_own_upstream_session_ends_when_it_disconnects(env: Env) -> None:
    from processkit import child_pids
    from proxykit import second_client

    proxy = env.proxy(per_client=frozenset({"crashy"}))
    async with connected(proxy) as alice:
        await call(alice, "crashy", "hello")
        before = child_pids()
        async with second_client(proxy) as bob:
            hello = await call(bob, "crashy", "hello", {"name": "bob"})
            assert len(child_pids() - before) == 1  # bob's own crashy process
        assert child_pids() <= before  # gone as soon as bob is
        still = await call(alice, "crashy", "hello", {"name": "alice"})
    assert text(hello).startswith("hello bob") and text(still).startswith("hello alice")
