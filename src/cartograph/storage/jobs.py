"""The job queue: what an admin asked for from the console, for the operator's key to carry out.

The serving process never reads the operator's private key, so a console action that needs it
(lifting a quarantine is re-attesting the server; regenerating confusable cards) becomes a
:class:`Job` here, ``queued``; ``cartograph jobs run``, where the key is, carries each out and
marks it ``done`` or ``failed`` with what it printed. :data:`KINDS` are the jobs there are.

:class:`FileJobQueue` keeps ``<home>/jobs/<id>.json`` (one file per job, replaced atomically);
the PostgreSQL queue (:class:`~cartograph.storage.pg_state.PgJobQueue`) is the table
``cartograph_jobs``. A queued job for the same kind and arguments is not queued twice.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from cartograph.errors import UsageError
from cartograph.files import atomic_write

logger = logging.getLogger(__name__)

JOBS_DIR = "jobs"
JobKind = Literal["reattest", "regenerate"]
KINDS: dict[str, str] = {
    "reattest": "re-attest a server from its live listing (lifts its quarantine)",
    "regenerate": "regenerate the cards of Rift's HIGH clusters with the operator's generator",
}
JobState = Literal["queued", "done", "failed"]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Job:
    """One queued action: ``args`` (``server`` for reattest), who asked and when, and how it
    ended (``outcome``: the last lines the command printed)."""

    id: str
    kind: str
    args: dict[str, str]
    by: str
    at: str
    state: JobState = "queued"
    finished: str | None = None
    outcome: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, row: dict[str, Any]) -> Job:
        return cls(
            id=str(row["id"]),
            kind=str(row["kind"]),
            args={str(k): str(v) for k, v in dict(row["args"]).items()},
            by=str(row["by"]),
            at=str(row["at"]),
            state=row.get("state", "queued"),
            finished=row.get("finished"),
            outcome=row.get("outcome"),
        )


def new_job(kind: str, args: dict[str, str], by: str) -> Job:
    if kind not in KINDS:
        raise UsageError(f"unknown job kind {kind!r}; the kinds are {', '.join(KINDS)}")
    if kind == "reattest" and not args.get("server"):
        raise UsageError("a reattest job needs the server to re-attest")
    return Job(id=secrets.token_hex(6), kind=kind, args=dict(args), by=by, at=now())


class JobQueue(Protocol):
    """Where console actions wait for the operator's run; ``where`` names it in messages."""

    where: str

    def submit(self, kind: str, args: dict[str, str], by: str) -> Job:
        """Queue a job (or return the queued one for the same kind and arguments)."""
        ...

    def jobs(self) -> list[Job]:
        """Every job, oldest first."""
        ...

    def finish(self, job: Job, state: JobState, outcome: str) -> Job:
        """Mark ``job`` done or failed with ``outcome``."""
        ...


class FileJobQueue:
    """``<home>/jobs/<id>.json``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.where = str(directory)

    def submit(self, kind: str, args: dict[str, str], by: str) -> Job:
        job = new_job(kind, args, by)
        for known in self.jobs():
            if known.state == "queued" and (known.kind, known.args) == (kind, job.args):
                return known
        self._write(job)
        return job

    def jobs(self) -> list[Job]:
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.glob("*.json"):
            try:
                found.append(Job.of(json.loads(path.read_text("utf-8"))))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                logger.warning("%s: unreadable job, skipped: %s", path, exc)
        return sorted(found, key=lambda j: (j.at, j.id))

    def finish(self, job: Job, state: JobState, outcome: str) -> Job:
        done = Job(**{**job.to_json(), "state": state, "finished": now(), "outcome": outcome})
        self._write(done)
        return done

    def _write(self, job: Job) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write(self.directory / f"{job.id}.json", json.dumps(job.to_json()), fsync=True)


__all__ = ["JOBS_DIR", "KINDS", "FileJobQueue", "Job", "JobQueue", "JobState", "new_job"]
