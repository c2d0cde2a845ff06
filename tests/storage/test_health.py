"""The health board: what replicas publish and the console reads, on files and on PostgreSQL."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from cartograph.storage import open_store
from cartograph.storage.health import (
    FORGET_AFTER_S,
    STALE_AFTER_S,
    FileHealthBoard,
    replica_name,
)
from cartograph.workspace import Workspace


def _age(path: Path, seconds: float) -> None:
    record = json.loads(path.read_text("utf-8"))
    record["at"] -= seconds
    path.write_text(json.dumps(record), "utf-8")


def test_a_file_board_keeps_one_record_per_replica_replacing_the_last(tmp_path: Path) -> None:
    board = open_store(Workspace(tmp_path)).health_board()
    board.publish("host-a:1", {"state": "serving", "servers": [{"server": "git"}]})
    board.publish("host-b:2", {"state": "serving", "servers": []})
    board.publish("host-a:1", {"state": "stopped", "servers": [{"server": "git"}]})
    rows = {r.replica: r for r in board.read()}
    assert set(rows) == {"host-a:1", "host-b:2"}
    assert rows["host-a:1"].state == "stopped" and rows["host-b:2"].state == "serving"
    assert rows["host-a:1"].body["servers"] == [{"server": "git"}]
    assert 0 <= rows["host-b:2"].age_s < 5
    assert sorted(p.name for p in (tmp_path / "replicas").iterdir()) == [
        "host-a_1.json",
        "host-b_2.json",
    ]


def test_a_record_not_renewed_is_stale_and_a_day_old_one_is_forgotten(tmp_path: Path) -> None:
    board = FileHealthBoard(tmp_path / "replicas")
    for name in ("quiet:1", "gone:2", "fresh:3"):
        board.publish(name, {"state": "serving"})
    _age(tmp_path / "replicas" / "quiet_1.json", STALE_AFTER_S + 1)
    _age(tmp_path / "replicas" / "gone_2.json", FORGET_AFTER_S + 1)
    rows = {r.replica: r.state for r in board.read()}
    assert rows == {"quiet:1": "stale", "fresh:3": "serving"}
    assert not (tmp_path / "replicas" / "gone_2.json").exists()


def test_an_unreadable_record_is_skipped_with_a_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    board = FileHealthBoard(tmp_path / "replicas")
    board.publish("ok:1", {"state": "serving"})
    (tmp_path / "replicas" / "torn.json").write_text("{not json", "utf-8")
    with caplog.at_level(logging.WARNING):
        assert [r.replica for r in board.read()] == ["ok:1"]
    assert "torn.json" in caplog.text and "unreadable replica record" in caplog.text


def test_an_empty_home_has_an_empty_board(tmp_path: Path) -> None:
    assert FileHealthBoard(tmp_path / "replicas").read() == []
    assert replica_name().rsplit(":", 1)[1].isdigit()


def test_replicas_on_one_postgres_store_see_each_others_records(pg_ws: Workspace) -> None:
    a, b = open_store(pg_ws).health_board(), open_store(pg_ws).health_board()
    a.publish("host-a:1", {"state": "serving", "servers": [{"server": "git", "tools": 3}]})
    b.publish("host-b:2", {"state": "serving"})
    b.publish("host-b:2", {"state": "stopped"})
    for board in (a, b):
        rows = {r.replica: r for r in board.read()}
        assert {k: r.state for k, r in rows.items()} == {
            "host-a:1": "serving",
            "host-b:2": "stopped",
        }
        assert rows["host-a:1"].body["servers"][0]["tools"] == 3
        assert 0 <= rows["host-a:1"].age_s < 30
    assert "cartograph_replicas" in a.where


def test_postgres_ages_records_by_its_own_clock_and_forgets_old_ones(pg_ws: Workspace) -> None:
    store = open_store(pg_ws)
    board = store.health_board()
    board.publish("quiet:1", {"state": "serving"})
    board.publish("gone:2", {"state": "serving"})
    conn = board.db.conn()  # type: ignore[attr-defined]
    conn.execute(
        "UPDATE cartograph_replicas SET at = now() - make_interval(secs => %s) WHERE replica = %s",
        (STALE_AFTER_S + 5, "quiet:1"),
    )
    conn.execute(
        "UPDATE cartograph_replicas SET at = now() - make_interval(secs => %s) WHERE replica = %s",
        (FORGET_AFTER_S + 5, "gone:2"),
    )
    assert {r.replica: r.state for r in board.read()} == {"quiet:1": "stale"}
    left = conn.execute("SELECT replica FROM cartograph_replicas").fetchall()
    assert [r for (r,) in left] == ["quiet:1"]
