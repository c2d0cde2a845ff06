"""Limits on what an agent sends: task length, k, argument size, names; the audit log keeps a
bounded excerpt and a hash of long inputs, and no entry grows past its limit."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest
from proxykit import Env, call, connected, data, text

from cartograph.proxy.core import ProxySettings
from cartograph.proxy.limits import InputLimits, bound_record, json_size
from cartograph.storage.file_state import FileAuditLog as AuditLog

pytestmark = pytest.mark.anyio


def _audit(env: Env, event: str) -> list[dict[str, object]]:
    return [r for r in AuditLog(env.ws.logs_dir / "audit.jsonl").read() if r["event"] == event]


async def test_a_task_over_the_limit_is_refused_before_ranking_and_audited_as_a_hash(
    env: Env,
) -> None:
    huge = "add two integers " * 250_000  # 4.25 MB
    async with connected(env.proxy()) as client:
        refused = await client.call_tool("discover", {"task": huge})
        fine = data(await client.call_tool("discover", {"task": "add two integers " * 50}))
    assert refused.is_error
    assert "4,250,000 characters, over the limit of 2,000" in text(refused)
    assert "in a sentence or two" in text(refused)
    assert fine["tools"]
    refused_record, answered = _audit(env, "discover")
    assert refused_record["outcome"] == "LimitExceeded" and "results" not in refused_record
    assert refused_record["query"]["chars"] == len(huge)  # type: ignore[index]
    query = answered["query"]
    assert isinstance(query, dict)  # 850 characters: excerpt and hash, not the text
    long_task = "add two integers " * 50
    assert query["sha256"] == hashlib.sha256(long_task.strip().encode()).hexdigest()
    assert query["chars"] == len(long_task.strip()) and len(query["excerpt"]) == 200
    assert len(json.dumps(refused_record)) < 1024


@pytest.mark.parametrize(("k", "expected"), [(0, "k: 0 is less than"), (21, "k: 21 is greater")])
async def test_k_outside_its_range_is_a_clear_tool_error(env: Env, k: int, expected: str) -> None:
    async with connected(env.proxy()) as client:
        refused = await client.call_tool("discover", {"task": "add", "k": k})
    assert refused.is_error and expected in text(refused)


async def test_proxy_api_refuses_k_past_the_limit(env: Env) -> None:
    from cartograph.errors import LimitExceeded

    proxy = env.proxy()
    async with proxy.running():
        with pytest.raises(LimitExceeded, match=r"outside 1\.\.20"):
            await proxy.discover("add two integers", 500)


async def test_arguments_over_the_size_limit_are_refused_and_nothing_is_sent(env: Env) -> None:
    async with connected(env.proxy()) as client:
        refused = await call(client, "chaos", "echo", {"text": "x" * (1024 * 1024 + 10)})
        status = data(await client.call_tool("status", {}))
    assert refused.is_error
    assert "over 1 MiB of JSON, the proxy's limit; nothing was sent" in text(refused)
    chaos = next(s for s in status["servers"] if s["server"] == "chaos")
    assert chaos["sessions"] == "not started"
    assert _audit(env, "call")[-1]["outcome"] == "LimitExceeded"


async def test_a_huge_tool_name_is_refused_without_being_echoed(env: Env) -> None:
    async with connected(env.proxy()) as client:
        refused = await call(client, "chaos", "t" * 100_000)
    assert refused.is_error and len(text(refused)) < 300
    assert "names are at most 128" in text(refused)
    record = _audit(env, "call")[-1]
    assert len(json.dumps(record)) < 16 * 1024
    assert record["tool"]["chars"] == 100_000  # type: ignore[index]


async def test_limits_are_settings(env: Env) -> None:
    inputs = InputLimits(max_task_chars=10)
    proxy = env.proxy()
    proxy.settings = replace(ProxySettings(), inputs=inputs)
    async with connected(proxy) as client:
        refused = await client.call_tool("discover", {"task": "add two integers"})
    assert refused.is_error and "over the limit of 10" in text(refused)


def test_an_audit_entry_never_grows_past_its_limit() -> None:
    limits = InputLimits(max_audit_entry_bytes=4096)
    rows = [{"server": "s", "tool": f"t{i}", "note": "n" * 150} for i in range(200)]
    bounded = bound_record({"query": "q" * 10_000, "results": rows}, limits)
    assert len(json.dumps(bounded)) <= 4096
    assert bounded["truncated"] is True
    small = {"query": "short", "results": rows[:2]}
    assert bound_record(small, limits) is small  # entries that fit are kept as they are


def test_json_size_stops_counting_past_the_limit() -> None:
    nested = {"a": ["x" * 100] * 1000, "b": {"c": 1}}
    assert 500 < json_size(nested, 500) < 2_000 < json_size(nested, 10**9)  # stopped early
    assert json_size({"a": "xy", "b": [1, 2]}, 1000) == len('{"a":"xy","b":[1,2]}') + 14
