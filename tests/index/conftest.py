from __future__ import annotations

import pytest
from indexkit import INDEX_KEY, signed_cards

from cartograph.cards.model import Card
from cartograph.index import Embedder, ToolIndex, load_embedder


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return load_embedder("minilm-int8")


@pytest.fixture(scope="session")
def cards() -> dict[str, Card]:
    return signed_cards(INDEX_KEY)


@pytest.fixture(scope="session")
def index(cards: dict[str, Card], embedder: Embedder) -> ToolIndex:
    return ToolIndex.build(cards, embedder)
