"""Card history in the workspace files: every signed version kept, numbered, verified on read."""

from __future__ import annotations

import json

import pytest
from cardkit import FIXED_KEY, make_card
from click.testing import CliRunner

from cartograph.cards.seal import sealed_bytes, sign_card
from cartograph.cli import main
from cartograph.errors import ConfigError, TrustError, UsageError, VerificationError
from cartograph.storage import open_store
from cartograph.storage.base import DEFAULT_CARD_HISTORY
from cartograph.trust.keys import load_key, write_key_pair
from cartograph.trust.lifecycle import rotate_key
from cartograph.trust.revoke import revoke_key
from cartograph.workspace import Workspace, update_settings

AT = "2026-11-{:02d}T00:00:00Z"


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def ws(tmp_path) -> Workspace:
    """A home whose operator key has no validity window yet (so past signing times verify)."""
    ws = Workspace(tmp_path / "home")
    write_key_pair(ws, FIXED_KEY)
    return ws


def signed(ws: Workspace, day: int, n_tools: int = 2):
    return sign_card(make_card("clock", n_tools=n_tools), load_key(ws), signed_at=AT.format(day))


def test_each_new_signed_version_gets_the_next_number_and_the_current_is_the_newest(ws):
    store = open_store(ws)
    numbers = [store.write_card(signed(ws, day)).version for day in (1, 2, 3)]
    assert numbers == [1, 2, 3]
    kept = store.card_history("clock")
    assert [v.version for v in kept] == [1, 2, 3]
    assert (
        ws.card_path("clock").read_bytes()
        == (ws.history_dir / "clock" / "3.card.json").read_bytes()
    )
    assert store.read_version("clock", 1).signature.signed_at == AT.format(1)
    current = store.load_verified().cards["clock"]
    assert store.card_version("clock", current) == 3
    assert {v.sha256 for v in kept} == {v.sha256 for v in store.card_history("clock")}


def test_a_byte_identical_rewrite_adds_no_version_and_leaves_the_file_alone(ws):
    store = open_store(ws)
    card = signed(ws, 1)
    store.write_card(card)
    before = ws.card_path("clock").stat().st_mtime_ns
    stamp = store.cards_stamp()
    assert store.write_card(card).version == 1
    assert [v.version for v in store.card_history("clock")] == [1]
    assert ws.card_path("clock").stat().st_mtime_ns == before and store.cards_stamp() == stamp
    resealed = sign_card(card, load_key(ws), signed_at=AT.format(2))  # same text, new signature
    assert store.write_card(resealed).version == 2


def test_only_the_newest_versions_are_kept_and_numbers_keep_growing(ws):
    update_settings(ws, card_history=2)
    store = open_store(ws)
    for day in range(1, 6):
        store.write_card(signed(ws, day))
    assert [v.version for v in store.card_history("clock")] == [4, 5]
    with pytest.raises(UsageError, match=r"no version 2 .*versions kept: 4\.\.5"):
        store.read_version("clock", 2)
    assert store.write_card(signed(ws, 6)).version == 6
    assert open_store(Workspace(ws.root)).write_card(signed(ws, 7)).version == 7


def test_the_retention_setting_must_be_a_positive_whole_number(ws):
    for bad in (0, -3, "20", 2.5, True):
        with pytest.raises(ConfigError, match="card_history must be a whole number") as err:
            update_settings(ws, card_history=bad)  # refused before it is written
        assert err.value.field == "card_history" and err.value.file == str(ws.config_file)
        ws.config_file.write_text(json.dumps({"card_history": bad}))  # or written by hand
        with pytest.raises(ConfigError, match="card_history must be a whole number") as err:
            open_store(ws)
        assert err.value.field == "card_history" and err.value.file == str(ws.config_file)
    assert DEFAULT_CARD_HISTORY == 20


def test_a_tampered_old_version_is_refused_naming_the_version(ws):
    store = open_store(ws)
    store.write_card(signed(ws, 1))
    store.write_card(signed(ws, 2))
    old = ws.history_dir / "clock" / "1.card.json"
    old.write_bytes(old.read_bytes().replace(b"wall-clock", b"wall-clack", 1))
    with pytest.raises(VerificationError, match=r"version 1 of the card of server 'clock'") as err:
        store.read_version("clock", 1)
    assert "changed after signing" in str(err.value) and str(old) in str(err.value)
    assert store.read_version("clock", 2).signature.signed_at == AT.format(2)
    assert list(store.load_verified().cards) == ["clock"]  # the current card is unaffected


def test_an_old_version_by_a_revoked_key_is_refused_as_a_trust_error(ws):
    store = open_store(ws)
    store.write_card(signed(ws, 1))
    rotate_key(ws)
    revoke_key(ws, FIXED_KEY.key_id, reason="laptop stolen")
    with pytest.raises(TrustError) as err:
        store.read_version("clock", 1)
    assert err.value.kind == "revoked" and "version 1" in str(err.value)


def test_a_card_written_before_history_was_kept_becomes_version_1(ws):
    first = signed(ws, 1)
    ws.card_path("clock").parent.mkdir(parents=True)
    ws.card_path("clock").write_bytes(sealed_bytes(first))  # an older Cartograph wrote this
    store = open_store(ws)
    assert store.card_history("clock") == []
    assert store.card_version("clock", first) is None
    assert store.write_card(signed(ws, 2)).version == 2
    assert store.read_version("clock", 1) == first


def test_resigning_adds_a_version(ws):
    store = open_store(ws)
    store.write_card(signed(ws, 1))
    rotate_key(ws)
    result = store.resign(load_key(ws))
    assert result.resigned == ["clock"]
    assert [v.version for v in store.card_history("clock")] == [1, 2]
    assert store.read_version("clock", 2).signature.key_id == load_key(ws).key_id


def test_cards_show_version_and_cards_history_on_the_cli(ws):
    store = open_store(ws)
    store.write_card(signed(ws, 1, n_tools=1))
    store.write_card(signed(ws, 2, n_tools=3))
    shown = run(ws.root, "cards", "show", "clock", "--version", "1", "--json")
    assert shown.exit_code == 0, shown.output
    assert len(json.loads(shown.stdout)["tools"]) == 1
    human = run(ws.root, "cards", "show", "clock", "--version", "2")
    assert human.exit_code == 0 and "version 2 of the card of clock" in human.stdout
    listed = run(ws.root, "cards", "history", "clock", "--json")
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)["versions"]
    assert [(r["version"], r["tools"], r["signed_at"]) for r in rows] == [
        (1, 1, AT.format(1)),
        (2, 3, AT.format(2)),
    ]
    missing = run(ws.root, "cards", "show", "clock", "--version", "9")
    assert missing.exit_code == 2 and "no version 9" in missing.output
    old = ws.history_dir / "clock" / "1.card.json"
    old.write_bytes(old.read_bytes().replace(b"wall-clock", b"wall-clack", 1))
    refused = run(ws.root, "cards", "show", "clock", "--version", "1")
    assert refused.exit_code == 1 and "version 1 of the card of server 'clock'" in refused.output
    flagged = run(ws.root, "cards", "history", "clock", "--json")
    assert (
        flagged.exit_code == 1
        and "changed after signing" in json.loads(flagged.stdout)["versions"][0]["failed"]
    )
