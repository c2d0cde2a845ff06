"""discover and status serve configured servers only; `cards prune` removes the other cards."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from proxykit import Env, chaos_entry, connected, data, write_config

from cartograph.cli import main

pytestmark = pytest.mark.anyio

TASK = "say hello with the process id"


async def test_discover_and_status_leave_out_servers_the_config_does_not_name(env: Env) -> None:
    full = env.proxy()
    async with connected(full) as client:
        everything = data(await client.call_tool("discover", {"task": TASK, "k": 5}))
    assert any(t["server"] == "crashy" for t in everything["tools"])  # it ranks when configured

    smaller = write_config(env.config_dir / "small", {"chaos": chaos_entry()})
    async with connected(env.proxy(smaller)) as client:
        found = data(await client.call_tool("discover", {"task": TASK, "k": 5}))
        status = data(await client.call_tool("status", {}))
    assert found["tools"] and {t["server"] for t in found["tools"]} == {"chaos"}
    assert [s["server"] for s in status["servers"]] == ["chaos"]
    assert status["totals"]["servers"] == 1
    assert status["cards_not_in_config"]["servers"] == ["calm", "crashy"]
    assert "cartograph cards prune" in status["cards_not_in_config"]["note"]


def test_cards_prune_removes_the_cards_of_servers_no_longer_configured(env: Env) -> None:
    smaller = write_config(env.config_dir / "small", {"chaos": chaos_entry()})
    home = ["--home", str(env.ws.root)]
    runner = CliRunner()
    dry = runner.invoke(main, [*home, "cards", "prune", "--config", str(smaller), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would remove 2 card(s)" in dry.output and "calm, crashy" in dry.output
    assert len(list(env.ws.cards_dir.glob("*.card.json"))) == 3

    pruned = runner.invoke(main, [*home, "cards", "prune", "--config", str(smaller), "--json"])
    assert pruned.exit_code == 0, pruned.output
    assert json.loads(pruned.output)["removed"] == ["calm", "crashy"]
    listed = runner.invoke(main, [*home, "cards", "list", "--json"])
    assert [c["server"] for c in json.loads(listed.output)["cards"]] == ["chaos"]
    again = runner.invoke(main, [*home, "cards", "prune", "--config", str(smaller)])
    assert "nothing to prune" in again.output
