"""A tool's output schema on its card entry: recorded when the tool has one, left out of what is
signed when it has none, so a card sealed before the field existed keeps its bytes, digest and
signature (the fixture was generated and sealed by main at 215e3c1, before this field)."""

from __future__ import annotations

from pathlib import Path

from cardkit import FIXED_KEY, make_card

from cartograph.canonical import canonical, sha256_json
from cartograph.cards.codec import validate_bytes
from cartograph.cards.listing import output_schema_fields
from cartograph.cards.seal import sealed_bytes, sign_card, verify_card, verify_stored
from cartograph.trust.store import TrustStore

OLD = Path(__file__).parent / "fixtures" / "everything-before-output-schema.card.json"
WEATHER = {"type": "object", "properties": {"temperature": {"type": "number"}}}


def trusted() -> TrustStore:
    store = TrustStore()
    store.add(FIXED_KEY.public_key)
    return store


def test_a_card_sealed_before_output_schemas_verifies_and_keeps_its_bytes() -> None:
    raw = OLD.read_bytes()
    card = validate_bytes(raw, source=OLD.name)
    verify_stored(raw, trusted(), source=OLD.name)
    verify_card(card, trusted())
    assert sealed_bytes(card) == raw  # parsed and sealed again: the very same bytes
    assert card.tool("get-structured-content") is not None
    assert all(t.output_schema is None and t.output_schema_hash is None for t in card.tools)
    assert b"output_schema" not in canonical(card.unsigned_payload())
    assert card.signature is not None
    again = sign_card(card, FIXED_KEY, signed_at=card.signature.signed_at)
    assert again.signature == card.signature  # Ed25519 is deterministic: same payload


def test_an_output_schema_is_recorded_signed_and_covered_by_the_signature() -> None:
    assert output_schema_fields({"name": "t"}) == {}
    assert output_schema_fields({"outputSchema": "not an object"}) == {}
    fields = output_schema_fields({"outputSchema": WEATHER})
    assert fields == {"output_schema": WEATHER, "output_schema_hash": sha256_json(WEATHER)}
    base = make_card("weather", 1)
    entry = base.tools[0].model_copy(update=fields)
    card = sign_card(base.model_copy(update={"tools": [entry]}), FIXED_KEY)
    payload = card.unsigned_payload()["tools"][0]
    assert payload["output_schema"] == WEATHER
    assert payload["output_schema_hash"] == sha256_json(WEATHER)
    stored = sealed_bytes(card)
    verify_stored(stored, trusted(), source="weather")
    assert validate_bytes(stored, source="weather") == card
    tampered = stored.replace(b'"number"', b'"string"')
    try:
        verify_stored(tampered, trusted(), source="weather")
    except Exception as exc:  # the signature no longer covers the changed schema
        assert "weather" in str(exc)
    else:
        raise AssertionError("a changed output schema verified")
