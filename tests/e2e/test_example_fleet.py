"""The example fleet of examples/mcp.json, snapshotted for real (needs scripts/install-fleet.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartograph.config import StdioUpstream, load_config
from cartograph.upstream.connect import snapshot_servers

pytestmark = [pytest.mark.anyio, pytest.mark.fleet]

# one tool each server is known to list at its pinned version
KNOWN_TOOLS = {
    "filesystem": "read_text_file",
    "memory": "create_entities",
    "everything": "echo",
    "sequential-thinking": "sequentialthinking",
    "time": "get_current_time",
    "fetch": "fetch",
    "git": "git_status",
    "sqlite": "read_query",
}


async def test_whole_example_fleet_snapshots_and_a_broken_entry_is_reported(
    example_config: Path, no_leftover_children: None
) -> None:
    fleet = load_config(example_config)
    broken = StdioUpstream(name="broken", command="mcp-server-that-does-not-exist")
    configs = [*fleet.servers.values(), broken]

    outcome = await snapshot_servers(configs, timeout=60.0, concurrency=8)

    assert list(outcome.failures) == ["broken"]
    assert "mcp-server-that-does-not-exist" in str(outcome.failures["broken"])
    assert set(outcome.snapshot.servers) == set(KNOWN_TOOLS)
    for name, tool in KNOWN_TOOLS.items():
        server = outcome.snapshot.servers[name]
        names = [t["name"] for t in server.tools]
        assert tool in names, f"{name}: {names}"
        assert all("inputSchema" in t for t in server.tools), name
        assert server.server_info and server.server_info.get("name"), name
        assert server.protocol_version, name
        assert server.transport == "stdio"
        assert server.endpoint and server.endpoint.startswith(("node [", "${configDir}"))
        assert str(example_config.parent.parent) not in server.endpoint
    assert outcome.snapshot.tool_count() >= 50
