"""snapshot_servers: failures are reported per server, the rest still succeed, children reaped."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from sdk1 import sdk1_python

from cartograph.config import StdioUpstream
from cartograph.errors import UpstreamError, UpstreamTimeout
from cartograph.upstream.connect import ServerDone, snapshot_servers

SERVERS = Path(__file__).resolve().parent / "servers"
pytestmark = pytest.mark.anyio


def script(name: str, *args: str) -> StdioUpstream:
    file = "paging_server.py" if name.startswith("paging") else "raw_server.py"
    python = sdk1_python() if file == "paging_server.py" else sys.executable
    return StdioUpstream(name=name, command=python, args=(str(SERVERS / file), *args))


async def test_failing_servers_are_reported_while_the_others_succeed(
    tmp_path: Path, no_leftover_children: None
) -> None:
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps([{"name": "only", "inputSchema": {}}]), encoding="utf-8")
    configs = [
        script("paging", "12", "5"),
        script("raw", "raw", str(tools_file)),
        script("hang", "hang"),
        script("garbage", "garbage"),
        script("exits", "exit"),
        StdioUpstream(name="missing", command="/nonexistent/mcp-server"),
    ]
    events: list[ServerDone] = []
    outcome = await snapshot_servers(configs, timeout=3.0, concurrency=4, on_progress=events.append)

    assert sorted(outcome.snapshot.servers) == ["paging", "raw"]
    assert len(outcome.snapshot.servers["paging"].tools) == 12
    assert outcome.snapshot.servers["raw"].tools == [{"name": "only", "inputSchema": {}}]
    assert sorted(outcome.failures) == ["exits", "garbage", "hang", "missing"]
    assert isinstance(outcome.failures["hang"], UpstreamTimeout)
    assert "non-JSON-RPC" in str(outcome.failures["garbage"])
    assert "fatal: cannot open the database" in outcome.failures["exits"].stderr_tail
    assert "/nonexistent/mcp-server" in str(outcome.failures["missing"])
    assert all(isinstance(e, UpstreamError) for e in outcome.failures.values())

    assert sorted(e.name for e in events) == sorted(c.name for c in configs)
    assert [e.done for e in events] == list(range(1, len(configs) + 1))
    assert {e.name for e in events if e.error is None} == {"paging", "raw"}
    snapshot, failures = outcome  # unpacks like a tuple too
    assert snapshot is outcome.snapshot and failures is outcome.failures


async def test_snapshot_records_server_info_transport_and_public_endpoint() -> None:
    outcome = await snapshot_servers({"paging": script("paging", "3", "2")}, timeout=10.0)
    server = outcome.snapshot.servers["paging"]
    assert server.server_info == {"name": "paging-server", "version": "1.0.0"}
    assert server.instructions == "Pages its tools."
    assert server.protocol_version
    assert server.transport == "stdio"
    assert server.endpoint is not None and "[3 args sha256:" in server.endpoint  # no values
    assert server.error is None
    assert outcome.snapshot.tool_count() == 3


async def test_duplicate_server_names_are_refused() -> None:
    with pytest.raises(UpstreamError, match="share this server name"):
        await snapshot_servers([script("paging", "1", "1"), script("paging", "2", "1")])
