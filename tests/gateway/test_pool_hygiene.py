"""Process hygiene: many one-shot calls and many upstream crashes leave no child process and no
file descriptor behind (counted from /proc)."""

from __future__ import annotations

import os

import pytest
from processkit import child_pids, open_fds
from proxykit import Env, call, connected, text

pytestmark = pytest.mark.anyio


async def _one_shot_calls(env: Env, n: int) -> None:
    proxy = env.proxy(mode="one-shot")
    async with connected(proxy) as client:
        await call(client, "crashy", "hello")  # imports, caches, thread pool
        fds, kids = open_fds(), child_pids()
        for i in range(n):
            result = await call(client, "crashy", "hello", {"name": str(i)})
            assert text(result).startswith(f"hello {i} from ")
        assert open_fds() <= fds, f"fds grew from {fds} to {open_fds()}"
        assert child_pids() <= kids


async def test_one_shot_calls_leave_no_processes_or_fds_behind(env: Env) -> None:
    await _one_shot_calls(env, int(os.environ.get("CARTOGRAPH_ONESHOT_N", "50")))


@pytest.mark.slow
async def test_a_thousand_one_shot_calls_leave_no_processes_or_fds_behind(env: Env) -> None:
    await _one_shot_calls(env, 1000)


async def test_a_hundred_upstream_crashes_leave_no_processes_or_fds_behind(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        await call(client, "crashy", "hello")
        await call(client, "calm", "echo", {"text": "warm-up"})
        fds, kids = open_fds(), child_pids()
        for _ in range(100):
            crashed = await call(client, "crashy", "boom")
            assert crashed.is_error and "retry" in text(crashed)
        back = await call(client, "crashy", "hello")
        assert text(back).startswith("hello you from ")
        # one live crashy session again, as before: same number of children and fds
        assert len(child_pids()) == len(kids)
        assert open_fds() <= fds, f"fds grew from {fds} to {open_fds()}"
        health = {h.server: h for h in proxy.gateway.health()}
        assert health["crashy"].crashes >= 100
    assert not child_pids() & kids  # every upstream of this proxy is gone after shutdown
