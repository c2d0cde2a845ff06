"""A serving proxy publishes its health on the store's board, and says when it stops.

A real proxy over a copy of the golden workspace, real upstreams (our chaos server), a real SDK
client in memory, the real file board in the workspace."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import pytest
from proxykit import Env, call, connected

from cartograph.proxy import health
from cartograph.proxy.core import Proxy
from cartograph.storage import open_store
from cartograph.storage.health import ReplicaHealth, replica_name

pytestmark = pytest.mark.anyio


def mine(env: Env) -> ReplicaHealth | None:
    rows = [r for r in open_store(env.ws).health_board().read() if r.replica == replica_name()]
    return rows[0] if rows else None


async def wait_for(env: Env, check: Any) -> ReplicaHealth:
    with anyio.fail_after(30):
        while True:
            row = mine(env)
            if row is not None and check(row):
                return row
            await anyio.sleep(0.05)


def quiet(proxy: Proxy) -> Proxy:
    """``proxy`` publishing nothing itself (the test runs publish_health at its own pace)."""
    proxy.settings = dataclasses.replace(proxy.settings, publish_health=False)
    return proxy


async def test_serving_publishes_each_server_at_once_and_stopped_on_the_way_out(
    env: Env,
) -> None:
    proxy = env.proxy()
    async with connected(proxy):
        row = await wait_for(env, lambda r: r.state == "serving")
        body = row.body
        assert body["pid"] > 0 and body["gateway"] == "pooled"
        servers = {s["server"]: s for s in body["servers"]}
        assert set(servers) == {"chaos", "calm", "crashy"}
        assert servers["chaos"]["tools"] > 0 and servers["chaos"]["quarantined"] == []
        assert body["totals"]["servers"] == 3
    stopped = mine(env)
    assert stopped is not None and stopped.state == "stopped"


async def test_a_crash_shows_in_the_next_record(env: Env) -> None:
    proxy = quiet(env.proxy())
    async with connected(proxy) as client, anyio.create_task_group() as tg:
        tg.start_soon(health.publish_health, proxy, 0.05)
        await call(client, "chaos", "crash")
        await call(client, "chaos", "echo", {"text": "back"})
        row = await wait_for(
            env, lambda r: "ready" in chaos_of(r)["sessions"] and chaos_of(r)["crashes"]
        )
        chaos = chaos_of(row)
        assert chaos["crashes"] >= 1 and chaos["starts"] >= 2
        tg.cancel_scope.cancel()


def chaos_of(row: ReplicaHealth) -> dict[str, Any]:
    return next(s for s in row.body["servers"] if s["server"] == "chaos")


class BrokenBoard:
    where = "/nowhere/replicas"
    tries = 0

    def publish(self, replica: str, body: dict[str, Any]) -> None:
        BrokenBoard.tries += 1
        raise OSError(28, "No space left on device")

    def read(self) -> list[ReplicaHealth]:
        return []


async def test_a_board_that_cannot_be_written_is_logged_once_and_serving_goes_on(
    env: Env, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = quiet(env.proxy())
    monkeypatch.setattr(proxy.store, "health_board", BrokenBoard)
    async with connected(proxy) as client, anyio.create_task_group() as tg:
        tg.start_soon(health.publish_health, proxy, 0.02)
        with anyio.fail_after(30):
            while BrokenBoard.tries < 5:
                await anyio.sleep(0.02)
        echoed = await call(client, "chaos", "echo", {"text": "still here"})
        assert not echoed.is_error
        tg.cancel_scope.cancel()
    warnings = [r for r in caplog.records if "cannot publish this replica's health" in r.message]
    assert len(warnings) == 1 and "/nowhere/replicas" in warnings[0].message
    assert "No space left" in warnings[0].message
