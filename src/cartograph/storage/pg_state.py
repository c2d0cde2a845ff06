"""Shared proxy state in PostgreSQL: the drift guard's quarantine, the audit log, replica health.

:class:`PgQuarantineLedger` is the quarantine's persistence for a shared store: each change is
one row upserted or deleted (never a rewrite of the whole set, so two replicas that hold
different tools at once lose neither) and bumps the ``quarantine`` generation, which every
replica polls to pick up what another one held or lifted. :class:`PgAuditLog` appends audit
records from a background thread in batches, so a discover or a call never waits on the
database; each row names the replica that wrote it. :class:`PgHealthBoard` is the health board
every replica publishes to (:mod:`cartograph.storage.health`).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from cartograph.errors import StoreError
from cartograph.gateway.drift import HeldTool
from cartograph.storage.health import FORGET_AFTER_S, ReplicaHealth, replica_name
from cartograph.storage.pg_cards import bump
from cartograph.storage.pg_db import Database

logger = logging.getLogger(__name__)

_FIELDS = (
    "server",
    "tool",
    "reason",
    "detected_at",
    "card_digest",
    "live_schema_hash",
    "live_description_hash",
)

_UPSERT = (
    "INSERT INTO cartograph_quarantine (server, tool, reason, detected_at, card_digest, "
    "live_schema_hash, live_description_hash) VALUES (%s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (server, tool) DO UPDATE SET reason = excluded.reason, "
    "detected_at = excluded.detected_at, card_digest = excluded.card_digest, "
    "live_schema_hash = excluded.live_schema_hash, "
    "live_description_hash = excluded.live_description_hash"
)


class PgQuarantineLedger:
    """Quarantine rows shared by every replica on one store."""

    shared = True

    def __init__(self, db: Database) -> None:
        self.db = db
        self.where = f"{db.label} (cartograph_quarantine)"

    def stamp(self) -> int:
        return self.db.generation("quarantine")

    def load(self) -> list[HeldTool]:
        with self.db.error_context("read the quarantine"):
            rows = self.db.conn().execute(
                "SELECT server, tool, reason, detected_at, card_digest, live_schema_hash, "
                "live_description_hash FROM cartograph_quarantine"
            )
            return [HeldTool(*row) for row in rows.fetchall()]

    def commit(
        self, held: dict[tuple[str, str], HeldTool], added: list[HeldTool], removed: list[HeldTool]
    ) -> None:
        del held  # the file ledger rewrites everything; here only the changes are sent
        with self.db.error_context("write the quarantine"):
            conn = self.db.conn()
            with conn.transaction():
                for h in removed:
                    conn.execute(
                        "DELETE FROM cartograph_quarantine WHERE server = %s AND tool = %s",
                        (h.server, h.tool),
                    )
                for h in added:
                    row = asdict(h)
                    conn.execute(_UPSERT, tuple(row[f] for f in _FIELDS))
                bump(conn, "quarantine")


_STOP = object()


class PgAuditLog:
    """The audit log as rows of ``cartograph_audit``; same ``write``/``read``/``close`` as the
    JSONL file (:class:`~cartograph.storage.file_state.FileAuditLog`)."""

    def __init__(self, db: Database, *, batch: int = 256) -> None:
        self.db = db
        self.path = f"{db.label} (cartograph_audit)"
        self.replica = replica_name()
        self._batch = batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        now = datetime.now(UTC)
        stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        record = {"time": stamp, "event": event, "replica": self.replica, **fields}
        self._queue.put((now, event, json.dumps(record, ensure_ascii=False, default=str)))
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._drain, name="cartograph-audit", daemon=True
                    )
                    self._thread.start()

    def _drain(self) -> None:
        stop = False
        while not stop:
            rows = [self._queue.get()]
            while len(rows) < self._batch:
                try:
                    rows.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(r is _STOP for r in rows)
            rows = [r for r in rows if r is not _STOP]
            if rows:
                self._insert(rows)

    def _insert(self, rows: list[tuple[datetime, str, str]]) -> None:
        try:
            with self.db.error_context("write audit records"), self.db.conn().cursor() as cur:
                cur.executemany(
                    "INSERT INTO cartograph_audit (time, event, replica, record) "
                    "VALUES (%s, %s, %s, %s::jsonb)",
                    [(t, e, self.replica, r) for t, e, r in rows],
                )
        except StoreError as exc:  # the audit trail must not take the proxy down; say so
            logger.error("%s: %d audit record(s) not written: %s", self.path, len(rows), exc)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every record written so far is in the database."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            thread.join(timeout)

    def close(self) -> None:
        self.flush()

    def read(self) -> list[dict[str, Any]]:
        """Every record in the store, oldest first (all replicas); for status and tests."""
        self.flush()
        with self.db.error_context("read the audit log"):
            rows = self.db.conn().execute("SELECT record FROM cartograph_audit ORDER BY id")
            return [dict(r[0]) for r in rows.fetchall()]


class PgHealthBoard:
    """The health board (:mod:`cartograph.storage.health`) as rows of ``cartograph_replicas``,
    stamped and aged by the database's clock."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.where = f"{db.label} (cartograph_replicas)"

    def publish(self, replica: str, body: dict[str, Any]) -> None:
        with self.db.error_context("publish this replica's health"):
            self.db.conn().execute(
                "INSERT INTO cartograph_replicas (replica, at, record) VALUES (%s, now(), "
                "%s::jsonb) ON CONFLICT (replica) DO UPDATE SET at = excluded.at, "
                "record = excluded.record",
                (replica, json.dumps(body, default=str)),
            )

    def read(self) -> list[ReplicaHealth]:
        with self.db.error_context("read the replicas' health"):
            conn = self.db.conn()
            conn.execute(
                "DELETE FROM cartograph_replicas WHERE at < now() - make_interval(secs => %s)",
                (FORGET_AFTER_S,),
            )
            rows = conn.execute(
                "SELECT replica, extract(epoch FROM now() - at)::float8, record "
                "FROM cartograph_replicas ORDER BY replica"
            ).fetchall()
        return [ReplicaHealth(str(r), float(age), dict(body)) for r, age, body in rows]
