"""The relay that sets the gateway benchmark's floor (benchmarks/relay_floor.py) carries a real
MCP session unchanged: what a client sees through it is what the upstream says directly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

RELAY = Path(__file__).resolve().parents[2] / "benchmarks" / "relay_floor.py"

pytestmark = pytest.mark.anyio


def _time_server(example_config: Path) -> tuple[str, list[str]]:
    entry = json.loads(example_config.read_text(encoding="utf-8"))["mcpServers"]["time"]
    here = str(example_config.resolve().parent)
    return entry["command"].replace("${configDir}", here), [
        a.replace("${configDir}", here) for a in entry.get("args", [])
    ]


async def _listing_and_call(params: StdioServerParameters) -> tuple[list[str], bool, str]:
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = sorted(t.name for t in (await session.list_tools()).tools)
            result = await session.call_tool("convert_time", _CONVERT)
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            return names, bool(result.is_error), text


_CONVERT = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}


async def test_the_relay_carries_a_real_session_unchanged(example_config: Path) -> None:
    command, args = _time_server(example_config)
    direct = await _listing_and_call(StdioServerParameters(command=command, args=args))
    relayed = await _listing_and_call(
        StdioServerParameters(command=sys.executable, args=[str(RELAY), command, *args])
    )
    assert direct[0] and not direct[1]
    assert relayed == direct
