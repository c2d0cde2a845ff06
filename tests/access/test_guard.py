"""The guard: open access is refused off loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartograph.access import (
    Access,
    ClientStore,
    http_access,
)
from cartograph.errors import AuthError, UsageError


def test_open_access_is_refused_off_loopback(tmp_path: Path) -> None:
    store = ClientStore(tmp_path / "clients.json")
    with pytest.raises(UsageError, match="loopback"):
        http_access(host="0.0.0.0", store=store, insecure_open=True)
    assert http_access(host="127.0.0.1", store=store, insecure_open=True).authenticate(None)
    with pytest.raises(AuthError):
        Access(store=store).authenticate(None)
