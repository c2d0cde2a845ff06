"""The fast canonical JSON path agrees byte for byte with the reference RFC 8785 encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cartograph.canonical import canonical, canonical_reference
from cartograph.errors import CardError

SHARED = Path(__file__).resolve().parents[2] / "shared"

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=600, deadline=None)
@given(values)
def test_fast_path_matches_reference(value):
    try:
        expected = canonical_reference(value)
    except CardError:
        return  # e.g. integers outside the I-JSON range: the reference refuses them too
    assert canonical(value) == expected


def test_known_divergences_take_the_reference_path():
    for value in ({"\U0001f600": 1, "\ufb01": 2}, {"x": 1e21}, {"x": 0.1}, {"x": -0.0}, [1.5e-7]):
        assert canonical(value) == canonical_reference(value)


def test_control_characters_and_unicode_escape_like_rfc8785():
    value = {"s": '\x00\x1f\x7f\u2028"\\/é\n\t\b\f\r'}
    assert canonical(value) == canonical_reference(value)


@pytest.mark.skipif(not (SHARED / "fleet/catalog.json").is_file(), reason="shared fleet absent")
def test_every_real_tools_list_canonicalises_identically():
    catalog = json.loads((SHARED / "fleet/catalog.json").read_text())
    for entry in catalog.values():
        assert canonical(entry["tools"]) == canonical_reference(entry["tools"])
