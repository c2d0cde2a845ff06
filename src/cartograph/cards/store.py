"""The card store: one signed JSON file per server in ``<home>/cards/``, written atomically.

Files are written in the sealed layout of :func:`cartograph.cards.seal.sealed_bytes` (canonical
payload, signature last), so loading verifies the signed bytes as stored. Loading never
rewrites a card. :func:`load_verified` returns the cards that verify under the workspace's
trust store and, apart, each file that did not with the reason and its kind, so one broken card
never hides the others; on large stores it verifies on two cores while it validates the models.
When the workspace names a shared store, :func:`write_card` and :func:`load_verified` use it
(:mod:`cartograph.storage`) with the same verification.
:func:`resign_store` re-signs the cards that verify with the current operator key.
"""

from __future__ import annotations

import gc
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cartograph import clock
from cartograph.cards.model import Card
from cartograph.cards.seal import FailureKind, sealed_bytes, sign_card, verify_stored, verify_texts
from cartograph.errors import CardError, CartographError
from cartograph.files import atomic_write
from cartograph.trust.keys import OperatorKey
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace

CARD_SUFFIX = ".card.json"
ALIAS_SUFFIX = ".alias.json"


@dataclass(frozen=True)
class CardFailure:
    """A card file that was left out, and why (``kind``: see :class:`~cartograph.errors.TrustError`,
    or ``signature``, ``malformed``, ``duplicate``, ``alias``)."""

    path: Path
    server: str | None
    reason: str
    kind: FailureKind = "invalid"


@dataclass(frozen=True)
class LoadedCards:
    """Cards that verified (by server name) and the files that did not."""

    cards: dict[str, Card]
    failures: list[CardFailure]
    paths: dict[str, Path] = field(default_factory=dict)

    def tool_count(self) -> int:
        return sum(len(card.tools) for card in self.cards.values())


def write_card(ws: Workspace, card: Card, *, path: Path | None = None) -> Path:
    """Write one card atomically (temp file + rename) and return its path.

    With a shared store (``ws.store``) the card goes there instead (``path`` is then ignored).
    """
    if ws.store is not None:
        from cartograph.storage import pg_store

        return pg_store(ws).write_card(card)
    path = path or ws.card_path(card.identity.server)
    return atomic_write(path, sealed_bytes(card))


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


def _validate_bytes(raw: bytes, *, source: str) -> Card:
    """The card in ``raw``: ``json.loads`` then strict validation of the dict.

    (Measured on 3.6 kB cards: half the cost of pydantic's ``model_validate_json``.)
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CardError(f"{source}: not UTF-8 text") from exc
    return _validate(_parse_json(text, source=source), source=source)


validate_bytes = _validate_bytes  # for the PostgreSQL store, which validates the same way


def read_card(path: Path) -> Card:
    return _validate_bytes(_read_bytes(path), source=str(path))


def read_verified_card(path: Path, trust: TrustStore) -> Card:
    """Read one card file and verify its signature over the JSON exactly as stored."""
    raw = _read_bytes(path)
    card = _validate_bytes(raw, source=str(path))
    verify_stored(raw, trust, source=str(path))
    alias = _alias_file(path)
    if alias.is_file():
        from cartograph.cards.federation import apply_alias

        card = apply_alias(alias, card, trust)
    return card


def _read_bytes(path: Path) -> bytes:
    """The file's bytes (``os.read`` on the descriptor: a third cheaper than ``read_bytes``)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            chunks = [os.read(fd, os.fstat(fd).st_size + 1)]
            while chunks[-1]:
                chunks.append(os.read(fd, 1 << 16))
        finally:
            os.close(fd)
    except OSError as exc:
        raise CardError(f"{path}: cannot read: {exc.strerror}") from exc
    return b"".join(chunks) if len(chunks) > 2 else chunks[0]


def _alias_file(card_path: Path) -> Path:
    return card_path.with_name(card_path.name[: -len(CARD_SUFFIX)] + ALIAS_SUFFIX)


def card_files(ws: Workspace) -> list[Path]:
    return _listing(ws)[0]


