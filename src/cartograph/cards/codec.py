"""The card codec: stored bytes -> a validated, verified card, for any backend.

Pure: nothing here reads or writes storage. A backend hands over what it holds, as
:class:`StoredCard` records (the bytes exactly as stored, and how to name them in errors), and
gets back :class:`LoadedCards`: the cards that parse, validate and verify under the trust store,
and apart, each record that did not with the reason and its kind, so one broken card never hides
the others. On large sets the signatures are verified on two cores while the models validate
(:func:`~cartograph.cards.seal.verify_texts`). Cards are stored in the sealed layout of
:func:`~cartograph.cards.seal.sealed_bytes`, so what is verified is the bytes as stored.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cartograph.cards.model import Card
from cartograph.cards.seal import FailureKind, verify_stored, verify_texts
from cartograph.cards.shelf import CardShelf, Shelved, shelve
from cartograph.errors import CardError
from cartograph.trust.store import TrustStore

CARD_SUFFIX = ".card.json"
ALIAS_SUFFIX = ".alias.json"


@dataclass(frozen=True)
class CardFailure:
    """A stored card that was left out, and why (``kind``: see
    :class:`~cartograph.errors.TrustError`, or ``signature``, ``malformed``, ``duplicate``,
    ``alias``)."""

    path: Path
    server: str | None
    reason: str
    kind: FailureKind = "invalid"


@dataclass(frozen=True)
class LoadedCards:
    """Cards that verified (by server name) and the stored cards that did not."""

    cards: Mapping[str, Card]
    failures: list[CardFailure]
    paths: dict[str, Path] = field(default_factory=dict)

    def tool_count(self) -> int:
        return sum(len(card.tools) for card in self.cards.values())


@dataclass(frozen=True, slots=True)
class StoredCard:
    """One card as a backend holds it: ``path`` names it in failures (a file, or a row named like
    one), ``source`` in messages; ``raw`` is the bytes exactly as stored."""

    path: Path
    source: str
    raw: bytes


Check = Callable[[StoredCard, Card], "Card | CardFailure"]
"""A backend's own check of a card that verified: the card to serve, or why it is left out."""


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


def validate_bytes(raw: bytes, *, source: str) -> Card:
    """The card in ``raw``: ``json.loads`` then strict validation of the dict.

    (Measured on 3.6 kB cards: half the cost of pydantic's ``model_validate_json``.)
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CardError(f"{source}: not UTF-8 text") from exc
    return _validate(_parse_json(text, source=source), source=source)


def stored_signature(raw: bytes) -> str | None:
    """The signature value a stored card carries, unverified (None when it has none): it names
    the signed version, since Ed25519 signatures are deterministic."""
    try:
        sig = json.loads(raw)["signature"]
        return str(sig["value"]) if isinstance(sig, dict) else None
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


def read_verified(raw: bytes, trust: TrustStore, *, source: str) -> Card:
    """One stored card, validated and verified over its bytes as stored (raises otherwise)."""
    card = validate_bytes(raw, source=source)
    verify_stored(raw, trust, source=source)
    return card


def verify_stored_cards(
    stored: Sequence[StoredCard],
    trust: TrustStore,
    *,
    check: Check | None = None,
    compact: bool = False,
) -> LoadedCards:
    """Every stored card that parses and verifies (then passes ``check``); the rest as failures.

    A second card for a server already loaded is a ``duplicate`` failure (the first one wins, in
    the order given). ``compact``: the cards come back on a
    :class:`~cartograph.cards.shelf.CardShelf`, each shelved as soon as it is parsed, so the
    loading peak is one parsed card, not all of them (a serving process keeps what it peaked at).
    """
    gc_was_enabled = gc.isenabled()
    gc.disable()  # thousands of small objects and no cycles: collections here are pure cost
    try:
        return _verify(stored, trust, check, compact)
    finally:
        if gc_was_enabled:
            gc.enable()


Parsed = Card | Shelved | CardFailure | CardError


def _verify(
    stored: Sequence[StoredCard], trust: TrustStore, check: Check | None, compact: bool
) -> LoadedCards:
    texts = [s.raw for s in stored]
    sources = [s.source for s in stored]
    parsed: list[Parsed] = []

    def validate_all() -> None:
        for record in stored:
            try:
                card = validate_bytes(record.raw, source=record.source)
            except CardError as exc:
                parsed.append(exc)
                continue
            if not compact:
                parsed.append(card)
                continue
            checked = check(record, card) if check is not None else card  # before the verdict:
            parsed.append(checked if isinstance(checked, CardFailure) else shelve(checked))

    verdicts = verify_texts(texts, sources, trust, meanwhile=validate_all)
    kept: dict[str, Card | Shelved] = {}
    where: dict[str, Path] = {}
    failures: list[CardFailure] = []
    for record, item, verdict in zip(stored, parsed, verdicts, strict=True):
        if isinstance(item, CardError):
            failures.append(CardFailure(record.path, None, str(item), "malformed"))
            continue
        if verdict is not None:
            failures.append(CardFailure(record.path, item.server, verdict[0], verdict[1]))
            continue
        if isinstance(item, Card) and check is not None:
            item = check(record, item)
        if isinstance(item, CardFailure):
            failures.append(item)
            continue
        if item.server in kept:
            failures.append(_duplicate(record, item.server, where))
            continue
        kept[item.server] = item
        where[item.server] = record.path
    if compact:
        shelf = CardShelf.of_shelved({n: s for n, s in kept.items() if isinstance(s, Shelved)})
        return LoadedCards(shelf, failures, where)
    return LoadedCards({n: c for n, c in kept.items() if isinstance(c, Card)}, failures, where)


def _duplicate(record: StoredCard, server: str, where: dict[str, Path]) -> CardFailure:
    reason = f"duplicate card for server {server!r} (also in {where[server].name})"
    return CardFailure(record.path, server, reason, "duplicate")
