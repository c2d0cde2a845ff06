"""status: servers, tool counts, card keys and ages, index freshness, sessions, quarantine.

A pure read of the proxy's state, returned as compact JSON-able data.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cartograph.access.policy import ALLOW_ALL

if TYPE_CHECKING:
    from cartograph.access.policy import Policy
    from cartograph.proxy.core import Proxy


def build_status(proxy: Proxy, policy: Policy | None = None) -> dict[str, Any]:
    """Status as ``policy`` lets its client see it: servers and tools it may not see are left
    out of every list and count (``None``: everything)."""
    now = time.time()
    if policy == ALLOW_ALL:
        policy = None  # nothing to hide from it
    catalog = proxy.catalog
    sessions: dict[str, list[dict[str, Any]]] = {}
    for h in proxy.gateway.health():
        row: dict[str, Any] = {
            "state": h.state,
            "starts": h.starts,
            "crashes": h.crashes,
            "owned": h.owned,
        }
        if h.client:
            row["client"] = h.client
        if h.in_flight:
            row["in_flight"] = h.in_flight
        if h.last_error:
            row["last_error"] = h.last_error
        if h.retry_in:
            row["retry_in_s"] = h.retry_in
        sessions.setdefault(h.server, []).append(row)
    servers = []
    visible: dict[str, int] = {}
    configured = proxy.configured
    for name in sorted(catalog.cards):
        if configured is not None and name not in configured:
            continue  # a card without a config entry: nothing of it can be served
        card = catalog.cards[name]
        ref = catalog.refs[name]
        names = [t.name for t in card.tools]
        if policy is not None:
            names = policy.visible_tools(name, names)
            if not names:
                sessions.pop(name, None)
                continue
        visible[name] = len(names)
        held = [
            {"tool": t.tool, "reason": t.reason, "since": t.detected_at}
            for t in proxy.quarantine.held(name)
            if proxy.guard.held(name, t.tool) is not None
            and (policy is None or policy.permits(name, t.tool))
        ]
        entry: dict[str, Any] = {
            "server": name,
            "tools": len(names),
            "key_id": ref.key_id,
            "card_age_h": _age_hours(ref.signed_at, now),
            "sessions": sessions.pop(name, []) or "not started",
        }
        if held:
            entry["quarantined"] = held
        servers.append(entry)
    out: dict[str, Any] = {
        "gateway": proxy.settings.mode,
        "servers": servers,
        "totals": {
            "servers": len(servers),
            "tools": sum(visible.values()),
            "quarantined": len(proxy.quarantine.held())
            if policy is None
            else sum(len(s.get("quarantined", [])) for s in servers),
        },
        "index": _index_state(proxy),
    }
    if policy is None:
        out["totals"]["upstream_sessions_owned"] = proxy.gateway.owned()
    if catalog.failures and policy is None:
        out["cards_rejected"] = [
            {"file": f.path.name, "reason": f.reason} for f in catalog.failures
        ]
    if configured is not None and policy is None:
        unserved = sorted(set(catalog.cards) - configured)
        if unserved:
            out["cards_not_in_config"] = {
                "servers": unserved,
                "note": "signed cards of servers the config does not name: not offered, not "
                "callable; `cartograph cards prune` removes them",
            }
    if proxy.configured is not None:
        uncarded = sorted(
            s
            for s in proxy.configured - set(catalog.cards)
            if policy is None or policy.may_see_server(s)
        )
        if uncarded:
            out["configured_without_card"] = uncarded
    if sessions and policy is not None:
        sessions = {s: rows for s, rows in sessions.items() if policy.may_see_server(s)}
    if sessions:
        out["other_sessions"] = sessions
    return out


def _index_state(proxy: Proxy) -> dict[str, Any]:
    return proxy.resolver.index_state()


def _age_hours(stamp: str | None, now: float) -> float | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    return round((now - when) / 3600, 2)
