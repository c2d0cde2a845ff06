"""Upstreams of either protocol era, spoken to in the newest revision each supports: the
example fleet's time server speaks 2026-07-28 (no handshake), its sqlite server 2025-11-25."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartograph.config import load_config
from cartograph.upstream import connect
from cartograph.upstream.connect import open_session, snapshot_server

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def forget_eras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connect, "_LEGACY", set())


def fleet(example_config: Path, name: str):
    return load_config(example_config).servers[name]


@pytest.mark.parametrize(("name", "era"), [("time", "2026-07-28"), ("sqlite", "2025-11-25")])
async def test_each_upstream_is_spoken_to_in_its_newest_revision(
    example_config: Path, name: str, era: str
) -> None:
    snap = await snapshot_server(fleet(example_config, name), timeout=60)
    assert snap.protocol_version == era
    assert snap.tools, f"{name} listed no tools in {era}"
    assert (name in connect._LEGACY) == (era == "2025-11-25")  # pyright: ignore[reportPrivateUsage]


async def test_a_modern_upstream_slow_to_discover_is_not_mistaken_for_a_legacy_one(
    example_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on a loaded machine: the cold server answers server/discover after the wait is over,
    # has fixed its era by then, and refuses initialize with -32022.
    monkeypatch.setattr(connect, "DISCOVER_WAIT", 0.001)
    async with open_session(fleet(example_config, "time"), timeout=60) as up:
        assert up.initialize_result.protocol_version == "2026-07-28"
        result = await up.session.list_tools()
    assert {tool.name for tool in result.tools} >= {"get_current_time"}
    assert "time" not in connect._LEGACY  # pyright: ignore[reportPrivateUsage]
