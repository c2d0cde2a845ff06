"""The clients store: named API keys (stored hashed) and each client's policy.

``<home>/clients.json`` holds, per client, a key id, the SHA-256 of the key's secret, when it
was created, whether it is revoked, and its :class:`~cartograph.access.policy.Policy`. A key is
``cg_<key id>_<secret>``: the id finds the record, the secret is compared in constant time
against the stored hash. The key itself is shown once, when it is created, and never stored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartograph import clock
from cartograph.access.policy import Policy, policy_from_json
from cartograph.errors import AuthError, ConfigError, UsageError
from cartograph.files import atomic_write
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

CLIENTS_FILE = "clients.json"
KEY_PREFIX = "cg_"
NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True)
class ClientRecord:
    """One registered client (no secret in it: only the hash)."""

    name: str
    key_id: str
    key_hash: str
    created: str
    policy: Policy
    revoked: str | None = None
    admin: bool = False  # may act from the console (queue a quarantine lift, a regeneration)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key_id": self.key_id,
            "key_sha256": self.key_hash,
            "created": self.created,
            "policy": self.policy.to_json(),
        }
        if self.revoked:
            out["revoked"] = self.revoked
        if self.admin:
            out["admin"] = True
        return out


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class ClientStore:
    """Read and change ``clients.json``; :meth:`authenticate` checks a presented API key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._mtime: float | None = None
        self._records: dict[str, ClientRecord] = {}

    @classmethod
    def of(cls, ws: Workspace) -> ClientStore:
        return cls(ws.root / CLIENTS_FILE)

    def records(self) -> dict[str, ClientRecord]:
        """The records, re-read when the file changed (so a revocation applies at once)."""
        try:
            mtime = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            self._records, self._mtime = {}, None
            return {}
        if mtime != self._mtime:
            self._records = self._read()
            self._mtime = mtime
        return self._records

    def _read(self) -> dict[str, ClientRecord]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
            rows = data["clients"]
            return {
                name: ClientRecord(
                    name=name,
                    key_id=str(row["key_id"]),
                    key_hash=str(row["key_sha256"]),
                    created=str(row["created"]),
                    policy=policy_from_json(row.get("policy", {}), source=str(self.path)),
                    revoked=row.get("revoked"),
                    admin=row.get("admin") is True,
                )
                for name, row in rows.items()
            }
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"cannot read the clients store: {exc}", file=str(self.path)) from exc

    def _write(self, records: dict[str, ClientRecord]) -> None:
        body = {"clients": {n: r.to_json() for n, r in sorted(records.items())}}
        atomic_write(self.path, json.dumps(body, indent=1) + "\n", mode=0o600)
        self._mtime = None

    def add(self, name: str, policy: Policy, *, admin: bool = False) -> str:
        """Register ``name`` (or replace a revoked one) and return its new key, shown once;
        ``admin``: it may act from the console."""
        if not NAME_RE.match(name):
            raise UsageError(f"client name {name!r} must match {NAME_RE.pattern}")
        records = dict(self.records())
        if name in records and not records[name].revoked:
            raise UsageError(f"client {name!r} exists; revoke it first to issue a new key")
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        records[name] = ClientRecord(
            name, key_id, _hash(secret), clock.stamp(), policy, admin=admin
        )
        self._write(records)
        logger.info("client %s added (key id %s)", name, key_id)
        return f"{KEY_PREFIX}{key_id}_{secret}"

    def revoke(self, name: str) -> ClientRecord:
        records = dict(self.records())
        record = records.get(name)
        if record is None:
            raise UsageError(f"no client named {name!r}")
        if not record.revoked:
            records[name] = dataclasses.replace(record, revoked=clock.stamp())
            self._write(records)
            logger.info("client %s revoked (key id %s)", name, record.key_id)
        return records[name]

    def policy_of(self, name: str) -> Policy:
        record = self.records().get(name)
        if record is None:
            raise UsageError(f"no client named {name!r}; add it with `cartograph clients add`")
        return record.policy

    def authenticate(self, token: str) -> ClientRecord:
        """The client whose live key is ``token``; raises :class:`AuthError` otherwise."""
        if not token.startswith(KEY_PREFIX) or token.count("_") < 2:
            raise AuthError("not a Cartograph API key")
        key_id, secret = token[len(KEY_PREFIX) :].split("_", 1)
        presented = _hash(secret)
        found: ClientRecord | None = None
        for record in self.records().values():
            # compare every record so timing does not tell which key ids exist
            same_id = hmac.compare_digest(record.key_id, key_id)
            same_key = hmac.compare_digest(record.key_hash, presented)
            if same_id and same_key:
                found = record
        if found is None:
            raise AuthError("unknown or wrong API key")
        if found.revoked:
            raise AuthError("this API key was revoked")
        return found
