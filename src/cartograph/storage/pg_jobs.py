"""The job queue (:mod:`cartograph.storage.jobs`) on PostgreSQL: the table ``cartograph_jobs``.

One row per job, its JSON in ``record``; any replica's console queues, the operator's
``cartograph jobs run`` on any host with the key carries out.
"""

from __future__ import annotations

import json

from cartograph.storage.jobs import Job, JobState, new_job, now
from cartograph.storage.pg_db import Database


class PgJobQueue:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.where = f"{db.label} (cartograph_jobs)"

    def submit(self, kind: str, args: dict[str, str], by: str) -> Job:
        job = new_job(kind, args, by)
        with self.db.error_context("queue a job"):
            conn = self.db.conn()
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('cartograph_jobs'))")
                queued = conn.execute(
                    "SELECT record FROM cartograph_jobs WHERE record->>'state' = 'queued' "
                    "AND record->>'kind' = %s AND record->'args' = %s::jsonb",
                    (kind, json.dumps(job.args)),
                ).fetchone()
                if queued is not None:
                    return Job.of(dict(queued[0]))
                conn.execute(
                    "INSERT INTO cartograph_jobs (id, record) VALUES (%s, %s::jsonb)",
                    (job.id, json.dumps(job.to_json())),
                )
        return job

    def jobs(self) -> list[Job]:
        with self.db.error_context("read the job queue"):
            rows = self.db.conn().execute("SELECT record FROM cartograph_jobs ORDER BY seq")
            return [Job.of(dict(r[0])) for r in rows.fetchall()]

    def finish(self, job: Job, state: JobState, outcome: str) -> Job:
        done = Job(**{**job.to_json(), "state": state, "finished": now(), "outcome": outcome})
        with self.db.error_context("finish a job"):
            self.db.conn().execute(
                "UPDATE cartograph_jobs SET record = %s::jsonb WHERE id = %s",
                (json.dumps(done.to_json()), job.id),
            )
        return done
