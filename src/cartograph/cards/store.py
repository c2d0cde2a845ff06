"""The card store: one signed JSON file per server in ``<home>/cards/``, written atomically.

Loading never rewrites a card. :func:`load_verified` returns the cards that verify and, apart,
each file that did not with the reason, so one broken card never hides the others.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cartograph.cards.model import Card
from cartograph.cards.seal import TrustStore, verify_payload
from cartograph.errors import CardError, CartographError
from cartograph.workspace import Workspace

CARD_SUFFIX = ".card.json"


@dataclass(frozen=True)
class CardFailure:
    """A card file that was left out, and why."""

    path: Path
    server: str | None
    reason: str


@dataclass(frozen=True)
class LoadedCards:
    """Cards that verified (by server name) and the files that did not."""

    cards: dict[str, Card]
    failures: list[CardFailure]

    def tool_count(self) -> int:
        return sum(len(card.tools) for card in self.cards.values())


def write_card(ws: Workspace, card: Card) -> Path:
    """Write one card atomically (temp file + rename) and return its path."""
    path = ws.card_path(card.identity.server)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(card.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, path)
    return path


def parse_card(text: str, *, source: str) -> Card:
    """Parse and validate card JSON; errors name the source and the field."""
    return _validate(_parse_json(text, source=source), source=source)


def _parse_json(text: str, *, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CardError(f"{source}: not valid JSON (line {exc.lineno}): {exc.msg}") from exc
    except RecursionError as exc:
        raise CardError(f"{source}: JSON nested too deeply") from exc


def _validate(data: Any, *, source: str) -> Card:
    try:
        return Card.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise CardError(
            f"{source}: field {loc}: {first['msg']} ({exc.error_count()} problem(s))"
        ) from exc


def read_card(path: Path) -> Card:
    return _validate(_parse_json(_read_text(path), source=str(path)), source=str(path))


def read_verified_card(path: Path, trust: TrustStore) -> Card:
    """Read one card file and verify its signature over the JSON exactly as stored."""
    card, error = _read_and_verify(path, trust)
    if error is not None:
        raise error
    return card


def _read_and_verify(path: Path, trust: TrustStore) -> tuple[Card, CartographError | None]:
    """The parsed card and the verification error, if any (a parse error is raised)."""
    data = _parse_json(_read_text(path), source=str(path))
    card = _validate(data, source=str(path))
    payload = {k: v for k, v in data.items() if k != "signature"}
    try:
        verify_payload(card.identity.server, payload, card.signature, trust)
    except CartographError as exc:
        return card, exc
    return card, None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CardError(f"{path}: not UTF-8 text") from exc
    except OSError as exc:
        raise CardError(f"{path}: cannot read: {exc.strerror}") from exc


def card_files(ws: Workspace) -> list[Path]:
    if not ws.cards_dir.is_dir():
        return []
    return sorted(p for p in ws.cards_dir.iterdir() if p.name.endswith(CARD_SUFFIX))


def load_verified(ws: Workspace, trust: TrustStore | None = None) -> LoadedCards:
    """Every card in the store that parses and verifies; the rest as failures with reasons."""
    trust = trust or TrustStore.for_workspace(ws)
    cards: dict[str, Card] = {}
    failures: list[CardFailure] = []
    for path in card_files(ws):
        try:
            card, error = _read_and_verify(path, trust)
        except CartographError as exc:
            failures.append(CardFailure(path, None, str(exc)))
            continue
        server = card.identity.server
        if error is not None:
            failures.append(CardFailure(path, server, str(error)))
            continue
        if server in cards:
            failures.append(CardFailure(path, server, f"duplicate card for server {server!r}"))
            continue
        cards[server] = card
    return LoadedCards(cards, failures)
