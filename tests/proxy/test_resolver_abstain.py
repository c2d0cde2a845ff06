"""Through the proxy: discover abstains (weak tools and a note) below the threshold, audits the
keywords it was given, and refuses malformed keywords with what to do."""

from __future__ import annotations

import json

import pytest
from proxykit import Env, connected, data, text

from cartograph.index.abstain import ENV

pytestmark = pytest.mark.anyio


async def test_below_the_threshold_the_tools_come_back_weak_with_a_note(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        monkeypatch.setenv(ENV, "off")
        plain = data(await client.call_tool("discover", {"task": "echo some text back", "k": 3}))
        monkeypatch.setenv(ENV, "0.999")  # nothing is that close: abstain
        weak = data(await client.call_tool("discover", {"task": "echo text back again", "k": 3}))
    assert all("weak" not in t for t in plain["tools"]) and "note" not in plain
    assert weak["tools"] and all(t["weak"] is True for t in weak["tools"])
    assert "nothing here plausibly fits" in weak["note"] and "below 1.00" in weak["note"]


async def test_keywords_are_checked_and_audited(env: Env) -> None:
    proxy = env.proxy()
    async with connected(proxy) as client:
        bad = await client.call_tool("discover", {"task": "echo", "keywords": ["x" * 65]})
        good = await client.call_tool("discover", {"task": "echo", "keywords": ["chaos"]})
    assert bad.is_error and "keywords.0" in text(bad) and "too long" in text(bad)
    assert not good.is_error
    log = proxy.ws.logs_dir / "audit.jsonl"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    said = [e for e in entries if e.get("event") == "discover" and e.get("keywords")]
    assert said and said[-1]["keywords"] == ["chaos"]
