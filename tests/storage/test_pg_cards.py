"""Cards in PostgreSQL: stored sealed, verified on every load exactly like card files."""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg
import pytest
from indexkit import INDEX_KEY

from cartograph.cards.seal import sign_card
from cartograph.errors import StoreError
from cartograph.storage import load_verified, open_index, open_store
from cartograph.storage.pg_db import SCHEMA_VERSION, Database, redact
from cartograph.workspace import Workspace


def test_cards_round_trip_and_each_write_bumps_the_generation(pg_ws, pg_cards):
    store = open_store(pg_ws)
    loaded = load_verified(pg_ws)
    assert loaded.cards == pg_cards and not loaded.failures
    before = store.cards_stamp()
    card = pg_cards["slack"]
    store.write_card(sign_card(card, INDEX_KEY, signed_at="2026-11-30T01:00:00Z"))
    assert store.cards_stamp() == before + 1
    assert load_verified(pg_ws).cards["slack"].signature.signed_at == "2026-11-30T01:00:00Z"
    assert not (pg_ws.cards_dir).exists() or not any(pg_ws.cards_dir.iterdir())


def test_a_row_tampered_in_the_database_never_reaches_discover(pg_ws, pg_cards, embedder):
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:
        raw = conn.execute("SELECT sealed FROM cartograph_cards WHERE server = 'gmail'").fetchone()
        forged = raw[0].replace(b"send email", b"wire money")
        assert forged != raw[0]
        conn.execute("UPDATE cartograph_cards SET sealed = %s WHERE server = 'gmail'", (forged,))
    loaded = load_verified(pg_ws)
    assert "gmail" not in loaded.cards and set(loaded.cards) == set(pg_cards) - {"gmail"}
    (failure,) = loaded.failures
    assert failure.kind == "signature" and failure.server == "gmail"
    assert "changed after signing" in failure.reason and failure.path.name == "gmail.card.json"
    index = open_index(pg_ws, embedder)
    assert all(server != "gmail" for server, _ in index.tool_ids)
    assert all(h.server != "gmail" for h in index.search("send an email to my boss", k=5))


def test_a_card_filed_under_another_servers_name_is_refused(pg_ws, pg_cards):
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:
        conn.execute(
            "UPDATE cartograph_cards SET sealed = "
            "(SELECT sealed FROM cartograph_cards WHERE server = 'gmail') WHERE server = 'slack'"
        )
    loaded = load_verified(pg_ws)
    assert "slack" not in loaded.cards and "gmail" in loaded.cards
    (failure,) = loaded.failures
    assert "holds the signed card of 'gmail'" in failure.reason


def test_the_schema_is_created_once_and_a_newer_one_is_refused(pg_url):
    Database(pg_url)
    Database(pg_url)  # idempotent
    with psycopg.connect(pg_url, autocommit=True) as conn:
        versions = conn.execute("SELECT version FROM cartograph_schema ORDER BY 1").fetchall()
        assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
        conn.execute("INSERT INTO cartograph_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer Cartograph"):
        Database(pg_url)


def test_an_unreachable_store_is_named_without_its_password(tmp_path):
    url = f"postgresql://me:s3cret@/nodb?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError) as err:
        load_verified(Workspace(tmp_path / "home", store=url))
    assert "s3cret" not in str(err.value) and "me:***@" in str(err.value)
    assert "--store" in str(err.value)
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


def test_an_unknown_store_scheme_is_a_config_error(monkeypatch, tmp_path):
    from cartograph.errors import ConfigError

    monkeypatch.setenv("CARTOGRAPH_STORE", "mysql://x")
    with pytest.raises(ConfigError, match="unknown store 'mysql'"):
        Workspace.resolve(tmp_path)
    monkeypatch.setenv("CARTOGRAPH_STORE", "")
    assert Workspace.resolve(tmp_path).store is None


def test_the_file_store_never_imports_the_database_driver(tmp_path):
    code = (
        "import sys\n"
        "from indexkit import INDEX_KEY, write_workspace_cards\n"
        "from cartograph.workspace import Workspace\n"
        "from cartograph.proxy.catalog import CardCatalog\n"
        "from cartograph.storage import load_verified, open_store\n"
        f"ws = Workspace.resolve({str(tmp_path)!r})\n"
        "write_workspace_cards(ws, INDEX_KEY)\n"
        "assert load_verified(ws).cards and CardCatalog(ws, open_store(ws)).cards\n"
        "open_store(ws).audit_log(); open_store(ws).quarantine_ledger()\n"
        "names = ('psycopg', 'cartograph.storage.pg')\n"
        "print(sorted(m for m in sys.modules if m.startswith(names)))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(["tests/support", "src"])}
    env.pop("CARTOGRAPH_STORE", None)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"
