"""`cartograph serve` over stdio, driven by the MCP Inspector CLI (npm, a client we did not
write; .inspector/ from scripts/setup-inspector.sh): the three tools, the federated resource and
prompt lists, discover and call."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from proxykit import Env
from servekit import CARTOGRAPH

INSPECTOR = Path(__file__).resolve().parents[2] / ".inspector" / "node_modules" / ".bin"


def _inspect(env: Env, *args: str) -> Any:
    binary = INSPECTOR / "mcp-inspector"
    if not binary.exists():
        pytest.skip("the MCP Inspector is not installed: run bash scripts/setup-inspector.sh")
    serve = [CARTOGRAPH, "--home", str(env.ws.root), "serve", "--config", str(env.config())]
    command = [str(binary), "--cli", *args, "--", *serve]  # after --: the command, as is
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    return json.loads(done.stdout)


def test_the_inspector_lists_the_three_tools_and_the_federated_lists(env: Env) -> None:
    tools = _inspect(env, "--method", "tools/list")["tools"]
    assert [t["name"] for t in tools] == ["discover", "call", "status"]
    assert "resources" in _inspect(env, "--method", "resources/list")  # not -32601
    assert "prompts" in _inspect(env, "--method", "prompts/list")


def test_the_inspector_discovers_and_calls(env: Env) -> None:
    found = _inspect(
        env, "--method", "tools/call", "--tool-name", "discover", "--tool-arg", "task=add numbers"
    )
    hits = json.loads(found["content"][0]["text"])["tools"]
    assert hits and hits[0]["tool"] == "add"
    called = _inspect(
        env,
        "--method",
        "tools/call",
        "--tool-name",
        "call",
        "--tool-arg",
        "server=chaos",
        "tool=add",
        'arguments={"a": 2, "b": 5}',
    )
    assert not called.get("isError"), called
    assert called["content"][0]["text"] == "7"
