from __future__ import annotations

import pytest
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cards.model import Card
from cartograph.index import Embedder, load_embedder
from cartograph.workspace import Workspace


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return load_embedder("minilm-int8")


@pytest.fixture
def pg_ws(tmp_path, pg_url) -> Workspace:
    """A home directory (keys) whose cards, index and state live in a fresh database."""
    return Workspace(tmp_path / "home", store=pg_url)


@pytest.fixture
def pg_cards(pg_ws) -> dict[str, Card]:
    """The small realistic card set, signed and written into the database."""
    return write_workspace_cards(pg_ws, INDEX_KEY)
