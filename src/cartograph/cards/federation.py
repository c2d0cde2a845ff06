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
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from pydantic import BaseModel, ConfigDict, ValidationError

from cartograph import clock
from cartograph.canonical import canonical
from cartograph.cards.model import Card
from cartograph.cards.seal import FailureKind, verify_stored
from cartograph.cards.store import (
    ALIAS_SUFFIX,
    CARD_SUFFIX,
    CardFailure,
    _read_bytes,
    _validate_bytes,
    load_verified,
)
from cartograph.errors import CartographError, KeyError_, TrustError, UsageError, VerificationError
from cartograph.files import atomic_write
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


def import_store(ws: Workspace, source: Path, *, rename_prefix: str | None = None) -> ImportResult:
    """Copy in every card of ``source`` that verifies here; refuse and report the rest."""
    if ws.store is not None:
        raise UsageError(
            "`cards import` writes card files and alias records, which a shared store does not "
            "hold yet: import into a workspace without --store / $CARTOGRAPH_STORE"
        )
    src = source_cards_dir(source)
    if src.resolve() == ws.cards_dir.resolve():
        raise UsageError(f"{source}: that is this workspace's own card store")
    if rename_prefix is not None and not _PREFIX.match(rename_prefix):
        raise UsageError(f"--rename {rename_prefix!r}: use letters, digits, '-', '_' or '.'")
    trust = TrustStore.for_workspace(ws)
    if trust.fault is not None:
        raise KeyError_(f"cannot import: {trust.fault}")
    run = _Import(
        ws, trust, rename_prefix, _source_revocations(source, trust), ImportResult(source)
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
        trust: TrustStore,
        prefix: str | None,
        revoked_there: dict[str, str],
        result: ImportResult,
    ) -> None:
        self.ws, self.trust, self.prefix, self.result = ws, trust, prefix, result
        self.revoked_there = revoked_there
        self.local = load_verified(ws, trust)
        self.taken = {p.name for p in ws.cards_dir.iterdir()} if ws.cards_dir.is_dir() else set()
        self._key: OperatorKey | None = None

    def refuse(self, path: Path, server: str | None, reason: str, kind: FailureKind) -> None:
        self.result.refused.append(CardFailure(path, server, reason, kind))

    def one(self, path: Path) -> None:
        try:
            raw = _read_bytes(path)
            card = _validate_bytes(raw, source=str(path))
            verify_stored(raw, self.trust, source=str(path))
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
        here = self.local.cards.get(name)
        if here is None or here.signature is None:
            if self.ws.card_path(name).name in self.taken:
                return self.refuse(
                    path,
                    name,
                    f"{self.ws.card_path(name)} exists here and does "
                    "not verify; fix or remove it (`cartograph cards verify` says "
                    "why) before importing over it",
                    "clash",
                )
            self.write(name, card, raw, alias=False)
            self.result.imported.append(name)
            return None
        if self.same_or_update(path, name, card, raw):
            return None
        if self.prefix is None:
            return self.refuse(
                path,
                name,
                f"server {name!r} clashes: the card here is signed by "
                f"{here.signature.key_id}, the imported one by {sig.key_id} "
                f"({_signer(self.trust, sig.key_id)}); not merged. Import with "
                "--rename PREFIX to keep both (the import becomes PREFIX+name), "
                "or remove one",
                "clash",
            )
        alias = self.prefix + name
        if alias in self.local.cards and self.same_or_update(path, alias, card, raw):
            return None
        if alias in self.local.cards or self.ws.card_path(alias).name in self.taken:
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
        here, sig = self.local.cards[name], card.signature
        if here.signature is None or sig is None:
            return False
        if here.signature.value == sig.value:
            self.result.unchanged.append(name)
            return True
        if here.signature.key_id != sig.key_id or self.local.paths[name] != self.ws.card_path(name):
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
        target = self.ws.card_path(name)
        atomic_write(target, raw)
        if alias:
            self._key = self._key or load_key(self.ws)
            write_alias(target, card, name, self._key)
        self.taken.add(target.name)
        self.local.cards[name] = card
        self.local.paths[name] = target


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


def write_alias(card_path: Path, card: Card, alias: str, key: OperatorKey) -> Path:
    """Sign and write the alias record that renames ``card`` to ``alias`` here."""
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
    path = card_path.with_name(card_path.name[: -len(CARD_SUFFIX)] + ALIAS_SUFFIX)
    text = json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False)
    atomic_write(path, (text + "\n").encode())
    return path


def read_alias(path: Path) -> tuple[AliasRecord, dict[str, Any]]:
    """The alias record in ``path`` and the payload its signature covers (as stored, without
    ``signature``); :class:`VerificationError` naming the file and field when it is not one."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VerificationError(f"{path}: not a readable {ALIAS_FORMAT} record: {exc!r}") from exc
    try:
        record = AliasRecord.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise VerificationError(
            f"{path}: not a {ALIAS_FORMAT} record: field {where}: {first['msg']}"
        ) from exc
    return record, {k: v for k, v in raw.items() if k != "signature"}


def apply_alias(path: Path, card: Card, trust: TrustStore) -> Card:
    """``card`` under the name its alias record gives it, once the record verifies here."""
    record, payload = read_alias(path)
    signer, value = record.signature.key_id, record.signature.value
    alias, signed_at = record.server, record.signed_at
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
    except (InvalidSignature, ValueError) as exc:
        raise VerificationError(f"{path}: alias record was changed after signing") from exc
    if (
        card.signature is None
        or record.original_server != card.identity.server
        or record.card_signature != card.signature.value
    ):
        raise VerificationError(
            f"{path}: the alias {alias!r} was made for another version of this card; import it "
            "again with --rename"
        )
    return card.model_copy(update={"identity": card.identity.model_copy(update={"server": alias})})
