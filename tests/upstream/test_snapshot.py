"""Catalog snapshots: our format round-trips; the fleet catalog and corpus JSONL load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cartograph.errors import SnapshotError
from cartograph.upstream.snapshot import (
    ServerSnapshot,
    Snapshot,
    load_snapshot,
    save_snapshot,
)

SHARED = Path(__file__).resolve().parents[3] / "shared"


def test_our_format_round_trips(tmp_path):
    snap = Snapshot(
        servers={
            "a": ServerSnapshot(
                name="a",
                tools=[{"name": "t", "inputSchema": {"type": "object"}, "x-extra": [1]}],
                server_info={"name": "A", "version": "1"},
                instructions="hi",
                transport="stdio",
                endpoint="a-server",
            )
        }
    )
    path = save_snapshot(snap, tmp_path / "s.json")
    again = load_snapshot(path)
    assert again.servers["a"].tools == snap.servers["a"].tools
    assert again.servers["a"].server_info == {"name": "A", "version": "1"}
    assert again.digest() == snap.digest()


def test_bad_json_names_file_and_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n "a": {\n  "tools": [,]\n }\n}')
    with pytest.raises(SnapshotError, match=r"bad.json.*line 3"):
        load_snapshot(path)


def test_tool_without_name_is_rejected(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"srv": {"tools": [{"description": "x"}]}}))
    with pytest.raises(SnapshotError, match=r"srv.*tools\[0\]"):
        load_snapshot(path)


def test_jsonl_line_errors_name_the_line(tmp_path):
    path = tmp_path / "tools.jsonl"
    path.write_text('{"server": "s", "tool": "t"}\n{"server": "s"}\n')
    with pytest.raises(SnapshotError, match=r"tools\.jsonl:2"):
        load_snapshot(path)


@pytest.mark.skipif(not (SHARED / "fleet/catalog.json").is_file(), reason="shared fleet absent")
def test_fleet_catalog_loads_every_server_and_tool():
    snap = load_snapshot(SHARED / "fleet/catalog.json")
    assert len(snap.servers) == 99
    assert snap.tool_count() == 2598


@pytest.mark.skipif(not (SHARED / "corpus/livemcpbench").is_dir(), reason="shared corpus absent")
def test_corpus_jsonl_loads_with_server_descriptions():
    snap = load_snapshot(SHARED / "corpus/livemcpbench/tools.jsonl")
    assert len(snap.servers) == 70
    assert snap.tool_count() == 527
    assert any(s.instructions for s in snap.servers.values())
