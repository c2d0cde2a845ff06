"""The clients store: keys stored hashed, checked and revocable."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cartograph.access import (
    ClientStore,
    Policy,
)
from cartograph.errors import AuthError, UsageError


def test_keys_are_stored_hashed_checked_and_revocable(tmp_path: Path) -> None:
    store = ClientStore(tmp_path / "clients.json")
    key = store.add("ci", Policy(allow=("x.*",)))
    raw = (tmp_path / "clients.json").read_text("utf-8")
    assert key not in raw and key.split("_", 2)[2] not in raw
    assert stat.S_IMODE((tmp_path / "clients.json").stat().st_mode) == 0o600
    assert store.authenticate(key).policy == Policy(allow=("x.*",))
    with pytest.raises(AuthError):
        store.authenticate(key[:-1] + ("A" if key[-1] != "A" else "B"))
    with pytest.raises(UsageError):
        store.add("ci", Policy())
    store.revoke("ci")
    with pytest.raises(AuthError, match="revoked"):
        store.authenticate(key)
    assert store.add("ci", Policy()) != key  # a revoked name can get a new key


def test_an_admin_key_makes_an_admin_caller_and_a_plain_one_does_not(tmp_path: Path) -> None:
    from cartograph.access import Access

    store = ClientStore(tmp_path / "clients.json")
    boss, plain = store.add("boss", Policy(), admin=True), store.add("plain", Policy())
    access = Access(store=store)
    assert access.authenticate(boss).admin and not access.authenticate(plain).admin
    assert '"admin": true' in (tmp_path / "clients.json").read_text("utf-8")
    store.revoke("boss")
    assert store.records()["boss"].admin  # revoking keeps what it was
