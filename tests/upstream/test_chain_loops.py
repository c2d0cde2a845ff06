"""Loops are refused: a call that comes back to this workspace (through ``_meta`` or a stdio
child's ``$CARTOGRAPH_CHAIN``), or one past the hop limit; another Cartograph instance stays a
valid upstream and learns the chain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from proxykit import Env, connected, text

import cartograph
from cartograph.cli import main
from cartograph.upstream.chain import CHAIN_ENV, MAX_HOPS, META_KEY, workspace_id

pytestmark = pytest.mark.anyio

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))
OTHER = "0123456789abcdef"
SRC = str(Path(cartograph.__file__).resolve().parents[1])


async def _call_with_chain(env: Env, chain: list[str]) -> tuple[bool, str]:
    async with connected(env.proxy()) as client:
        result = await client.call_tool(
            "call",
            {"server": "chaos", "tool": "chain", "arguments": {}},
            meta={META_KEY: chain},
        )
    return bool(result.is_error), text(result)


async def test_a_call_that_already_passed_this_workspace_is_refused(env: Env) -> None:
    failed, message = await _call_with_chain(env, [OTHER, workspace_id(env.ws)])
    assert failed
    assert "already passed through this Cartograph workspace" in message
    assert "remove that server from the mcp.json" in message


async def test_a_call_past_the_hop_limit_is_refused(env: Env) -> None:
    failed, message = await _call_with_chain(env, [f"{i:016x}" for i in range(MAX_HOPS)])
    assert failed and f"at most {MAX_HOPS} may be chained" in message


async def test_a_call_from_another_proxy_is_served_and_the_chain_goes_on(env: Env) -> None:
    failed, message = await _call_with_chain(env, [OTHER])
    assert not failed, message
    assert json.loads(message)[META_KEY] == [OTHER, workspace_id(env.ws)]


def test_serve_started_by_itself_exits_2_before_serving(env: Env) -> None:
    result = subprocess.run(
        [CARTOGRAPH, "--home", str(env.ws.root), "serve", "--config", str(env.config())],
        env={**os.environ, CHAIN_ENV: f"{OTHER},{workspace_id(env.ws)}"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "serve refused (started by a Cartograph proxy)" in result.stderr
    assert "already passed through this Cartograph workspace" in result.stderr


def test_bootstrap_of_a_config_that_holds_this_workspace_refuses_that_server(env: Env) -> None:
    config = env.config(
        myself={
            "command": CARTOGRAPH,
            "args": ["--home", str(env.ws.root), "serve"],
            "env": {"PYTHONPATH": SRC},  # this checkout's code, as the test process runs it
        }
    )
    result = CliRunner().invoke(
        main,
        ["--home", str(env.ws.root), "bootstrap", "--config", str(config), "--no-index", "--json"],
    )
    out = json.loads(result.stdout)
    assert set(out["cards"]) == {"chaos", "calm", "crashy"}
    assert "serve refused" in out["failed"]["myself"]["stderr_tail"]
