"""The file audit log rotates by size and keeps its backups."""

from __future__ import annotations

import json
from pathlib import Path

from cartograph.storage.file_state import FileAuditLog


def test_the_audit_log_rotates_by_size_and_keeps_backups(tmp_path: Path) -> None:
    log = FileAuditLog(tmp_path / "audit.jsonl", max_bytes=2000, backups=2)
    for i in range(100):
        log.write("discover", query=f"query number {i}", results=[])
    log.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    for name in files:
        assert (tmp_path / name).stat().st_size <= 2000
        for line in (tmp_path / name).read_text().splitlines():
            assert json.loads(line)["event"] == "discover"
    assert log.read()[-1]["query"] == "query number 99"
