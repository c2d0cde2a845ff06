"""`cartograph jobs`: what admins queued from the console, carried out with the operator's key.

The console never holds the private key, so its actions (lift a quarantine, regenerate Rift's
HIGH cards) wait on the store's job queue (:mod:`cartograph.storage.jobs`). ``jobs list`` shows
them; ``jobs run`` carries out each queued one as the command the console page names
(``bootstrap --server NAME``, ``rift --regenerate``), run here with the same ``--home`` and
``--store``, marks it done or failed with the last lines it printed, and audits it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import click

from cartograph.cli.common import (
    AppContext,
    config_option,
    emit_json,
    handle_errors,
    json_option,
    new_table,
    pass_app,
    stderr,
    stdout,
)

if TYPE_CHECKING:
    from cartograph.storage import Job

OUTCOME_LINES = 20
OUTCOME_COLUMNS = 64  # its tables fit the jobs page's outcome box
JOB_TIMEOUT_S = 1800


@click.group()
def jobs() -> None:
    """Console actions queued for the operator's key: list them, run them."""


@jobs.command("list")
@json_option()
@pass_app
@handle_errors
def jobs_list(app: AppContext, as_json: bool) -> None:
    """Every job, oldest first: what, who asked, when, and how it ended."""
    from cartograph.storage import open_store

    found = open_store(app.workspace).job_queue().jobs()
    if as_json:
        emit_json([j.to_json() for j in found])
        return
    table = new_table("job", "what", "asked by", "at", "state")
    for j in found:
        table.add_row(j.id, _what(j), j.by, j.at, j.state)
    stdout.print(table if found else "no job has been queued")


@jobs.command("run")
@config_option("mcp.json for re-attesting. Default: the one recorded by bootstrap.")
@click.option("--only", multiple=True, metavar="ID", help="Run only this job; repeatable.")
@json_option()
@pass_app
@handle_errors
def jobs_run(
    app: AppContext, config_path: str | None, only: tuple[str, ...], as_json: bool
) -> None:
    """Carry out every queued job with the operator's key; exit 1 if one failed."""
    from cartograph.storage import open_store

    store = open_store(app.workspace)
    queue, audit = store.job_queue(), store.audit_log()
    queued = [j for j in queue.jobs() if j.state == "queued" and (not only or j.id in only)]
    finished = []
    for job in queued:
        stderr.print(f"job {job.id}: {_what(job)} (asked by {job.by})")
        code, outcome = _carry_out(app, job, config_path)
        done = queue.finish(job, "done" if code == 0 else "failed", outcome)
        audit.write("job-run", job=job.id, kind=job.kind, by=job.by, outcome=done.state)
        finished.append(done)
        stderr.print(f"job {job.id}: {done.state}")
    audit.close()
    if as_json:
        emit_json([j.to_json() for j in finished])
    elif not finished:
        stdout.print("no queued job")
    if any(j.state == "failed" for j in finished):
        raise SystemExit(1)


def _what(job: Job) -> str:
    return f"{job.kind} {job.args['server']}" if "server" in job.args else job.kind


def _command(app: AppContext, job: Job, config_path: str | None) -> list[str]:
    base = [sys.executable, "-m", "cartograph"]
    if app.home:
        base += ["--home", app.home]
    if app.store:
        base += ["--store", app.store]
    if job.kind == "reattest":
        where = ["--config", config_path] if config_path else []
        return [*base, "bootstrap", "--server", job.args["server"], *where]
    return [*base, "rift", "--regenerate", "--fail-on", "never"]


def _carry_out(app: AppContext, job: Job, config_path: str | None) -> tuple[int, str]:
    """Run the job's command; its exit code and the last lines it printed."""
    command = _command(app, job, config_path)
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=JOB_TIMEOUT_S,
            check=False,
            env={**os.environ, "COLUMNS": str(OUTCOME_COLUMNS), "NO_COLOR": "1"},
        )
    except subprocess.TimeoutExpired:
        return 124, f"did not finish within {JOB_TIMEOUT_S} s"
    lines = (done.stdout + done.stderr).strip().splitlines()
    shown = " ".join(command[3:])
    return done.returncode, "\n".join([f"$ cartograph {shown}", *lines[-OUTCOME_LINES:]])
