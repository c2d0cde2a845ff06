"""The drift guard: an upstream that changes a tool while the proxy runs gets it quarantined."""

from __future__ import annotations

import json

import pytest
from proxykit import Env, attest, call, connected, data, text

from cartograph.storage.file_state import QUARANTINE_FILE, FileAuditLog

pytestmark = pytest.mark.anyio


def audit_events(env: Env, event: str) -> list[dict[str, object]]:
    return [r for r in FileAuditLog(env.ws.logs_dir / "audit.jsonl").read() if r["event"] == event]


async def test_a_description_changed_while_running_quarantines_the_tool(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        before = await call(client, "chaos", "echo", {"text": "clean"})
        mutated = await call(client, "chaos", "mutate", {"what": "description"})
        after = await call(client, "chaos", "echo", {"text": "now?"})
        other = await call(client, "chaos", "add", {"a": 1, "b": 1})
        status = data(await client.call_tool("status", {}))
        found = data(await client.call_tool("discover", {"task": "echo text back", "k": 20}))
    assert not before.is_error and not mutated.is_error
    assert after.is_error
    message = text(after)
    assert "chaos/echo is quarantined" in message
    assert "description changed since the card was signed" in message
    assert "cartograph bootstrap --server chaos" in message
    assert not other.is_error and text(other) == "2"  # the rest of the server keeps working
    chaos = next(s for s in status["servers"] if s["server"] == "chaos")
    assert [q["tool"] for q in chaos["quarantined"]] == ["echo"]
    assert ("chaos", "echo") not in {(t["server"], t["tool"]) for t in found["tools"]}
    assert ("calm", "echo") in {(t["server"], t["tool"]) for t in found["tools"]}
    held = audit_events(env, "quarantined")
    assert held and held[0]["server"] == "chaos" and held[0]["tool"] == "echo"


async def test_quarantine_persists_across_restarts_until_the_operator_re_attests(
    env: Env,
) -> None:
    config = env.config()
    async with connected(env.proxy(config)) as client:
        await call(client, "chaos", "mutate", {"what": "description"})
    saved = json.loads((env.ws.root / QUARANTINE_FILE).read_text())
    assert [(h["server"], h["tool"]) for h in saved["held"]] == [("chaos", "echo")]

    async with connected(env.proxy(config)) as client:
        still = await call(client, "chaos", "echo", {"text": "x"})
    assert still.is_error and "quarantined" in text(still)

    await attest(env.ws.root, config, ["chaos"])  # what `cartograph bootstrap --server chaos` does
    async with connected(env.proxy(config)) as client:
        lifted = await call(client, "chaos", "echo", {"text": "reviewed"})
        status = data(await client.call_tool("status", {}))
    assert not lifted.is_error and text(lifted) == "reviewed"
    assert status["totals"]["quarantined"] == 0
    assert audit_events(env, "lifted")


async def test_a_changed_input_schema_is_quarantined(env: Env) -> None:
    async with connected(env.proxy()) as client:
        await call(client, "chaos", "mutate", {"what": "schema"})
        refused = await call(client, "chaos", "echo", {"text": "x"})
    # the new function (echo2) also gives FastMCP's outputSchema a new title: both changed
    assert refused.is_error and "input schema and output schema changed" in text(refused)


async def test_a_new_unsigned_tool_is_quarantined_and_cannot_be_called(env: Env) -> None:
    async with connected(env.proxy()) as client:
        await call(client, "chaos", "mutate", {"what": "new"})
        refused = await call(client, "chaos", "sneaky")
        # the next call routed to chaos waits for the list_changed re-check to finish
        assert text(await call(client, "chaos", "add", {"a": 1, "b": 2})) == "3"
        status = data(await client.call_tool("status", {}))
    assert refused.is_error and "no tool 'sneaky' in its signed card" in text(refused)
    chaos = next(s for s in status["servers"] if s["server"] == "chaos")
    assert chaos["quarantined"][0]["tool"] == "sneaky"
    assert "new tool" in chaos["quarantined"][0]["reason"]


async def test_one_shot_mode_checks_drift_before_every_call(env: Env) -> None:
    config = env.config()
    async with connected(env.proxy(config, mode="one-shot")) as client:
        ok = await call(client, "chaos", "echo", {"text": "a"})
        await call(client, "chaos", "mutate", {"what": "description"})  # persisted in its state
        refused = await call(client, "chaos", "echo", {"text": "b"})
    assert not ok.is_error
    assert refused.is_error and "quarantined" in text(refused)


async def test_a_flood_of_list_changed_notifications_is_coalesced(env: Env) -> None:
    async with connected(env.proxy()) as client:
        flooded = await call(client, "chaos", "flood", {"n": 300, "kind": "list_changed"})
        echoed = await call(client, "chaos", "echo", {"text": "still here"})
        status = data(await client.call_tool("status", {}))
    assert text(flooded) == "flooded 300"
    assert text(echoed) == "still here"
    assert status["totals"]["quarantined"] == 0
