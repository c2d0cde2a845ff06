"""forward_call: a forwarded tools/call that the proxy gives up on (here: its timeout) is
cancelled at the upstream too, by ``notifications/cancelled`` (the SDK 1.x client itself only
stops waiting), and the pooled session goes on serving. Against our chaos upstream."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from proxykit import FAST, Env, call, connected, text

from cartograph.gateway.base import Limits

pytestmark = pytest.mark.anyio


async def wait_for(path: Path, content: str) -> None:
    with anyio.fail_after(30):
        while not path.exists() or path.read_text(encoding="utf-8") != content:
            await anyio.sleep(0.05)


@pytest.mark.parametrize("mode", ["pooled", "one-shot"])
async def test_a_call_that_times_out_is_cancelled_at_the_upstream(env: Env, mode: str) -> None:
    marker = env.config_dir / "linger.txt"
    limits = Limits(**{**FAST.__dict__, "call_timeout": 2.0})
    async with connected(env.proxy(mode=mode, limits=limits)) as client:
        timed_out = await call(client, "chaos", "linger", {"marker": str(marker)})
        if mode == "pooled":  # a one-shot session is closed with the call anyway
            await wait_for(marker, "cancelled")
        after = await call(client, "chaos", "echo", {"text": "next"})
    assert timed_out.is_error
    assert "tools/call 'linger' did not finish within 2 s; retry" in text(timed_out)
    assert marker.read_text(encoding="utf-8") == "cancelled"
    assert text(after) == "next"
