"""The health board: every serving proxy publishes its health there, the console reads them all.

Each replica (a ``cartograph serve`` process, named ``host:pid`` by :func:`replica_name`) writes
one record, replacing its previous one, every few seconds while it serves and once more, marked
``stopped``, when it stops (:mod:`cartograph.proxy.health`). ``cartograph console`` and every
replica's own console read the board to show each replica's servers, sessions and quarantine.
A record not renewed for :data:`STALE_AFTER_S` is shown as stale (the replica died without
saying so); records older than :data:`FORGET_AFTER_S` are dropped when the board is read.

:class:`FileHealthBoard` keeps ``<home>/replicas/<host>_<pid>.json`` (written atomically), for
the replicas that share one home; the PostgreSQL board (:class:`~cartograph.storage.pg_state.
PgHealthBoard`) keeps one row per replica of every home that names the store. Ages are measured
by the board's own clock (the database's, for PostgreSQL), so replicas' clocks need not agree.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from cartograph.files import atomic_write

logger = logging.getLogger(__name__)

REPLICAS_DIR = "replicas"
STALE_AFTER_S = 45.0  # three missed publishes (cartograph.proxy.health publishes every 15 s)
FORGET_AFTER_S = 24 * 3600.0

ReplicaState = Literal["serving", "stale", "stopped"]


def replica_name() -> str:
    """How this process names itself in what it writes to a store: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class ReplicaHealth:
    """One replica's last published record, ``age_s`` seconds old when the board was read."""

    replica: str
    age_s: float
    body: dict[str, Any]

    @property
    def state(self) -> ReplicaState:
        if self.body.get("state") == "stopped":
            return "stopped"
        return "stale" if self.age_s > STALE_AFTER_S else "serving"


class HealthBoard(Protocol):
    """Where replicas publish their health; ``where`` names it in messages."""

    where: str

    def publish(self, replica: str, body: dict[str, Any]) -> None:
        """Replace ``replica``'s record with ``body`` (JSON-able), stamped now."""
        ...

    def read(self) -> list[ReplicaHealth]:
        """Every record not yet forgotten, by replica name."""
        ...


class FileHealthBoard:
    """``<home>/replicas/``: one JSON file per replica, replaced atomically."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.where = str(directory)

    def _file(self, replica: str) -> Path:
        return self.directory / (re.sub(r"[^A-Za-z0-9._-]", "_", replica) + ".json")

    def publish(self, replica: str, body: dict[str, Any]) -> None:
        record = {"replica": replica, "at": time.time(), "body": body}
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write(self._file(replica), json.dumps(record, default=str), fsync=False)

    def read(self) -> list[ReplicaHealth]:
        if not self.directory.is_dir():
            return []
        now, found = time.time(), []
        for path in sorted(self.directory.glob("*.json")):
            try:
                record = json.loads(path.read_text("utf-8"))
                entry = ReplicaHealth(
                    str(record["replica"]), now - float(record["at"]), dict(record["body"])
                )
            except FileNotFoundError:
                continue  # its replica replaced or forgot it meanwhile
            except (OSError, ValueError, KeyError, TypeError) as exc:
                logger.warning("%s: unreadable replica record, skipped: %s", path, exc)
                continue
            if entry.age_s > FORGET_AFTER_S:
                path.unlink(missing_ok=True)
                continue
            found.append(entry)
        return found


__all__ = [
    "FORGET_AFTER_S",
    "REPLICAS_DIR",
    "STALE_AFTER_S",
    "FileHealthBoard",
    "HealthBoard",
    "ReplicaHealth",
    "replica_name",
]
