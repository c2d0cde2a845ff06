"""Per-client policy in the proxy: discover over-fetches to keep k, stdio --client/--policy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from accesskit import CARTOGRAPH, cli
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from proxykit import Env, call, data, text

from cartograph.access import Caller, Policy

pytestmark = pytest.mark.anyio


async def test_discover_returns_k_allowed_tools_when_they_rank_low(env: Env) -> None:
    proxy = env.proxy()
    only_crashy = Caller("c", Policy(allow=("crashy.*",)))
    async with proxy.running():
        everyone = await proxy.discover("add two numbers", 5)
        limited = await proxy.discover("add two numbers", 3, caller=only_crashy)
        status = proxy.status(only_crashy)
    assert all(t.server != "crashy" for t in everyone.tools)  # crashy ranks below
    assert len(limited.tools) == min(3, status.totals.tools)
    assert {t.server for t in limited.tools} == {"crashy"}
    assert [s.server for s in status.servers] == ["crashy"]


async def test_stdio_client_runs_under_its_registered_policy(env: Env) -> None:
    done = cli(env.ws.root, "clients", "add", "desk", "--allow", "calm.*", "--deny", "calm.add")
    assert done.returncode == 0, done.stderr
    args = ["--home", str(env.ws.root), "serve", "--config", str(env.config()), "--client", "desk"]
    params = StdioServerParameters(command=CARTOGRAPH, args=args)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        with anyio.fail_after(60):
            await client.initialize()
            found = data(await client.call_tool("discover", {"task": "add two numbers"}))
            denied = await call(client, "calm", "add", {"a": 1, "b": 2})
            echoed = await call(client, "calm", "echo", {"text": "ok"})
    assert found["tools"] and {t["server"] for t in found["tools"]} == {"calm"}
    assert "add" not in {t["tool"] for t in found["tools"]}
    assert denied.is_error and text(echoed) == "ok"
    audit = (env.ws.logs_dir / "audit.jsonl").read_text("utf-8").splitlines()
    events = [json.loads(line) for line in audit]
    assert {e["client"] for e in events if e["event"] in ("discover", "call")} == {"desk"}


def test_serve_refuses_insecure_open_off_loopback_and_unknown_stdio_clients(
    env: Env, tmp_path: Path
) -> None:
    config = str(env.config())
    base = [CARTOGRAPH, "--home", str(env.ws.root), "serve", "--config", config]
    opened = subprocess.run(
        [*base, "--transport", "http", "--host", "0.0.0.0", "--port", "0", "--insecure-open"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert opened.returncode == 2 and "loopback" in opened.stderr
    unknown = subprocess.run(
        [*base, "--client", "nobody"], capture_output=True, text=True, timeout=60, input=""
    )
    assert unknown.returncode == 2 and "no client named 'nobody'" in unknown.stderr
