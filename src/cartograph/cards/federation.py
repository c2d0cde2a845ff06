"""Federation: import another operator's signed cards, and the aliases that rename them here.

:func:`import_store` reads a card store (a ``cards/`` directory or a workspace that holds one)
and copies in, byte for byte, each card that verifies under *this* workspace's trust store, so
every imported card keeps its own signature and provenance. Nothing is merged silently:

- a card whose key is unknown, revoked or outside its window here is refused, naming the key;
- a card for a server this store already holds, signed by another key, is a *clash*: refused,
  unless ``rename_prefix`` is given, in which case it is stored as ``<prefix><server>`` next to
  an *alias record* signed by this operator (``<prefix><server>.alias.json``);
- the same signer's newer card replaces its older one; an identical card is left alone.

An alias record (``cartograph.alias/1``) binds the new name to one card version (its signature
value); :func:`apply_alias` checks it at load time and hands out the card under the new name.

The local store is handed in as an :class:`ImportTarget` (the file backend,
:class:`~cartograph.storage.files.FileStore`, is one); this module reads only the source
directory and never knows where the local store keeps what it writes.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from cartograph import clock
from cartograph.canonical import canonical
from cartograph.cards.codec import CARD_SUFFIX, CardFailure, LoadedCards, read_verified
from cartograph.cards.model import Card
from cartograph.cards.seal import FailureKind
from cartograph.errors import (
    CardError,
    CartographError,
    KeyError_,
    TrustError,
    UsageError,
    VerificationError,
)
from cartograph.trust.keys import OperatorKey, b64, load_key, unb64
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

ALIAS_FORMAT = "cartograph.alias/1"
_PREFIX = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # server names end up in MCP tool names (SEP-986)


class AliasSignature(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    alg: Literal["Ed25519"] = "Ed25519"
    key_id: str
    value: str


class AliasRecord(BaseModel):
    """``<name>.alias.json`` (``cartograph.alias/1``): this operator's signed statement that the
    card beside it (one version: its signature value) is served here as ``server``. The
    signature covers the record as stored without ``signature``."""

    model_config = ConfigDict(extra="allow", frozen=True)

    format: Literal["cartograph.alias/1"]
    server: str
    original_server: str
    card_key_id: str
    card_signature: str
    signed_at: str
    signature: AliasSignature


class ImportTarget(Protocol):
    """What an import needs of the local card store: a directory of card files with aliases."""

    cards_dir: Path

    def load_verified(
        self, trust: TrustStore | None = None, *, compact: bool = False
    ) -> LoadedCards: ...

    def location(self, name: str) -> Path:
        """Where the card stored under ``name`` is (or would be) kept."""
        ...

    def holds(self, name: str) -> bool:
        """Whether a card is stored under ``name`` (verified or not)."""
        ...

    def write_sealed(self, name: str, raw: bytes) -> object:
        """Store ``raw`` (a sealed card, byte for byte) under ``name``."""
        ...

    def write_alias(self, name: str, record: bytes) -> Path:
        """Store the signed alias record that names the card under ``name``."""
        ...


@dataclass
class ImportResult:
    """What ``cards import`` did with each card of the source store."""

    source: Path
    imported: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    refused: list[CardFailure] = field(default_factory=list)


def source_cards_dir(source: Path) -> Path:
    """The directory of card files in ``source`` (a workspace or a cards directory)."""
    if (source / "cards").is_dir():
        return source / "cards"
    if source.is_dir() and any(p.name.endswith(CARD_SUFFIX) for p in source.iterdir()):
        return source
    raise UsageError(f"{source}: neither a workspace with cards/ nor a directory of *{CARD_SUFFIX}")


def import_store(
    ws: Workspace, target: ImportTarget, source: Path, *, rename_prefix: str | None = None
) -> ImportResult:
    """Copy into ``target`` every card of ``source`` that verifies here; refuse and report the
    rest. ``ws`` is this operator's home (trust store, and the key that signs alias records)."""
    src = source_cards_dir(source)
    if src.resolve() == target.cards_dir.resolve():
        raise UsageError(f"{source}: that is this workspace's own card store")
    if rename_prefix is not None and not _PREFIX.match(rename_prefix):
        raise UsageError(f"--rename {rename_prefix!r}: use letters, digits, '-', '_' or '.'")
    trust = TrustStore.for_workspace(ws)
    if trust.fault is not None:
        raise KeyError_(f"cannot import: {trust.fault}")
    run = _Import(
        ws, target, trust, rename_prefix, _source_revocations(source, trust), ImportResult(source)
    )
    for path in sorted(p for p in src.iterdir() if p.name.endswith(CARD_SUFFIX)):
        run.one(path)
    result = run.result
    logger.info(
        "imported %d card(s) from %s, refused %d", len(result.imported), source, len(result.refused)
    )
    return result


