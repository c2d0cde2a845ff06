"""The PostgreSQL side of the shared store: connections, the schema and its version, vector I/O.

One :class:`Database` per URL and process (:func:`database`). Each thread gets its own
autocommit connection (discover ranks on worker threads while the event loop refreshes the
catalog). The schema is created idempotently under an advisory lock, so replicas that start at
once do not race, and each version applied is recorded in ``cartograph_schema``: version 2 adds
the card history (``cartograph_card_history``) and files every current card as its version 1.
A database made by a newer Cartograph is refused. Vectors travel in pgvector's binary format as
float32 arrays.

psycopg is imported here and only here: nothing loads this module unless a ``postgresql://``
store is configured.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, LiteralString
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from cartograph.cards.codec import stored_signature
from cartograph.errors import StoreError

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 5
DIM = 384  # the vector column's width: the MiniLM embedders' dimension
SCHEMA_LOCK = 0x43415254  # advisory lock ids: "CART", and one for index writers
INDEX_LOCK = 0x43415249

_SCHEMA_V1: list[LiteralString] = [
    """CREATE TABLE IF NOT EXISTS cartograph_state (
         name text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0)""",
    """INSERT INTO cartograph_state (name) VALUES ('cards'), ('quarantine')
         ON CONFLICT (name) DO NOTHING""",
    """CREATE TABLE IF NOT EXISTS cartograph_cards (
         server text PRIMARY KEY, sealed bytea NOT NULL,
         written_at timestamptz NOT NULL DEFAULT now(), written_by text NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cartograph_index_meta (
         id int PRIMARY KEY CHECK (id = 1), embedder jsonb NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cartograph_index_servers (
         server text PRIMARY KEY, card_key text NOT NULL,
         server_vector vector(384) NOT NULL, centroid vector(384) NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cartograph_index_tools (
         id bigserial PRIMARY KEY,
         server text NOT NULL REFERENCES cartograph_index_servers (server) ON DELETE CASCADE,
         tool text NOT NULL, embedding vector(384) NOT NULL, UNIQUE (server, tool))""",
    """CREATE INDEX IF NOT EXISTS cartograph_index_tools_hnsw
         ON cartograph_index_tools USING hnsw (embedding vector_cosine_ops)
         WITH (m = 16, ef_construction = 256)""",
    """CREATE TABLE IF NOT EXISTS cartograph_quarantine (
         server text NOT NULL, tool text NOT NULL, reason text NOT NULL,
         detected_at text NOT NULL, card_digest text NOT NULL,
         live_schema_hash text, live_description_hash text, PRIMARY KEY (server, tool))""",
    """CREATE TABLE IF NOT EXISTS cartograph_audit (
         id bigserial PRIMARY KEY, time timestamptz NOT NULL, event text NOT NULL,
         replica text NOT NULL, record jsonb NOT NULL)""",
]

_SCHEMA_V2: list[LiteralString] = [
    """CREATE TABLE IF NOT EXISTS cartograph_card_history (
         server text NOT NULL, version int NOT NULL, sealed bytea NOT NULL, signature text,
         written_at timestamptz NOT NULL DEFAULT now(), written_by text NOT NULL,
         PRIMARY KEY (server, version))""",
]

# v3: each tool row remembers the hash of the text its vector was embedded from (model id +
# text, index.vector_cache.text_key), so a re-attested server embeds only its changed tools
_SCHEMA_V3: list[LiteralString] = [
    "ALTER TABLE cartograph_index_tools ADD COLUMN IF NOT EXISTS text_key text",
]

# v4: the health board (storage.health): each replica's last published health, by replica
_SCHEMA_V4: list[LiteralString] = [
    """CREATE TABLE IF NOT EXISTS cartograph_replicas (
         replica text PRIMARY KEY, at timestamptz NOT NULL, record jsonb NOT NULL)""",
]

# v5: the job queue (storage.jobs): console actions waiting for the operator's key
_SCHEMA_V5: list[LiteralString] = [
    """CREATE TABLE IF NOT EXISTS cartograph_jobs (
         id text PRIMARY KEY, seq bigserial, record jsonb NOT NULL)""",
]

_MIGRATIONS: dict[int, list[LiteralString]] = {
    1: _SCHEMA_V1,
    2: _SCHEMA_V2,
    3: _SCHEMA_V3,
    4: _SCHEMA_V4,
    5: _SCHEMA_V5,
}


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for messages and logs)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://(unparsable URL)"
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


class _VectorDumper(Dumper):
    """A float array as a pgvector value (binary: dim, unused, big-endian float4s)."""

    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        arr = np.asarray(obj, dtype=">f4").reshape(-1)
        return struct.pack(">HH", arr.shape[0], 0) + arr.tobytes()


class _VectorLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray:
        return np.frombuffer(bytes(data), dtype=">f4", offset=4).astype(np.float32)


class Database:
    """Connections to one store, its schema ensured on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.label = redact(url)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[psycopg.Connection[Any]] = []
        self.vector_oid = 0
        with self.error_context("create the schema"):
            conn = self._connect()
            self._ensure_schema(conn)
            info = TypeInfo.fetch(conn, "vector")
            if info is None:
                raise StoreError(f"{self.label}: the pgvector extension is not installed")
            self.vector_oid = info.oid
            self._adapt(conn)
            self._local.conn = conn

    @contextmanager
    def error_context(self, doing: str) -> Iterator[None]:
        """Map driver errors to :class:`StoreError` naming the store and what was being done."""
        try:
            yield
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"{self.label}: cannot {doing}: {_first_line(exc)}; check that the server "
                "runs and the URL (--store / $CARTOGRAPH_STORE) is right"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"{self.label}: cannot {doing}: {_first_line(exc)}") from exc

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(
            self.url, autocommit=True, connect_timeout=10, application_name="cartograph"
        )
        with self._lock:
            self._conns.append(conn)
        return conn

    def _adapt(self, conn: psycopg.Connection[Any]) -> None:
        dumper = type("VectorDumper", (_VectorDumper,), {"oid": self.vector_oid})
        conn.adapters.register_dumper(np.ndarray, dumper)
        conn.adapters.register_dumper(None, dumper)  # by oid, for binary COPY
        conn.adapters.register_loader(self.vector_oid, _VectorLoader)
        conn.execute("SET hnsw.ef_search = 1000")  # ANN candidates as deep as fusion ranks

    def conn(self) -> psycopg.Connection[Any]:
        """This thread's connection (opened on first use, reopened after it broke)."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken:
            with self.error_context("connect"):
                conn = self._connect()
                self._adapt(conn)
            self._local.conn = conn
        return conn

    def generation(self, name: str) -> int:
        with self.error_context(f"read the {name} generation"):
            row = (
                self.conn()
                .execute("SELECT generation FROM cartograph_state WHERE name = %s", (name,))
                .fetchone()
            )
        return int(row[0]) if row else 0

    def _ensure_schema(self, conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS cartograph_schema "
                "(version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT max(version) FROM cartograph_schema").fetchone()
            have = int(row[0]) if row and row[0] is not None else 0
            if have > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.label}: the store has schema version {have}, made by a newer "
                    f"Cartograph (this one knows {SCHEMA_VERSION}); upgrade Cartograph"
                )
            for version in range(have + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[version]:
                    conn.execute(statement)
                if version == 2:
                    _file_current_cards_as_history(conn)
                conn.execute(
                    "INSERT INTO cartograph_schema (version) VALUES (%s) "
                    "ON CONFLICT (version) DO NOTHING",
                    (version,),
                )
                logger.info("%s: applied the Cartograph schema v%d", self.label, version)

    def close(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()


def _file_current_cards_as_history(conn: psycopg.Connection[Any]) -> None:
    """Schema v2: each card already stored becomes version 1 of its server's history."""
    rows = conn.execute(
        "SELECT server, sealed, written_at, written_by FROM cartograph_cards "
        "WHERE server NOT IN (SELECT server FROM cartograph_card_history)"
    ).fetchall()
    for server, sealed, written_at, written_by in rows:
        raw = bytes(sealed)
        conn.execute(
            "INSERT INTO cartograph_card_history "
            "(server, version, sealed, signature, written_at, written_by) "
            "VALUES (%s, 1, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (server, raw, stored_signature(raw), written_at, written_by),
        )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


_DATABASES: dict[str, Database] = {}
_DATABASES_LOCK = threading.Lock()


def database(url: str) -> Database:
    """The process's :class:`Database` for ``url`` (schema ensured once)."""
    with _DATABASES_LOCK:
        db = _DATABASES.get(url)
        if db is None:
            db = _DATABASES[url] = Database(url)
        return db


def close_all() -> None:
    """Close every connection this process opened (tests, benchmarks)."""
    with _DATABASES_LOCK:
        dbs = list(_DATABASES.values())
        _DATABASES.clear()
    for db in dbs:
        db.close()
