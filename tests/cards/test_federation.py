"""Federation: another operator's signed cards come in; clashes are refused or renamed."""

from __future__ import annotations

import json

import pytest
from cardkit import make_card, write_card
from click.testing import CliRunner

from cartograph.cards.federation import import_store
from cartograph.cards.seal import sign_card
from cartograph.cli import main
from cartograph.errors import UsageError
from cartograph.storage import load_verified, open_store
from cartograph.trust.keys import load_key
from cartograph.trust.lifecycle import init_key, trust_key
from cartograph.trust.revoke import revoke_key
from cartograph.workspace import Workspace

PAST = "2026-06-01T00:00:00Z"


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def pair(tmp_path):
    """Two operators: ``here`` (the importer) and ``peer``, each with a card for 'clock'."""
    here, peer = Workspace(tmp_path / "here"), Workspace(tmp_path / "peer")
    for ws in (here, peer):
        key = init_key(ws)
        write_card(ws, sign_card(make_card("clock"), key))
    write_card(peer, sign_card(make_card("weather"), load_key(peer)))
    return here, peer


def import_into(here, source, **kw):
    """``cards import`` into the store of ``here``, as the CLI does it."""
    return import_store(here, open_store(here).import_target(), source, **kw)


def trust_peer(here, peer, **kw):
    return trust_key(here, peer.public_key, name="peer-ops", **kw)


def test_imported_cards_keep_their_own_signatures_and_provenance(pair):
    here, peer = pair
    trust_peer(here, peer)
    result = import_into(here, peer.root, rename_prefix=None)
    assert result.imported == ["weather"]
    assert peer.card_path("weather").read_bytes() == here.card_path("weather").read_bytes()
    assert [v.version for v in open_store(here).card_history("weather")] == [1]
    card = load_verified(here).cards["weather"]
    assert card.signature.key_id == load_key(peer).key_id
    assert card.provenance.generator == "test"


def test_cards_of_an_untrusted_key_are_refused_naming_the_key(pair):
    here, peer = pair
    result = import_into(here, peer.cards_dir)  # a bare cards/ directory works too
    assert result.imported == []
    assert {f.kind for f in result.refused} == {"unknown"}
    assert all(load_key(peer).key_id in f.reason for f in result.refused)
    assert not here.card_path("weather").exists()


def test_a_name_clash_is_refused_and_the_local_card_is_untouched(pair):
    here, peer = pair
    trust_peer(here, peer)
    before = here.card_path("clock").read_bytes()
    result = import_into(here, peer.root)
    [clash] = result.refused
    assert clash.kind == "clash" and clash.server == "clock"
    assert load_key(peer).key_id in clash.reason and "--rename" in clash.reason
    assert here.card_path("clock").read_bytes() == before


def test_rename_keeps_both_cards_each_with_its_own_signature(pair):
    here, peer = pair
    trust_peer(here, peer)
    result = import_into(here, peer.root, rename_prefix="peer.")
    assert result.renamed == {"clock": "peer.clock"} and result.refused == []
    loaded = load_verified(here)
    assert loaded.failures == []
    assert loaded.cards["clock"].signature.key_id == load_key(here).key_id
    renamed = loaded.cards["peer.clock"]
    assert renamed.identity.server == "peer.clock"
    assert renamed.signature.key_id == load_key(peer).key_id
    assert (here.cards_dir / "peer.clock.alias.json").is_file()
    again = import_into(here, peer.root, rename_prefix="peer.")
    assert sorted(again.unchanged) == ["peer.clock", "weather"] and again.refused == []


def test_a_tampered_or_misplaced_alias_record_fails_the_card(pair):
    here, peer = pair
    trust_peer(here, peer)
    import_into(here, peer.root, rename_prefix="peer.")
    alias = here.cards_dir / "peer.clock.alias.json"
    doc = json.loads(alias.read_text())
    doc["server"] = "clock-admin"
    alias.write_text(json.dumps(doc))
    loaded = load_verified(here)
    assert "peer.clock" not in loaded.cards and "clock-admin" not in loaded.cards
    assert [f.kind for f in loaded.failures] == ["alias"]
    # without its alias record the imported card is plain 'clock' again: a reported duplicate
    alias.unlink()
    [failure] = load_verified(here).failures
    assert failure.kind == "duplicate" and "clock" in failure.reason


def test_an_alias_record_missing_a_field_fails_the_card_naming_the_field(pair):
    here, peer = pair
    trust_peer(here, peer)
    import_into(here, peer.root, rename_prefix="peer.")
    alias = here.cards_dir / "peer.clock.alias.json"
    doc = json.loads(alias.read_text())
    assert set(doc) == {
        "format",
        "server",
        "original_server",
        "card_key_id",
        "card_signature",
        "signed_at",
        "signature",
    }
    del doc["card_signature"]
    alias.write_text(json.dumps(doc))
    [failure] = load_verified(here).failures
    assert failure.kind == "alias"
    assert str(alias) in failure.reason and "field card_signature" in failure.reason


