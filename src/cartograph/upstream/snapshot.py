"""Catalog snapshots: what each upstream answered to initialize and tools/list, as recorded.

Our format (``cartograph.snapshot/1``), written by ``cartograph bootstrap`` into
``<home>/snapshots/``::

    {
      "format": "cartograph.snapshot/1",
      "created_at": "2026-11-30T08:00:00Z",
      "servers": {
        "<name>": {
          "transport": "stdio" | "http" | "sse" | "unknown",
          "endpoint": "npx -y ..." | "https://...",     # never with secrets
          "package": "...", "version": "...",            # when known
          "serverInfo": {...}, "protocolVersion": "...", "instructions": "...",
          "tools": [ {...tool exactly as sent...} ],
          "prompts": [...], "resources": [...], "resourceTemplates": [...],  # when advertised
          "error": null | "why it failed"
        }
      }
    }

``prompts``, ``resources`` and ``resourceTemplates`` are recorded, as sent, only for a server
whose capabilities advertise prompts or resources; a server without them has no such keys.

Two foreign formats load too: the fleet ``catalog.json`` (``{server: {"tools": [...],
"serverInfo": ..., "instructions": ...}}``) and corpus ``tools.jsonl`` (one tool a line with
``server``, ``tool``, ``description``, ``input_schema``, optional ``server_description``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartograph import clock
from cartograph.canonical import sha256_json
from cartograph.errors import SnapshotError
from cartograph.files import atomic_write

logger = logging.getLogger(__name__)

SNAPSHOT_FORMAT = "cartograph.snapshot/1"


@dataclass(frozen=True)
class ServerSnapshot:
    """One server's recorded answers. ``tools`` are the tool objects exactly as sent."""

    name: str
    tools: list[dict[str, Any]]
    server_info: dict[str, Any] | None = None
    instructions: str | None = None
    protocol_version: str | None = None
    transport: str = "unknown"
    endpoint: str | None = None
    package: str | None = None
    version: str | None = None
    error: str | None = None
    prompts: list[dict[str, Any]] | None = None
    resources: list[dict[str, Any]] | None = None
    resource_templates: list[dict[str, Any]] | None = None
    """None: not recorded (the server does not advertise the capability, or an older snapshot)."""

    def tools_hash(self) -> str:
        return sha256_json(self.tools)

    def listings(self) -> dict[str, list[dict[str, Any]]] | None:
        """prompts/list, resources/list and resources/templates/list as recorded (absent
        ones empty), or None when none of them was recorded."""
        if self.prompts is None and self.resources is None and self.resource_templates is None:
            return None
        return {
            "prompts": self.prompts or [],
            "resources": self.resources or [],
            "resourceTemplates": self.resource_templates or [],
        }

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "transport": self.transport,
            "endpoint": self.endpoint,
            "package": self.package,
            "version": self.version,
            "serverInfo": self.server_info,
            "protocolVersion": self.protocol_version,
            "instructions": self.instructions,
            "tools": self.tools,
            "error": self.error,
        }
        for key, value in _LISTING_KEYS.items():
            if getattr(self, value) is not None:
                out[key] = getattr(self, value)
        return out


_LISTING_KEYS = {
    "prompts": "prompts",
    "resources": "resources",
    "resourceTemplates": "resource_templates",
}


@dataclass(frozen=True)
class Snapshot:
    """A set of server snapshots, keyed by server name."""

    servers: dict[str, ServerSnapshot]
    created_at: str = field(default_factory=lambda: clock.stamp())
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SNAPSHOT_FORMAT,
            "created_at": self.created_at,
            "servers": {name: s.to_json() for name, s in sorted(self.servers.items())},
        }

    def digest(self) -> str:
        return sha256_json(self.to_json()["servers"])

    def tool_count(self) -> int:
        return sum(len(s.tools) for s in self.servers.values())


def save_snapshot(snapshot: Snapshot, path: Path) -> Path:
    """Write ``snapshot`` atomically as JSON."""
    return atomic_write(path, json.dumps(snapshot.to_json(), indent=1, ensure_ascii=False))


