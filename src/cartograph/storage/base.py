"""What both backends share: card versions, the retention setting, and re-signing.

:class:`CardVersion` names one stored version of a server's card. Each write of new bytes adds a
version (1, 2, ...; the current card is the newest), a byte-identical write adds none, and only
the newest ``card_history`` versions are kept (``config.json``; :data:`DEFAULT_CARD_HISTORY`).
:func:`resign_cards` decides which verified cards a new operator key signs again; each backend
writes them its own way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cartograph import clock
from cartograph.cards.codec import CardFailure, LoadedCards, read_verified
from cartograph.cards.model import Card
from cartograph.cards.seal import sign_card
from cartograph.errors import CardError, TrustError, VerificationError
from cartograph.trust.keys import OperatorKey
from cartograph.trust.store import TrustStore
from cartograph.workspace import Workspace, read_settings

DEFAULT_CARD_HISTORY = 20
HISTORY_SETTING = "card_history"


@dataclass(frozen=True)
class CardVersion:
    """One stored version of a server's card: its number, when it was written (ISO stamp),
    the SHA-256 of its sealed bytes as stored, and where it is kept."""

    server: str
    version: int
    written_at: str
    sha256: str
    where: str


def history_limit(ws: Workspace) -> int:
    """How many versions of each card the store keeps (``card_history`` in ``config.json``)."""
    value = read_settings(ws).card_history  # checked there: a whole number, at least 1
    return DEFAULT_CARD_HISTORY if value is None else value


def verified_version(
    raw: bytes, trust: TrustStore, *, server: str, version: int, where: str
) -> Card:
    """One kept version, verified like the current card; a refusal names the version."""
    try:
        return read_verified(raw, trust, source=where)
    except CardError as exc:
        why = f"version {version} of the card of server {server!r} ({where}) is refused: {exc}"
        if isinstance(exc, TrustError):
            raise TrustError(why, kind=exc.kind, key_id=exc.key_id) from exc
        raise (VerificationError if isinstance(exc, VerificationError) else CardError)(why) from exc


@dataclass
class ResignResult:
    """What ``cards resign`` did: re-signed servers, cards left as they were, and failures."""

    key_id: str
    resigned: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    failures: list[CardFailure] = field(default_factory=list)


def resign_cards(
    loaded: LoadedCards,
    trust: TrustStore,
    key: OperatorKey,
    write: Callable[[str, Card], object],
    *,
    include_peers: bool = False,
) -> ResignResult:
    """Re-sign every verified card of ``loaded`` with ``key`` (signed now) through ``write``.

    Cards that failed verification are never re-signed (that would launder a tampered card or
    one by a revoked key); regenerate those with ``cartograph bootstrap``. Cards signed by
    another operator's key keep their signature unless ``include_peers`` (then this operator
    vouches for them from now on).
    """
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
        write(server, sign_card(card, key, signed_at=now))
        result.resigned.append(server)
    return result
