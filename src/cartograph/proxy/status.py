"""status: servers, tool counts, card keys and ages, index freshness, sessions, quarantine.

:func:`build_status` is a pure read of the proxy's state into :class:`StatusAnswer`, the one
status model; the proxy's ``status`` tool returns :meth:`StatusAnswer.to_json` (compact: fields
that are None are left out, as agents have always read them).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from cartograph.access.policy import ALLOW_ALL

if TYPE_CHECKING:
    from cartograph.access.policy import Policy
    from cartograph.gateway.base import SessionHealth
    from cartograph.proxy.core import Proxy


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SessionRow(_Out):
    """One upstream session slot (per client for ``--per-client`` servers)."""

    state: str
    starts: int
    crashes: int
    owned: int = 0  # upstream sessions (stdio: processes) open for it, closing ones included
    client: str | None = None
    in_flight: int | None = None
    last_error: str | None = None
    retry_in_s: float | None = None


class HeldRow(_Out):
    """A tool the drift guard holds back."""

    tool: str
    reason: str
    since: str


class ServerStatus(_Out):
    """One server with a verified card."""

    server: str
    tools: int
    key_id: str | None
    card_age_h: float | None
    sessions: list[SessionRow] | Literal["not started"]
    quarantined: list[HeldRow] | None = None
    prompts: int | None = None  # on the card, for the client (None: none)
    resources: int | None = None  # resources and resource templates on the card (None: none)


class Totals(_Out):
    servers: int
    tools: int
    quarantined: int
    upstream_sessions_owned: int | None = None  # for clients that may see every server


class NotInConfig(_Out):
    """Signed cards of servers the config does not name: neither offered nor callable."""

    servers: list[str]
    note: str = (
        "signed cards of servers the config does not name: not offered, not callable; "
        "`cartograph cards prune` removes them"
    )


class IndexState(_Out):
    """The retrieval index's freshness, as far as it is known without opening it."""

    method: str | None = None
    reranker: str | None = None  # the cross-encoder reordering stage one's top 20, when on
    reorder: str | None = None  # the trained encoder ordering hybrid's top 5, when on
    state: str
    error: str | None = None
    opened_s_ago: float | None = None
    open_seconds: float | None = None
    tools: int | None = None


class RejectedCard(_Out):
    file: str
    reason: str


class StatusAnswer(_Out):
    """What the ``status`` tool answers."""

    gateway: str
    servers: list[ServerStatus]
    totals: Totals
    index: IndexState
    cards_rejected: list[RejectedCard] | None = None
    cards_not_in_config: NotInConfig | None = None
    configured_without_card: list[str] | None = None
    other_sessions: dict[str, list[SessionRow]] | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def build_status(proxy: Proxy, policy: Policy | None = None) -> StatusAnswer:
    """Status as ``policy`` lets its client see it: servers and tools it may not see are left
    out of every list and count (``None``: everything). Only configured servers are shown:
    the other cards are named apart (``cards_not_in_config``)."""
    if policy == ALLOW_ALL:
        policy = None  # nothing to hide from it
    sessions = _sessions(proxy.gateway.health())
    servers, visible_tools = _servers(proxy, policy, sessions)
    quarantined = (
        len(proxy.quarantine.held())
        if policy is None
        else sum(len(s.quarantined or []) for s in servers)
    )
    rejected = None
    if proxy.catalog.failures and policy is None:
        rejected = [RejectedCard(file=f.path.name, reason=f.reason) for f in proxy.catalog.failures]
    if sessions and policy is not None:
        sessions = {s: rows for s, rows in sessions.items() if policy.may_see_server(s)}
    return StatusAnswer(
        gateway=proxy.settings.mode,
        servers=servers,
        totals=Totals(
            servers=len(servers),
            tools=visible_tools,
            quarantined=quarantined,
            upstream_sessions_owned=proxy.gateway.owned() if policy is None else None,
        ),
        index=proxy.resolver.index_state(),
        cards_rejected=rejected,
        cards_not_in_config=_not_in_config(proxy) if policy is None else None,
        configured_without_card=_uncarded(proxy, policy),
        other_sessions=sessions or None,
    )


def _sessions(health: list[SessionHealth]) -> dict[str, list[SessionRow]]:
    """The gateway's session slots by server."""
    sessions: dict[str, list[SessionRow]] = {}
    for h in health:
        row = SessionRow(
            state=h.state,
            starts=h.starts,
            crashes=h.crashes,
            owned=h.owned,
            client=h.client or None,
            in_flight=h.in_flight or None,
            last_error=h.last_error or None,
            retry_in_s=h.retry_in or None,
        )
        sessions.setdefault(h.server, []).append(row)
    return sessions


def _servers(
    proxy: Proxy, policy: Policy | None, sessions: dict[str, list[SessionRow]]
) -> tuple[list[ServerStatus], int]:
    """One row per carded server ``policy`` may see, and their visible tools in all; the
    sessions of those servers are taken out of ``sessions`` (what is left is shown apart)."""
    now = time.time()
    catalog = proxy.catalog
    servers = []
    visible = 0
    for name in sorted(catalog.cards):
        if proxy.configured is not None and name not in proxy.configured:
            continue  # a card without a config entry: nothing of it can be served
        ref = catalog.refs[name]
        names = list(catalog.cards.tool_names(name))
        if policy is not None:
            names = policy.visible_tools(name, names)
            if not names:
                sessions.pop(name, None)
                continue
        visible += len(names)
        held = [
            HeldRow(tool=t.tool, reason=t.reason, since=t.detected_at)
            for t in proxy.quarantine.held(name)
            if proxy.guard.held(name, t.tool) is not None
            and (policy is None or policy.permits(name, t.tool))
        ]
        head = catalog.cards.head(name)
        listed = head.prompts if head else []
        prompts = [p for p in listed if policy is None or policy.permits(name, p.name)]
        resources = len(head.resources) + len(head.resource_templates) if head else 0
        servers.append(
            ServerStatus(
                server=name,
                tools=len(names),
                key_id=ref.key_id,
                card_age_h=_age_hours(ref.signed_at, now),
                sessions=sessions.pop(name, []) or "not started",
                quarantined=held or None,
                prompts=len(prompts) or None,
                resources=resources or None,
            )
        )
    return servers, visible


def _not_in_config(proxy: Proxy) -> NotInConfig | None:
    if proxy.configured is None:
        return None
    unserved = sorted(set(proxy.catalog.cards) - proxy.configured)
    return NotInConfig(servers=unserved) if unserved else None


def _uncarded(proxy: Proxy, policy: Policy | None) -> list[str] | None:
    """Configured servers without a verified card (that ``policy`` may know of)."""
    if proxy.configured is None:
        return None
    uncarded = sorted(
        s
        for s in proxy.configured - set(proxy.catalog.cards)
        if policy is None or policy.may_see_server(s)
    )
    return uncarded or None


def _age_hours(stamp: str | None, now: float) -> float | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    return round((now - when) / 3600, 2)