def find_recorded_server(
    directory: Path, server: str, snapshot_hash: str | None = None
) -> ServerSnapshot:
    """``server`` as a snapshot file in ``directory`` recorded it: from the snapshot whose digest
    is ``snapshot_hash`` (a card's ``provenance.snapshot_hash``), else the newest that has it.
    :class:`SnapshotError` when none does. Light: imports nothing beyond this module (the
    console's server page and Rift both look publisher text up here)."""
    files = sorted(directory.glob("*.json"), reverse=True) if directory.is_dir() else []
    fallback: ServerSnapshot | None = None
    for path in files:
        try:
            snap = load_snapshot(Path(path))
        except SnapshotError as exc:
            logger.warning("skipping snapshot %s: %s", path, exc)
            continue
        found = snap.servers.get(server)
        if found is None:
            continue
        if snapshot_hash and snap.digest() == snapshot_hash:
            return found
        fallback = fallback or found
    if fallback is None:
        raise SnapshotError(
            f"no snapshot in {directory} records server {server!r}; "
            "run `cartograph bootstrap` for it first"
        )
    logger.warning("%s: no snapshot matches the card's hash; using the newest", server)
    return fallback


def load_snapshot(path: Path) -> Snapshot:
    """Load any supported snapshot format: ours, the fleet catalog.json, or corpus tools.jsonl."""
    path = Path(path)
    if not path.is_file():
        raise SnapshotError(f"{path}: no such snapshot file")
    if path.suffix == ".jsonl":
        return _load_tools_jsonl(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from exc
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"{path}: not UTF-8 text") from exc
    if not isinstance(data, dict):
        raise SnapshotError(f"{path}: expected a JSON object at the top level")
    if data.get("format") == SNAPSHOT_FORMAT:
        servers = data.get("servers")
        if not isinstance(servers, dict):
            raise SnapshotError(f"{path}: field 'servers' must be an object")
        return Snapshot(
            servers={n: _server_from_json(path, n, s) for n, s in servers.items()},
            created_at=str(data.get("created_at") or clock.stamp()),
            source=str(path),
        )
    # fleet catalog.json: {server: {"tools": [...], ...}}
    return Snapshot(
        servers={n: _server_from_json(path, n, s) for n, s in data.items()}, source=str(path)
    )


def _server_from_json(path: Path, name: str, entry: Any) -> ServerSnapshot:
    if not isinstance(entry, dict):
        raise SnapshotError(f"{path}: server {name!r}: expected an object")
    tools = entry.get("tools")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise SnapshotError(f"{path}: server {name!r}: field 'tools' must be a list of objects")
    for i, tool in enumerate(tools):
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise SnapshotError(f"{path}: server {name!r}: tools[{i}] has no 'name'")
    info = entry.get("serverInfo")
    listings = {attr: _listing(path, name, entry, key) for key, attr in _LISTING_KEYS.items()}
    return ServerSnapshot(
        name=str(name),
        tools=tools,
        server_info=info if isinstance(info, dict) else None,
        instructions=_opt_str(entry.get("instructions")),
        protocol_version=_opt_str(entry.get("protocolVersion")),
        transport=str(entry.get("transport") or "unknown"),
        endpoint=_opt_str(entry.get("endpoint")),
        package=_opt_str(entry.get("package")),
        version=_opt_str(entry.get("version")),
        error=_opt_str(entry.get("error")),
        **listings,
    )


def _listing(path: Path, name: str, entry: dict[str, Any], key: str) -> list[dict[str, Any]] | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise SnapshotError(f"{path}: server {name!r}: field {key!r} must be a list of objects")
    return value


def _load_tools_jsonl(path: Path) -> Snapshot:
    servers: dict[str, list[dict[str, Any]]] = {}
    server_desc: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SnapshotError(f"{path}:{lineno}: not valid JSON: {exc.msg}") from exc
            if not isinstance(row, dict) or not row.get("server") or not row.get("tool"):
                raise SnapshotError(f"{path}:{lineno}: needs 'server' and 'tool' fields")
            tool: dict[str, Any] = {"name": str(row["tool"])}
            if row.get("description"):
                tool["description"] = str(row["description"])
            schema = row.get("input_schema")
            tool["inputSchema"] = schema if isinstance(schema, dict) else {"type": "object"}
            servers.setdefault(str(row["server"]), []).append(tool)
            if row.get("server_description"):
                server_desc.setdefault(str(row["server"]), str(row["server_description"]))
    return Snapshot(
        servers={
            name: ServerSnapshot(name=name, tools=tools, instructions=server_desc.get(name))
            for name, tools in servers.items()
        },
        source=str(path),
    )


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
