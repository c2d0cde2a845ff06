"""The CLI on a shared store: `--store` and `$CARTOGRAPH_STORE`, cards and index commands."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner

from cartograph.cli import main
from cartograph.storage import open_store


def run(pg_ws, *args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(main, ["--home", str(pg_ws.root), *args], env=env)
    return result


def test_cards_and_index_commands_read_the_shared_store(pg_ws, pg_cards):
    listed = run(pg_ws, "--store", pg_ws.store, "cards", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert {row["server"] for row in json.loads(listed.stdout)["cards"]} == set(pg_cards)
    shown = run(pg_ws, "cards", "show", "slack", "--json", env={"CARTOGRAPH_STORE": pg_ws.store})
    assert shown.exit_code == 0 and json.loads(shown.stdout)["identity"]["server"] == "slack"
    built = run(pg_ws, "--store", pg_ws.store, "index", "build", "--json")
    assert built.exit_code == 0, built.output
    info = run(pg_ws, "--store", pg_ws.store, "index", "info", "--json")
    assert json.loads(info.stdout)["tools"] == json.loads(built.stdout)["tools"] == 14
    found = run(pg_ws, "--store", pg_ws.store, "discover", "post to a channel", "--json")
    assert json.loads(found.stdout)["tools"][0]["server"] == "slack"
    for folder in ("index", "cards"):  # ws.ensure() made them; nothing was written there
        assert not any((pg_ws.root / folder).iterdir())


def test_a_tampered_row_fails_verify_and_show(pg_ws, pg_cards):
    with psycopg.connect(pg_ws.store, autocommit=True) as conn:
        conn.execute(
            "UPDATE cartograph_cards SET sealed = convert_to(replace("
            "convert_from(sealed, 'UTF8'), 'Slack', 'Sl4ck'), 'UTF8') WHERE server = 'slack'"
        )
    verified = run(pg_ws, "--store", pg_ws.store, "cards", "verify")
    assert verified.exit_code == 1 and "slack" in verified.output
    shown = run(pg_ws, "--store", pg_ws.store, "cards", "show", "slack")
    assert shown.exit_code == 1 and "changed after signing" in shown.output


def test_import_is_refused_on_a_shared_store_with_what_to_do(pg_ws, pg_cards, tmp_path):
    result = run(pg_ws, "--store", pg_ws.store, "cards", "import", str(tmp_path))
    assert result.exit_code == 2 and "without --store" in result.output


def test_rift_reads_the_same_vectors_from_the_shared_store(pg_ws, pg_cards, tmp_path):
    """Rift asks the index for the whole vector matrix; on PostgreSQL it is read from there."""
    from indexkit import INDEX_KEY, write_workspace_cards

    from cartograph.rift.workspace import run_rift
    from cartograph.workspace import Workspace

    files = Workspace(tmp_path / "files")
    write_workspace_cards(files, INDEX_KEY)
    on_pg, on_files = run_rift(pg_ws, open_store(pg_ws)), run_rift(files, open_store(files))
    assert on_pg.tools_total == on_files.tools_total == 14
    assert on_pg.summary == on_files.summary
    assert [c.model_dump() for c in on_pg.clusters] == [c.model_dump() for c in on_files.clusters]
