"""`/metrics` of a real `serve --transport http`: the Prometheus text, read back with
prometheus_client's own parser, after real discover and call requests from SDK clients; as
authenticated and rate-limited as `/mcp`, and cut to what each client's policy may see."""

from __future__ import annotations

import httpx
import pytest
from accesskit import Served, session
from prometheus_client.parser import text_string_to_metric_families
from proxykit import Env, call, connected, text

from cartograph.proxy.telemetry import metrics_text

pytestmark = pytest.mark.anyio


def scrape(served: Served, token: str | None) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{served.base}/metrics", headers=headers, timeout=30)


def samples(served: Served, client: str = "full") -> dict[str, dict[tuple, float]]:
    """metric sample name -> {sorted label items: value}, parsed by prometheus_client."""
    response = scrape(served, served.keys[client])
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(response.text)


def parse(exposition: str) -> dict[str, dict[tuple, float]]:
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(exposition):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


async def test_discover_and_call_show_as_latency_histograms_and_upstream_health(
    served: Served,
) -> None:
    async with session(served.url, served.keys["full"]) as client:
        await client.call_tool("discover", {"task": "add two numbers", "k": 3})
        assert text(await call(client, "chaos", "add", {"a": 2, "b": 3})) == "5"
        await call(client, "no-such-server", "add", {"a": 1, "b": 1})
    got = samples(served)
    assert got["cartograph_discover_seconds_count"][(("outcome", "ok"),)] >= 1
    ok = (("outcome", "ok"), ("server", "chaos"))
    assert got["cartograph_call_seconds_count"][ok] >= 1
    assert got["cartograph_call_seconds_sum"][ok] > 0
    inf = (("le", "+Inf"), ("outcome", "ok"), ("server", "chaos"))
    assert got["cartograph_call_seconds_bucket"][inf] == got["cartograph_call_seconds_count"][ok]
    unknown = [k for k in got["cartograph_call_seconds_count"] if ("server", "(unknown)") in k]
    assert unknown, "a call to an unknown server is counted under one label"
    assert not any("no-such-server" in str(k) for k in got["cartograph_call_seconds_count"])
    assert got["cartograph_upstream_up"][(("server", "chaos"),)] == 1
    assert got["cartograph_upstream_starts"][(("server", "chaos"),)] >= 1
    assert got["cartograph_tools"][()] > 0
    assert got["cartograph_cards_rejected"][()] == 0


def test_metrics_need_credentials_and_count_the_refusals(served: Served) -> None:
    before = samples(served).get("cartograph_auth_failures_total", {}).get((), 0.0)
    assert scrape(served, None).status_code == 401
    assert scrape(served, "cg_000000000000_wrong").status_code == 401
    after = samples(served)["cartograph_auth_failures_total"][()]
    assert after == before + 2


def test_a_client_over_its_request_rate_gets_429_and_the_counter_moves(served: Served) -> None:
    codes = [scrape(served, served.keys["chatty"]).status_code for _ in range(5)]
    assert 429 in codes and codes[0] == 200
    got = samples(served)
    assert got["cartograph_rate_limited_total"][(("kind", "http"),)] >= codes.count(429)


async def test_a_restricted_client_sees_only_its_servers_series(served: Served) -> None:
    async with session(served.url, served.keys["full"]) as client:
        assert text(await call(client, "calm", "echo", {"text": "hi"})) == "hi"
    full = samples(served)
    assert (("outcome", "ok"), ("server", "calm")) in full["cartograph_call_seconds_count"]
    limited = samples(served, "limited")
    servers = {dict(k).get("server") for series in limited.values() for k in series} - {None}
    assert servers and servers <= {"chaos", "(unknown)"}
    assert "cartograph_cards_rejected" not in limited
    assert limited["cartograph_servers"][()] == 1


def test_only_get_is_answered(served: Served) -> None:
    response = httpx.post(
        f"{served.base}/metrics",
        headers={"authorization": f"Bearer {served.keys['full']}"},
        timeout=30,
    )
    assert response.status_code == 405


async def test_quarantine_and_crashes_show_per_upstream(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        await call(client, "chaos", "mutate", {"what": "description"})
        held = await call(client, "chaos", "echo", {"text": "now?"})
        crashed = await call(client, "chaos", "crash")
        await call(client, "chaos", "add", {"a": 1, "b": 1})  # restarts it
        got = parse(metrics_text(proxy))
    assert held.is_error and crashed.is_error
    assert got["cartograph_quarantined_tools"][(("server", "chaos"),)] == 1
    assert got["cartograph_quarantined_tools"][(("server", "calm"),)] == 0
    refused = (("outcome", "ToolQuarantined"), ("server", "chaos"))
    assert got["cartograph_call_seconds_count"][refused] == 1
    assert got["cartograph_upstream_crashes"][(("server", "chaos"),)] >= 1
    assert got["cartograph_upstream_starts"][(("server", "chaos"),)] >= 2
    assert got["cartograph_upstream_up"][(("server", "chaos"),)] == 1