class _Import:
    """One ``cards import`` run: the local store as it grows, and what happened to each card."""

    def __init__(
        self,
        ws: Workspace,
        target: ImportTarget,
        trust: TrustStore,
        prefix: str | None,
        revoked_there: dict[str, str],
        result: ImportResult,
    ) -> None:
        self.ws, self.target, self.trust, self.prefix, self.result = (
            ws,
            target,
            trust,
            prefix,
            result,
        )
        self.revoked_there = revoked_there
        self.local = target.load_verified(trust)
        self.cards: dict[str, Card] = dict(self.local.cards)  # grows as peers' cards land
        self._key: OperatorKey | None = None

    def refuse(self, path: Path, server: str | None, reason: str, kind: FailureKind) -> None:
        self.result.refused.append(CardFailure(path, server, reason, kind))

    def one(self, path: Path) -> None:
        try:
            raw = _read_source(path)
            card = read_verified(raw, self.trust, source=str(path))
        except TrustError as exc:
            return self.refuse(path, None, str(exc), exc.kind)
        except VerificationError as exc:
            return self.refuse(path, None, str(exc), "signature")
        except CartographError as exc:
            return self.refuse(path, None, str(exc), "malformed")
        name, sig = card.identity.server, card.signature
        if sig is None:  # verify_stored refuses unsigned cards; this keeps the types honest
            return None
        if sig.key_id in self.revoked_there:
            why = self.revoked_there[sig.key_id] or "no reason given"
            return self.refuse(
                path,
                name,
                f"server {name!r} is signed by {sig.key_id}, which "
                f"the source's own revocation list revokes ({why})",
                "revoked",
            )
        here = self.cards.get(name)
        if here is None or here.signature is None:
            return self.new(path, name, card, raw)
        if self.same_or_update(path, name, card, raw):
            return None
        return self.clash(path, name, card, raw, here.signature.key_id)

    def new(self, path: Path, name: str, card: Card, raw: bytes) -> None:
        """A server with no verified card here: imported, unless an unverifiable file holds
        its place."""
        if self.target.holds(name):
            return self.refuse(
                path,
                name,
                f"{self.target.location(name)} exists here and does "
                "not verify; fix or remove it (`cartograph cards verify` says "
                "why) before importing over it",
                "clash",
            )
        self.write(name, card, raw, alias=False)
        self.result.imported.append(name)
        return None

    def clash(self, path: Path, name: str, card: Card, raw: bytes, here_key: str) -> None:
        """A server whose card here another signer signed: refused, or kept under
        ``--rename``'s prefix."""
        sig = card.signature
        assert sig is not None
        if self.prefix is None:
            return self.refuse(
                path,
                name,
                f"server {name!r} clashes: the card here is signed by "
                f"{here_key}, the imported one by {sig.key_id} "
                f"({_signer(self.trust, sig.key_id)}); not merged. Import with "
                "--rename PREFIX to keep both (the import becomes PREFIX+name), "
                "or remove one",
                "clash",
            )
        alias = self.prefix + name
        if alias in self.cards and self.same_or_update(path, alias, card, raw):
            return None
        if alias in self.cards or self.target.holds(alias):
            return self.refuse(
                path,
                name,
                f"server {name!r} clashes and {alias!r} is taken too; "
                "choose another --rename prefix",
                "clash",
            )
        self.write(alias, card, raw, alias=True)
        self.result.renamed[name] = alias
        return None

    def same_or_update(self, path: Path, name: str, card: Card, raw: bytes) -> bool:
        """Settle a card whose (new) name is taken by the same signer's card; False otherwise."""
        here, sig = self.cards[name], card.signature
        if here.signature is None or sig is None:
            return False
        if here.signature.value == sig.value:
            self.result.unchanged.append(name)
            return True
        if here.signature.key_id != sig.key_id or self.local.paths[name] != self.target.location(
            name
        ):
            return False
        if _when(sig.signed_at) < _when(here.signature.signed_at):
            self.refuse(
                path,
                name,
                f"server {name!r}: the card here, by the same key "
                f"{sig.key_id}, is newer ({here.signature.signed_at} > {sig.signed_at})",
                "older",
            )
            return True
        self.write(name, card, raw, alias=name != card.identity.server)
        self.result.updated.append(name)
        return True

    def write(self, name: str, card: Card, raw: bytes, *, alias: bool) -> None:
        self.target.write_sealed(name, raw)
        if alias:
            self._key = self._key or load_key(self.ws)
            self.target.write_alias(name, alias_record(card, name, self._key))
        self.cards[name] = card
        self.local.paths[name] = self.target.location(name)


