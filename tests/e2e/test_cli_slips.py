"""Small things a first-time operator trips over: exit codes, advice that works, progress,
and tables that stay readable at 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from proxykit import Env, connected, data

from cartograph.cli import main

pytestmark = pytest.mark.anyio

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))


def test_discover_without_a_workspace_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "none"), "discover", "x"])
    assert result.exit_code == 2
    assert "no workspace at" in result.output and "cartograph bootstrap" in result.output


async def test_when_no_card_verifies_discover_does_not_advise_an_index_build(env: Env) -> None:
    for path in env.ws.cards_dir.glob("*.card.json"):
        path.write_text(path.read_text("utf-8").replace('"summary":"', '"summary":"X'), "utf-8")
    async with connected(env.proxy()) as client:
        answer = data(await client.call_tool("discover", {"task": "add two integers"}))
    assert answer["tools"] == []
    assert "cartograph cards verify" in answer["note"] and "index build" not in answer["note"]


def test_bootstrap_reports_each_server_as_it_ends_when_stderr_is_not_a_terminal(
    env: Env,
) -> None:
    result = CliRunner().invoke(
        main,
        ["--home", str(env.ws.root), "bootstrap", "--config", str(env.config()), "--no-index"],
    )
    assert result.exit_code == 0, result.output
    assert "starting 3 upstream(s), 8 at a time" in result.stderr
    ended = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert sorted(line.split("]")[0] for line in ended) == ["[1/3", "[2/3", "[3/3"]
    assert any("crashy: 5 tools" in line for line in ended)


def _narrow(env: Env, *args: str) -> str:
    result = subprocess.run(
        [CARTOGRAPH, "--home", str(env.ws.root), *args],
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_tables_stay_readable_at_80_columns(env: Env) -> None:
    found = _narrow(env, "discover", "add two integers", "-k", "5")
    assert len(found.splitlines()) < 45  # the full schemas took 100+ lines per tool
    assert "a*: integer" in found and "e.g." in found
    name = "a-client-with-a-rather-long-name"
    CliRunner().invoke(main, ["--home", str(env.ws.root), "clients", "add", name])
    assert name in _narrow(env, "clients", "list")
