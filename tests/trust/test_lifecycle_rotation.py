"""Key rotation: old cards stay valid, the new key signs, `cards resign` moves the store."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from cardkit import OTHER_KEY, make_card, write_card
from click.testing import CliRunner

from cartograph import clock
from cartograph.cards.seal import sign_card, verify_card
from cartograph.cli import main
from cartograph.errors import KeyError_, TrustError
from cartograph.storage import load_verified, open_store
from cartograph.trust.keys import key_id_of, load_key, load_public_key, public_pem
from cartograph.trust.lifecycle import init_key, rotate_key, trust_key
from cartograph.trust.revoke import revoke_key
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def ws(tmp_path):
    ws = Workspace(tmp_path / "home")
    key = init_key(ws)
    for name in ("alpha", "beta"):
        write_card(ws, sign_card(make_card(name), key))
    return ws


def test_rotation_keeps_old_cards_valid_and_signs_new_ones_with_the_new_key(ws):
    old = load_key(ws)
    rotation = rotate_key(ws)
    new = load_key(ws)
    assert rotation.old_key_id == old.key_id and new.key_id == rotation.new_key.key_id
    assert new.key_id != old.key_id
    loaded = load_verified(ws)
    assert sorted(loaded.cards) == ["alpha", "beta"] and loaded.failures == []
    store = TrustStore.for_workspace(ws)
    verify_card(sign_card(make_card("gamma"), new), store)
    entry = store.entry(old.key_id)
    assert entry is not None and entry.not_after == rotation.old_not_after
    after = rotation.old_not_after + timedelta(seconds=1)
    assert store.state(old.key_id, after) == "expired" and store.state(new.key_id) == "valid"


def test_old_key_signing_after_rotation_is_refused_as_expired(ws):
    old = load_key(ws)
    rotation = rotate_key(ws)
    late = clock.format_time(rotation.old_not_after + timedelta(seconds=30))
    with pytest.raises(TrustError, match="after the key's window") as info:
        verify_card(sign_card(make_card(), old, signed_at=late), TrustStore.for_workspace(ws))
    assert info.value.kind == "expired" and info.value.key_id == old.key_id


def test_grace_keeps_the_old_key_valid_for_a_while(ws):
    old = load_key(ws)
    rotation = rotate_key(ws, grace=timedelta(hours=1))
    soon = clock.format_time(rotation.old_not_after - timedelta(minutes=58))
    verify_card(sign_card(make_card(), old, signed_at=soon), TrustStore.for_workspace(ws))


def test_rotation_replaces_the_private_key_file(ws):
    before = ws.private_key.read_bytes()
    rotate_key(ws)
    assert ws.private_key.read_bytes() != before
    assert oct(ws.private_key.stat().st_mode & 0o777) == "0o600"
    assert key_id_of(load_public_key(ws.public_key)) == load_key(ws).key_id


def test_resign_moves_every_verified_card_to_the_current_key(ws):
    rotate_key(ws)
    new = load_key(ws)
    tampered = ws.card_path("beta")
    tampered.write_bytes(tampered.read_bytes().replace(b"wall-clock", b"wall-clack", 1))
    result = open_store(ws).resign(new)
    assert result.resigned == ["alpha"]
    assert [f.path for f in result.failures] == [tampered]  # never laundered
    loaded = load_verified(ws)
    assert loaded.cards["alpha"].signature.key_id == new.key_id
    assert "beta" not in loaded.cards
    again = open_store(ws).resign(new)
    assert again.resigned == [] and again.kept["alpha"].startswith("already")


def test_resign_leaves_peer_cards_alone_unless_asked(ws, tmp_path):
    pem = tmp_path / "peer.pub"
    pem.write_bytes(public_pem(OTHER_KEY.public_key))
    trust_key(ws, pem, name="acme")
    write_card(ws, sign_card(make_card("theirs"), OTHER_KEY, signed_at="2026-01-01T00:00:00Z"))
    rotate_key(ws)
    key = load_key(ws)
    result = open_store(ws).resign(key)
    assert "theirs" in result.kept and "acme" in result.kept["theirs"]
    assert sorted(result.resigned) == ["alpha", "beta"]
    assert open_store(ws).resign(key, include_peers=True).resigned == ["theirs"]
    assert load_verified(ws).cards["theirs"].signature.key_id == key.key_id


def test_rotation_re_signs_the_revocation_list_and_revocations_hold(ws, tmp_path):
    pem = tmp_path / "peer.pub"
    pem.write_bytes(public_pem(OTHER_KEY.public_key))
    trust_key(ws, pem)
    revoke_key(ws, OTHER_KEY.key_id, reason="compromised")
    rotation = rotate_key(ws)
    store = TrustStore.for_workspace(ws)
    assert rotation.revocation_list_resigned and store.fault is None
    assert store.revocation_signer == rotation.new_key.key_id
    assert OTHER_KEY.key_id in store.revoked


def test_rotate_resign_then_revoke_the_old_key_keeps_the_store_whole(ws):
    old = load_key(ws)
    rotated = run(ws.root, "keys", "rotate", "--json")
    assert rotated.exit_code == 0, rotated.output
    info = json.loads(rotated.stdout)
    assert info["old_key_id"] == old.key_id
    resigned = run(ws.root, "cards", "resign", "--json")
    assert resigned.exit_code == 0 and sorted(json.loads(resigned.stdout)["resigned"]) == [
        "alpha",
        "beta",
    ]
    assert run(ws.root, "keys", "revoke", old.key_id, "--reason", "retired").exit_code == 0
    verify = run(ws.root, "cards", "verify", "--json")
    assert verify.exit_code == 0 and json.loads(verify.stdout)["verified"] == ["alpha", "beta"]
    keys = json.loads(run(ws.root, "keys", "list", "--json").stdout)["keys"]
    states = {k["key_id"]: k["state"] for k in keys}
    assert states == {old.key_id: "revoked", info["key_id"]: "valid"}


def test_revoking_the_old_key_without_resigning_excludes_its_cards(ws):
    old = load_key(ws)
    rotate_key(ws)
    revoke_key(ws, old.key_id, reason="compromised")
    loaded = load_verified(ws)
    assert loaded.cards == {} and {f.kind for f in loaded.failures} == {"revoked"}
    assert open_store(ws).resign(load_key(ws)).resigned == []  # revoked cards are not laundered


def test_init_force_stops_trusting_the_replaced_key(ws):
    old = load_key(ws)
    init_key(ws, force=True)
    assert TrustStore.for_workspace(ws).entry(old.key_id) is None
    assert load_verified(ws).cards == {}


def test_rotate_refuses_while_the_trust_store_is_in_fault(ws):
    revoke_key(ws, "ed25519:0123456789abcdef")
    ws.trusted_dir.joinpath("revocations.json").write_text("{}")
    with pytest.raises(KeyError_, match="cannot rotate"):
        rotate_key(ws)


def test_rotate_grace_is_parsed_and_checked(ws):
    assert run(ws.root, "keys", "rotate", "--grace", "soon").exit_code == 2
    out = json.loads(run(ws.root, "keys", "rotate", "--grace", "2d", "--json").stdout)
    assert out["old_not_after"] > clock.format_time(clock.now() + timedelta(days=1))
