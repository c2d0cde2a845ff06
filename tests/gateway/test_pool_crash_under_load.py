"""An upstream killed while calls queue for it: one restart, no orphaned sessions, and status
counts the upstream processes the pool owns (checked against /proc)."""

from __future__ import annotations

import os
import signal
from dataclasses import replace

import anyio
import pytest
from processkit import child_pids
from proxykit import FAST, Env, call, connected, data, text

pytestmark = pytest.mark.anyio


def _owned(status: dict[str, object], server: str) -> int:
    servers = status["servers"]
    assert isinstance(servers, list)
    entry = next(s for s in servers if s["server"] == server)
    return sum(row["owned"] for row in entry["sessions"])


async def test_killing_an_upstream_under_load_starts_one_session_not_one_per_waiter(
    env: Env,
) -> None:
    limits = replace(FAST, max_in_flight=4, backoff_base=0.3, backoff_cap=0.3)
    proxy = env.proxy(limits=limits)
    async with connected(proxy) as client:
        before = child_pids()
        results: list[str] = []

        async def one(i: int) -> None:
            answer = await call(client, "chaos", "nap", {"seconds": 0.5})
            results.append("error" if answer.is_error else "ok")

        for _ in range(4):  # four crashes, each with 20 calls queued behind it
            pid = int(text(await call(client, "chaos", "pid")))
            results.clear()
            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(one, i)
                await anyio.sleep(0.2)  # four calls are in the session, sixteen queue
                os.kill(pid, signal.SIGKILL)
            assert len(results) == 20 and "ok" in results
        status = data(await client.call_tool("status", {}))
        kids = child_pids() - before
        assert len(kids) == 1, f"{len(kids)} chaos processes for one upstream"
        assert _owned(status, "chaos") == len(kids)
        chaos = next(s for s in status["servers"] if s["server"] == "chaos")
        assert chaos["sessions"][0]["state"] == "ready"
        assert chaos["sessions"][0]["crashes"] == 4
    assert not child_pids() & kids


async def test_waiters_behind_a_failed_start_share_one_retry(env: Env) -> None:
    """The first call's start fails; the calls that waited for the slot do not each start a
    process of their own: the restart count grows by one per backoff period, not per waiter."""
    config = env.config(chaos={"command": "/nonexistent/server-binary", "args": []})
    limits = replace(FAST, backoff_base=0.5, backoff_cap=0.5, max_in_flight=8)
    proxy = env.proxy(config, limits=limits)
    async with connected(proxy) as client:
        answers: list[str] = []

        async def one() -> None:
            answers.append(text(await call(client, "chaos", "echo", {"text": "x"})))

        async with anyio.create_task_group() as tg:
            for _ in range(12):
                tg.start_soon(one)
        health = {h.server: h for h in proxy.gateway.health()}
    assert len(answers) == 12 and all(a.count("upstream 'chaos'") == 1 for a in answers), answers
    assert health["chaos"].starts <= 3, f"{health['chaos'].starts} starts for 12 waiters"


async def test_an_upstream_killed_while_idle_is_noticed_at_once_and_the_next_call_works(
    env: Env,
) -> None:
    """A request sent on a session whose upstream has already exited is never answered (the
    SDK answers only the requests pending when the connection ends): the pool must notice the
    exit itself, not wait for the next call to time out."""
    proxy = env.proxy(limits=replace(FAST, call_timeout=20.0))
    async with connected(proxy) as client:
        pid = int(text(await call(client, "chaos", "pid")))
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(10):
            await proxy.gateway.wait_closed("chaos")  # type: ignore[union-attr]
        assert next(h for h in proxy.gateway.health() if h.server == "chaos").crashes == 1
        with anyio.fail_after(10):  # not the 20 s call timeout
            again = await call(client, "chaos", "pid")
    assert not again.is_error and int(text(again)) != pid


async def test_every_call_in_flight_when_the_upstream_dies_is_answered_at_once(env: Env) -> None:
    """The SDK answers the requests pending when a connection ends; the pool must not tear the
    session down before it has (those calls would wait the whole call timeout)."""
    proxy = env.proxy(limits=replace(FAST, call_timeout=30.0, max_in_flight=8))
    async with connected(proxy) as client:
        pid = int(text(await call(client, "chaos", "pid")))
        answers: list[str] = []
        all_answered = anyio.Event()

        async def nap() -> None:
            answers.append(text(await call(client, "chaos", "nap", {"seconds": 20})))
            if len(answers) == 8:
                all_answered.set()

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(nap)
            await anyio.sleep(1.0)  # all eight are in the session
            os.kill(pid, signal.SIGKILL)
            with anyio.fail_after(8):  # far less than the 30 s call timeout
                await all_answered.wait()
    assert all("closed during the call" in a for a in answers), answers