def _listing(ws: Workspace) -> tuple[list[Path], set[str]]:
    """Card files (sorted by name) and the names of alias records, in one directory scan."""
    try:
        names = [entry.name for entry in os.scandir(ws.cards_dir)]
    except (FileNotFoundError, NotADirectoryError):
        return [], set()
    names.sort()
    root = ws.cards_dir
    cards = [root / n for n in names if n.endswith(CARD_SUFFIX)]
    return cards, {n for n in names if n.endswith(ALIAS_SUFFIX)}


def load_verified(ws: Workspace, trust: TrustStore | None = None) -> LoadedCards:
    """Every card in the store that parses and verifies; the rest as failures with reasons."""
    trust = trust or TrustStore.for_workspace(ws)
    if ws.store is not None:
        from cartograph.storage import pg_store

        return pg_store(ws).load_verified(trust)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # thousands of small objects and no cycles: collections here are pure cost
    try:
        return _load_verified(ws, trust)
    finally:
        if gc_was_enabled:
            gc.enable()


def _load_verified(ws: Workspace, trust: TrustStore) -> LoadedCards:
    failures: list[CardFailure] = []
    paths: list[Path] = []
    texts: list[bytes] = []
    files, aliases = _listing(ws)
    for path in files:
        try:
            texts.append(_read_bytes(path))
            paths.append(path)
        except CardError as exc:
            failures.append(CardFailure(path, None, str(exc), "malformed"))
    parsed: list[Card | CardError] = []

    def validate_all() -> None:
        for path, raw in zip(paths, texts, strict=True):
            try:
                parsed.append(_validate_bytes(raw, source=str(path)))
            except CardError as exc:
                parsed.append(exc)

    verdicts = verify_texts(texts, [str(p) for p in paths], trust, meanwhile=validate_all)
    cards: dict[str, Card] = {}
    where: dict[str, Path] = {}
    for path, card, verdict in zip(paths, parsed, verdicts, strict=True):
        if isinstance(card, CardError):
            failures.append(CardFailure(path, None, str(card), "malformed"))
            continue
        if verdict is not None:
            failures.append(CardFailure(path, card.identity.server, verdict[0], verdict[1]))
            continue
        if aliases and path.name[: -len(CARD_SUFFIX)] + ALIAS_SUFFIX in aliases:
            from cartograph.cards.federation import apply_alias

            alias = _alias_file(path)
            try:
                card = apply_alias(alias, card, trust)
            except CartographError as exc:
                failures.append(CardFailure(path, card.identity.server, str(exc), "alias"))
                continue
        server = card.identity.server
        if server in cards:
            failures.append(
                CardFailure(
                    path,
                    server,
                    f"duplicate card for server {server!r} (also in {where[server].name})",
                    "duplicate",
                )
            )
            continue
        cards[server] = card
        where[server] = path
    return LoadedCards(cards, failures, where)


@dataclass
class ResignResult:
    """What ``cards resign`` did: re-signed servers, cards left as they were, and failures."""

    key_id: str
    resigned: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    failures: list[CardFailure] = field(default_factory=list)


def resign_store(ws: Workspace, key: OperatorKey, *, include_peers: bool = False) -> ResignResult:
    """Re-sign every card that verifies with ``key`` (signed now), atomically per card.

    Cards that fail verification are never re-signed (that would launder a tampered card or
    one by a revoked key); regenerate those with ``cartograph bootstrap``. Cards signed by
    another operator's key keep their signature unless ``include_peers`` (then this operator
    vouches for them from now on). A renamed import becomes a card under its new name.
    """
    trust = TrustStore.for_workspace(ws)
    loaded = load_verified(ws, trust)
    result = ResignResult(key.key_id, failures=list(loaded.failures))
    now = clock.stamp()
    for server, card in sorted(loaded.cards.items()):
        sig = card.signature
        signer = trust.entry(sig.key_id) if sig else None
        if sig is not None and sig.key_id == key.key_id:
            result.kept[server] = "already signed by the current key"
            continue
        if signer is not None and signer.origin != "operator" and not include_peers:
            result.kept[server] = f"signed by peer key {signer.key_id} ({signer.name})"
            continue
        path = loaded.paths[server]
        write_card(ws, sign_card(card, key, signed_at=now), path=path)
        _alias_file(path).unlink(missing_ok=True)  # the card now carries its own name
        result.resigned.append(server)
    return result
