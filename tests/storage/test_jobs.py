"""The job queue: console actions waiting for the operator's key, on files and on PostgreSQL."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cartograph.errors import UsageError
from cartograph.storage import open_store
from cartograph.workspace import Workspace


def _exercise(ws: Workspace) -> None:
    queue = open_store(ws).job_queue()
    first = queue.submit("reattest", {"server": "git"}, "boss")
    again = queue.submit("reattest", {"server": "git"}, "other-admin")
    regen = queue.submit("regenerate", {}, "boss")
    assert again.id == first.id and again.by == "boss"  # queued once
    assert [j.id for j in queue.jobs()] == [first.id, regen.id]
    done = queue.finish(first, "done", "$ cartograph bootstrap --server git\n1 card signed")
    assert done.finished and done.state == "done"
    seen = {j.id: j for j in open_store(ws).job_queue().jobs()}  # another process's view
    assert seen[first.id].outcome == "$ cartograph bootstrap --server git\n1 card signed"
    assert seen[regen.id].state == "queued"
    later = queue.submit("reattest", {"server": "git"}, "boss")
    assert later.id != first.id  # the first one ended: a new lift is a new job
    with pytest.raises(UsageError, match="unknown job kind 'delete'"):
        queue.submit("delete", {}, "boss")
    with pytest.raises(UsageError, match="needs the server"):
        queue.submit("reattest", {}, "boss")


def test_jobs_on_files_are_queued_once_finished_and_seen_by_others(tmp_path: Path) -> None:
    _exercise(Workspace(tmp_path / "home"))
    assert len(list((tmp_path / "home" / "jobs").glob("*.json"))) == 3


def test_jobs_on_postgres_are_queued_once_finished_and_seen_by_others(pg_ws: Workspace) -> None:
    _exercise(pg_ws)


def test_an_unreadable_job_file_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws = Workspace(tmp_path / "home")
    queue = open_store(ws).job_queue()
    queue.submit("regenerate", {}, "boss")
    (tmp_path / "home" / "jobs" / "torn.json").write_text("{", "utf-8")
    with caplog.at_level(logging.WARNING):
        assert [j.kind for j in queue.jobs()] == ["regenerate"]
    assert "torn.json" in caplog.text