def _read_source(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CardError(f"{path}: cannot read: {exc.strerror}") from exc


def _when(stamp: str) -> float:
    try:
        return clock.parse(stamp).timestamp()
    except ValueError:
        return float("-inf")


def _source_revocations(source: Path, trust: TrustStore) -> dict[str, str]:
    """Key ids the source workspace's own revocation list revokes (id -> reason).

    Applied to this import only. A list signed by a key not trusted here cannot be checked
    and is ignored (logged); a list by a trusted key that does not verify stops the import.
    """
    path = source / "keys" / "trusted" / "revocations.json"
    if not path.is_file():
        return {}
    from cartograph.trust.revocation import read_revocations

    try:
        _, entries, _ = read_revocations(path, trust, peer=True)
    except TrustError as exc:
        if exc.kind != "unknown":
            raise KeyError_(f"cannot import: {exc}") from exc
        logger.warning("ignoring the source's revocation list: %s", exc)
        return {}
    except CartographError as exc:
        raise KeyError_(f"cannot import: the source's revocation list is not valid: {exc}") from exc
    return {r.key_id: r.reason for r in entries}


def _signer(trust: TrustStore, key_id: str) -> str:
    entry = trust.entry(key_id)
    return entry.name if entry else "unknown"


def alias_record(card: Card, alias: str, key: OperatorKey) -> bytes:
    """The signed alias record that renames ``card`` to ``alias`` here, as stored."""
    if card.signature is None:
        raise VerificationError(f"card {card.identity.server!r} is unsigned; nothing to alias")
    payload: dict[str, Any] = {
        "format": ALIAS_FORMAT,
        "server": alias,
        "original_server": card.identity.server,
        "card_key_id": card.signature.key_id,
        "card_signature": card.signature.value,
        "signed_at": clock.stamp(),
    }
    value = key.private_key.sign(canonical(payload))
    signature = AliasSignature(key_id=key.key_id, value=b64(value))
    record = AliasRecord.model_validate({**payload, "signature": signature})
    text = json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False)
    return (text + "\n").encode()


def read_alias(record: bytes, path: Path) -> tuple[AliasRecord, dict[str, Any]]:
    """The alias ``record`` (stored at ``path``) and the payload its signature covers (as
    stored, without ``signature``); :class:`VerificationError` naming the file and the field
    when it is not one."""
    try:
        raw = json.loads(record.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError alike
        raise VerificationError(f"{path}: not a readable {ALIAS_FORMAT} record: {exc!r}") from exc
    try:
        parsed = AliasRecord.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise VerificationError(
            f"{path}: not a {ALIAS_FORMAT} record: field {where}: {first['msg']}"
        ) from exc
    return parsed, {k: v for k, v in raw.items() if k != "signature"}


def apply_alias(record: bytes, path: Path, card: Card, trust: TrustStore) -> Card:
    """``card`` under the name its alias ``record`` (stored at ``path``) gives it, once the
    record verifies here."""
    parsed, payload = read_alias(record, path)
    signer, value = parsed.signature.key_id, parsed.signature.value
    alias, signed_at = parsed.server, parsed.signed_at
    entry = trust.entry(signer)
    if entry is None or entry.origin != "operator":
        raise TrustError(
            f"{path}: alias signed by {signer}, not one of this workspace's operator keys",
            kind="unknown",
            key_id=signer,
        )
    key = trust.check(f"alias {path.name}", signer, signed_at)
    try:
        key.verify(unb64(value), canonical(payload))
    except ValueError as exc:
        raise VerificationError(f"{path}: alias record was changed after signing") from exc
    if (
        card.signature is None
        or parsed.original_server != card.identity.server
        or parsed.card_signature != card.signature.value
    ):
        raise VerificationError(
            f"{path}: the alias {alias!r} was made for another version of this card; import it "
            "again with --rename"
        )
    return card.model_copy(update={"identity": card.identity.model_copy(update={"server": alias})})
