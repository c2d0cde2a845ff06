"""The audit log links each call to the discover answer that offered its tool, with the rank,
and marks calls to tools that no discover of that session offered."""

from __future__ import annotations

import pytest
from proxykit import Env, call, connected, data, second_client

from cartograph.storage.file_state import FileAuditLog as AuditLog

pytestmark = pytest.mark.anyio


def _records(env: Env) -> list[dict[str, object]]:
    return AuditLog(env.ws.logs_dir / "audit.jsonl").read()


async def test_a_call_names_the_discover_answer_and_rank_that_offered_its_tool(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as alice:
        found = data(await alice.call_tool("discover", {"task": "add two integers", "k": 5}))
        picked = found["tools"][1]
        args = picked.get("examples", [{}])[0] if picked["tool"] != "echo" else {"text": "x"}
        await call(alice, picked["server"], picked["tool"], args)
        await call(alice, "crashy", "hello")  # never offered to alice
        async with second_client(proxy) as bob:
            await call(bob, picked["server"], picked["tool"], args)  # offered to alice only
    records = _records(env)
    discover = next(r for r in records if r["event"] == "discover")
    calls = [r for r in records if r["event"] == "call"]
    assert str(discover["id"]).startswith("d-")
    assert calls[0]["offered_by"] == discover["id"] and calls[0]["rank"] == 2
    assert calls[0]["session"] == discover["session"]
    assert calls[1]["undiscovered"] is True and "offered_by" not in calls[1]
    assert calls[2]["undiscovered"] is True and calls[2]["session"] != discover["session"]


async def test_a_later_answer_that_offers_the_tool_again_is_the_one_linked(env: Env) -> None:
    async with connected(env.proxy()) as client:
        await client.call_tool("discover", {"task": "add two integers", "k": 3})
        second = data(await client.call_tool("discover", {"task": "echo the text back", "k": 3}))
        top = second["tools"][0]
        await call(client, top["server"], top["tool"], {"text": "hi"})
    records = _records(env)
    answers = [r for r in records if r["event"] == "discover"]
    last_call = [r for r in records if r["event"] == "call"][-1]
    assert last_call["offered_by"] == answers[1]["id"] and last_call["rank"] == 1