def test_same_signer_newer_card_updates_and_older_is_refused(pair, tmp_path):
    here, peer = pair
    trust_peer(here, peer)
    import_into(here, peer.root, rename_prefix="peer.")
    peer_key = load_key(peer)
    write_card(peer, sign_card(make_card("weather", n_tools=3), peer_key))
    assert import_into(here, peer.root, rename_prefix="peer.").updated == ["weather"]
    assert len(load_verified(here).cards["weather"].tools) == 3
    write_card(peer, sign_card(make_card("weather", n_tools=1), peer_key, signed_at=PAST))
    result = import_into(here, peer.root, rename_prefix="peer.")
    assert [f.kind for f in result.refused] == ["older"]


def test_revoking_the_peer_key_excludes_its_imported_cards(pair):
    here, peer = pair
    trust_peer(here, peer)
    import_into(here, peer.root, rename_prefix="peer.")
    revoke_key(here, load_key(peer).key_id, reason="peer compromised")
    loaded = load_verified(here)
    assert sorted(loaded.cards) == ["clock"]
    assert {f.kind for f in loaded.failures} == {"revoked"}


def test_peer_window_applies_to_imports(pair):
    here, peer = pair
    from cartograph import clock

    trust_peer(here, peer, not_after=clock.parse("2026-01-01"))
    result = import_into(here, peer.root)
    assert {f.kind for f in result.refused} == {"expired"}


def test_tampered_card_in_the_source_is_refused(pair):
    here, peer = pair
    trust_peer(here, peer)
    path = peer.card_path("weather")
    path.write_bytes(path.read_bytes().replace(b"wall-clock", b"wall-clack", 1))
    result = import_into(here, peer.root, rename_prefix="p-")
    assert [f.kind for f in result.refused] == ["signature"]


def test_importing_the_own_store_or_a_non_store_is_a_usage_error(pair, tmp_path):
    here, _ = pair
    with pytest.raises(UsageError):
        import_into(here, here.root)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError):
        import_into(here, tmp_path / "empty")


def test_cards_import_cli_reports_and_exits_1_on_refusals(pair):
    here, peer = pair
    assert (
        run(here.root, "keys", "trust", str(peer.public_key), "--name", "peer-ops").exit_code == 0
    )
    clash = run(here.root, "cards", "import", str(peer.root), "--json")
    assert clash.exit_code == 1
    report = json.loads(clash.stdout)
    assert report["imported"] == ["weather"] and report["refused"][0]["kind"] == "clash"
    renamed = run(here.root, "cards", "import", str(peer.root), "--rename", "peer-")
    assert renamed.exit_code == 0, renamed.output
    assert "renamed clock -> peer-clock" in renamed.output
    listed = json.loads(run(here.root, "cards", "list", "--json").stdout)
    assert sorted(c["server"] for c in listed["cards"]) == ["clock", "peer-clock", "weather"]


def test_the_source_operators_own_revocations_are_honoured_on_import(pair, tmp_path):
    from cartograph.errors import KeyError_
    from cartograph.trust.keys import public_pem
    from cartograph.trust.lifecycle import rotate_key

    here, peer = pair
    old = load_key(peer)
    trust_peer(here, peer)  # here trusts the peer's first key...
    new = rotate_key(peer).new_key
    pem = tmp_path / "peer-new.pub"
    pem.write_bytes(public_pem(new.public_key))
    trust_key(here, pem, name="peer-ops 2")  # ...and its second one
    revoke_key(peer, old.key_id, reason="peer laptop stolen")
    result = import_into(here, peer.root, rename_prefix="peer.")
    assert result.imported == [] and result.renamed == {}
    assert {f.kind for f in result.refused} == {"revoked"}
    assert all("peer laptop stolen" in f.reason for f in result.refused)
    listing = peer.trusted_dir / "revocations.json"
    doc = json.loads(listing.read_text())
    doc["revoked"] = []
    listing.write_text(json.dumps(doc))
    with pytest.raises(KeyError_, match="changed after signing"):
        import_into(here, peer.root)


def test_a_source_revocation_list_by_a_key_not_trusted_here_cannot_be_checked_and_is_ignored(
    pair, caplog
):
    from cartograph.trust.lifecycle import rotate_key

    here, peer = pair
    old = load_key(peer)
    trust_peer(here, peer)
    rotate_key(peer)  # here does not know the new key
    revoke_key(peer, "ed25519:0123456789abcdef")
    result = import_into(here, peer.root, rename_prefix="peer.")
    assert result.imported == ["weather"] and result.renamed == {"clock": "peer.clock"}
    assert load_verified(here).cards["weather"].signature.key_id == old.key_id
    assert "ignoring the source's revocation list" in caplog.text
