"""Card history in PostgreSQL: the v1 -> v2 schema upgrade, and writers of one server at once."""

from __future__ import annotations

import threading

import psycopg
from indexkit import INDEX_KEY

from cartograph.cards.seal import sign_card
from cartograph.storage import open_store
from cartograph.storage.pg_db import SCHEMA_VERSION, close_all


def test_a_version_1_store_is_upgraded_and_its_cards_become_version_1(pg_ws, pg_cards):
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:  # as Cartograph 0.1 left it
        conn.execute("DROP TABLE cartograph_card_history")
        conn.execute("DELETE FROM cartograph_schema WHERE version > 1")
    close_all()  # a new process: the schema is looked at again
    store = open_store(pg_ws)
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:
        versions = conn.execute("SELECT version FROM cartograph_schema ORDER BY 1").fetchall()
    assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)] and SCHEMA_VERSION == 5
    loaded = store.load_verified()
    assert loaded.cards == pg_cards
    for server, card in pg_cards.items():
        assert [v.version for v in store.card_history(server)] == [1]
        assert store.card_version(server, card) == 1
        assert store.read_version(server, 1) == card
    newer = sign_card(pg_cards["slack"], INDEX_KEY, signed_at="2026-11-30T01:00:00Z")
    assert store.write_card(newer).version == 2
    close_all()
    assert [v.version for v in open_store(pg_ws).card_history("slack")] == [1, 2]  # idempotent


def test_replicas_writing_one_server_at_once_get_distinct_increasing_versions(pg_ws, pg_cards):
    base = pg_cards["weather"]
    errors: list[BaseException] = []

    def writer(hour: int) -> None:
        try:
            store = open_store(pg_ws)
            for minute in range(5):
                at = f"2026-11-30T{hour:02d}:{minute:02d}:00Z"
                store.write_card(sign_card(base, INDEX_KEY, signed_at=at))
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(h,)) for h in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    store = open_store(pg_ws)
    assert [v.version for v in store.card_history("weather")] == list(range(1, 17))
    current = store.load_verified().cards["weather"]
    assert store.card_version("weather", current) == 16
    assert store.read_version("weather", 16) == current
