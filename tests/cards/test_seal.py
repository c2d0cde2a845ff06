"""Sealing cards: Ed25519 over RFC 8785 canonical JSON; verification raises with reasons."""

from __future__ import annotations

import json
import stat

import pytest
from cardkit import FIXED_KEY, OTHER_KEY, make_card

from cartograph.canonical import canonical
from cartograph.cards.model import Card
from cartograph.cards.seal import sign_card, verify_card
from cartograph.errors import KeyError_, VerificationError
from cartograph.trust.keys import load_key
from cartograph.trust.lifecycle import init_key
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace


def trust(*keys):
    store = TrustStore()
    for k in keys:
        store.add(k.public_key)
    return store


def test_signed_card_verifies_with_trusted_key():
    card = sign_card(make_card(), FIXED_KEY)
    assert card.signature is not None
    assert card.signature.key_id == FIXED_KEY.key_id
    verify_card(card, trust(FIXED_KEY))


def test_signature_is_deterministic_for_a_fixed_key_and_time():
    a = sign_card(make_card(), FIXED_KEY, signed_at="2026-11-30T00:00:00Z")
    b = sign_card(make_card(), FIXED_KEY, signed_at="2026-11-30T00:00:00Z")
    assert a.signature == b.signature


def test_signature_covers_canonical_form_not_key_order():
    card = sign_card(make_card(), FIXED_KEY)
    data = card.model_dump(mode="json")
    reordered = json.loads(json.dumps(data, sort_keys=True))
    reversed_keys = {k: reordered[k] for k in reversed(list(reordered))}
    verify_card(Card.model_validate(reversed_keys), trust(FIXED_KEY))


def test_every_single_byte_change_of_the_payload_is_rejected():
    card = sign_card(make_card(), FIXED_KEY)
    text = json.dumps(card.model_dump(mode="json"))
    # flip one character inside every string value of the summary fields
    data = json.loads(text)
    data["tools"][0]["summary"] = data["tools"][0]["summary"].replace("wall", "wale")
    with pytest.raises(VerificationError, match="changed after signing"):
        verify_card(Card.model_validate(data), trust(FIXED_KEY))
    data = json.loads(text)
    data["tools"][1]["input_schema"]["required"] = []
    with pytest.raises(VerificationError, match="clock"):
        verify_card(Card.model_validate(data), trust(FIXED_KEY))


def test_card_signed_by_unknown_key_is_rejected_naming_the_key():
    card = sign_card(make_card(), OTHER_KEY)
    with pytest.raises(VerificationError, match=OTHER_KEY.key_id):
        verify_card(card, trust(FIXED_KEY))


def test_unsigned_card_is_rejected():
    with pytest.raises(VerificationError, match="unsigned"):
        verify_card(make_card(), trust(FIXED_KEY))


def test_corrupt_signature_value_is_rejected():
    card = sign_card(make_card(), FIXED_KEY)
    assert card.signature is not None
    bad = card.model_copy(update={"signature": card.signature.model_copy(update={"value": "!!"})})
    with pytest.raises(VerificationError):
        verify_card(bad, trust(FIXED_KEY))


def test_canonical_json_follows_rfc8785_ordering_and_numbers():
    assert canonical({"b": 1, "a": [1.0, "é"]}) == '{"a":[1,"é"],"b":1}'.encode()


def test_keys_init_writes_private_key_0600_and_refuses_to_overwrite(tmp_path):
    ws = Workspace(tmp_path / "home")
    key = init_key(ws)
    mode = stat.S_IMODE(ws.private_key.stat().st_mode)
    assert mode == 0o600
    assert load_key(ws).key_id == key.key_id
    assert key.key_id.startswith("ed25519:")
    with pytest.raises(KeyError_, match="already exists"):
        init_key(ws)
    assert init_key(ws, force=True).key_id != key.key_id


def test_missing_key_says_how_to_make_one(tmp_path):
    with pytest.raises(KeyError_, match="keys init"):
        load_key(Workspace(tmp_path))


def test_trust_store_includes_operator_and_trusted_dir(tmp_path):
    ws = Workspace(tmp_path)
    own = init_key(ws)
    ws.trusted_dir.mkdir()
    other_ws = Workspace(tmp_path / "other")
    other = init_key(other_ws)
    (ws.trusted_dir / "other.pub").write_bytes(other_ws.public_key.read_bytes())
    assert set(TrustStore.for_workspace(ws).key_ids()) == {own.key_id, other.key_id}
