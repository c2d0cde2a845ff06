"""The curated public API: a change to it must be deliberate."""

from __future__ import annotations

import cartograph

EXPECTED = [
    "Card",
    "CartographError",
    "Hit",
    "OperatorKey",
    "Proxy",
    "Snapshot",
    "ToolIndex",
    "TrustStore",
    "Workspace",
    "__version__",
    "generate_card",
    "load_config",
    "load_embedder",
    "load_snapshot",
    "load_verified",
    "open_index",
    "sign_card",
    "verify_card",
]


def test_exported_members_are_the_curated_list():
    assert sorted(cartograph.__all__) == EXPECTED


def test_every_exported_name_resolves():
    for name in cartograph.__all__:
        assert getattr(cartograph, name) is not None, name
    assert cartograph.__version__ == "0.1.0"


def test_unknown_attribute_raises_attribute_error():
    try:
        cartograph.not_a_thing  # noqa: B018
    except AttributeError as exc:
        assert "not_a_thing" in str(exc)
    else:
        raise AssertionError("unknown attribute resolved")


def test_all_matches_the_lazy_export_table():
    assert set(cartograph.__all__) == {"__version__", *cartograph._EXPORTS}
