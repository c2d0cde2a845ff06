"""The file backend's proxy state: the quarantine ledger and the audit log in the workspace.

:class:`FileLedger` keeps the drift guard's held tools in ``<home>/quarantine.json``, rewritten
atomically on every change and re-read when its stamp (mtime, size) changes.
:class:`FileAuditLog` appends one JSON object per line to ``<home>/logs/audit.jsonl``, rotated
by size into ``audit.jsonl.1`` .. ``audit.jsonl.<backups>``. Every discover answer is recorded
with the card text that ranked it (card digest, version, key id, generator), and so are calls
(server, tool, outcome, milliseconds; never the arguments) and drift-guard events.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from cartograph import clock
from cartograph.files import atomic_write
from cartograph.gateway.drift import HeldTool

logger = logging.getLogger(__name__)

QUARANTINE_FILE = "quarantine.json"
AUDIT_FILE = "audit.jsonl"


class FileLedger:
    """``<home>/quarantine.json``, rewritten atomically on every change; re-read when another
    process on the same home (another ``serve``, ``cartograph console``) rewrote it."""

    shared = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)

    def stamp(self) -> object:
        try:
            info = self.path.stat()
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def load(self) -> list[HeldTool]:
        if not self.path.is_file():
            return []
        data = json.loads(self.path.read_text(encoding="utf-8"))
        return [HeldTool(**row) for row in data.get("held", [])]

    def commit(
        self, held: dict[tuple[str, str], HeldTool], added: list[HeldTool], removed: list[HeldTool]
    ) -> None:
        del added, removed  # the whole set is rewritten
        rows = [asdict(h) for _, h in sorted(held.items())]
        atomic_write(self.path, json.dumps({"held": rows}, indent=1) + "\n")


class FileAuditLog:
    """Append-only JSONL with size-based rotation; safe to call from several threads."""

    def __init__(self, path: Path, *, max_bytes: int = 10 * 1024 * 1024, backups: int = 5):
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self._lock = threading.Lock()
        self._fh: BinaryIO | None = None
        self._size = 0

    def write(self, event: str, **fields: Any) -> None:
        record = {"time": clock.stamp_ms(), "event": event, **fields}
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            try:
                if self._fh is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = self.path.open("ab")
                    self._size = self._fh.tell()
                if self._size + len(data) > self.max_bytes:
                    self._fh.close()
                    self._rotate()
                    self._fh = self.path.open("ab")
                    self._size = 0
                self._fh.write(data)
                self._fh.flush()
                self._size += len(data)
            except OSError as exc:
                # The audit trail must not take the proxy down; say so on stderr.
                logger.error("%s: cannot write audit record: %s", self.path, exc)
                self._fh = None

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def _rotate(self) -> None:
        for i in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{i}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{i + 1}"))
        if self.backups > 0 and self.path.exists():
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        elif self.path.exists():
            self.path.unlink()

    def read(self) -> list[dict[str, Any]]:
        """The records of the current file (oldest first); for status and tests."""
        if not self.path.is_file():
            return []
        return [json.loads(line) for line in self.path.read_text("utf-8").splitlines() if line]
