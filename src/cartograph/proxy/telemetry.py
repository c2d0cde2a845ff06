"""The proxy's metrics: what it counts as it serves, and what ``/metrics`` shows.

:class:`ProxyMetrics` holds the instruments the proxy feeds (discover and call latency, refused
and rate-limited requests, failed authentications); :func:`metrics_text` adds what is read at
scrape time from ``status`` (per-upstream session states, starts and crashes, quarantined tools,
cards that failed verification, the index). Everything is seen as the scraping client's policy
lets it see ``status``: a restricted client gets only its servers' series. Server labels come
from configured, carded servers only; a call to an unknown server is counted as ``(unknown)``,
so a caller cannot grow the label set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cartograph.access import ALLOW_ALL
from cartograph.metrics import Counter, Family, Histogram, render

if TYPE_CHECKING:
    from cartograph.access.guard import Caller
    from cartograph.proxy.core import Proxy
    from cartograph.proxy.status import StatusAnswer

UNKNOWN_SERVER = "(unknown)"


@dataclass
class ProxyMetrics:
    discover_seconds: Histogram = field(
        default_factory=lambda: Histogram(
            "cartograph_discover_seconds",
            "Time to answer discover (ranking and rendering), by outcome (ok or the refusal).",
            ("outcome",),
        )
    )
    call_seconds: Histogram = field(
        default_factory=lambda: Histogram(
            "cartograph_call_seconds",
            "Time of call through the gateway, by upstream server and outcome (ok, tool-error, "
            "cancelled, or the refusal's or failure's name).",
            ("server", "outcome"),
        )
    )
    rate_limited: Counter = field(
        default_factory=lambda: Counter(
            "cartograph_rate_limited_total",
            "Requests refused for a client's rate or concurrency limit (http: the request; "
            "tool: a discover, call or status).",
            ("kind",),
        )
    )
    auth_failures: Counter = field(
        default_factory=lambda: Counter(
            "cartograph_auth_failures_total", "HTTP requests answered 401 (no or a bad credential)."
        )
    )

    def instruments(self) -> list[Counter | Histogram]:
        return [self.discover_seconds, self.call_seconds, self.rate_limited, self.auth_failures]


def metrics_text(proxy: Proxy, caller: Caller | None = None) -> str:
    """The Prometheus text of ``proxy`` as ``caller`` may see it."""
    status = proxy.status(caller)
    visible = {s.server for s in status.servers} | set(status.other_sessions or {})
    restricted = caller is not None and caller.policy != ALLOW_ALL

    def keep(labels: Mapping[str, str]) -> bool:
        server = labels.get("server")
        return server is None or not restricted or server in visible

    items = [*proxy.metrics.instruments(), *_upstreams(status), *_catalog(status, restricted)]
    return render(items, keep)


def _upstreams(status: StatusAnswer) -> list[Family]:
    """Session gauges read from ``status`` (already cut to what the client may see)."""
    states: list[tuple[dict[str, str], float]] = []
    starts: list[tuple[dict[str, str], float]] = []
    crashes: list[tuple[dict[str, str], float]] = []
    sessions = {s.server: s.sessions for s in status.servers} | (status.other_sessions or {})
    for server, rows in sorted(sessions.items()):
        if isinstance(rows, str):  # "not started"
            continue
        counts: dict[str, int] = {}
        for row in rows:
            counts[row.state] = counts.get(row.state, 0) + 1
        states += [({"server": server, "state": st}, n) for st, n in sorted(counts.items())]
        starts.append(({"server": server}, sum(r.starts for r in rows)))
        crashes.append(({"server": server}, sum(r.crashes for r in rows)))
    up = [
        ({"server": s.server}, 1.0 if _ready(s.sessions) else 0.0)
        for s in status.servers
        if not isinstance(s.sessions, str)
    ]
    return [
        Family("cartograph_upstream_up", "gauge", "1 when a session to the upstream is ready.", up),
        Family(
            "cartograph_upstream_sessions",
            "gauge",
            "Upstream session slots by state (idle, starting, ready, backoff, ...).",
            states,
        ),
        Family(
            "cartograph_upstream_starts",
            "gauge",
            "Upstream session starts, summed over the gateway's live slots (a restart is a "
            "start after the first).",
            starts,
        ),
        Family(
            "cartograph_upstream_crashes",
            "gauge",
            "Upstream sessions that ended unasked, summed over the live slots.",
            crashes,
        ),
    ]


def _catalog(status: StatusAnswer, restricted: bool) -> list[Family]:
    """Card, quarantine and index gauges read from ``status``."""
    held = [({"server": s.server}, len(s.quarantined or [])) for s in status.servers]
    index_fresh = 1.0 if status.index.state.startswith("fresh") else 0.0
    families = [
        Family("cartograph_quarantined_tools", "gauge", "Tools the drift guard holds.", held),
        Family(
            "cartograph_servers",
            "gauge",
            "Configured servers with a verified card that the client may see.",
            [({}, float(status.totals.servers))],
        ),
        Family("cartograph_tools", "gauge", "Tools on those servers.", [({}, status.totals.tools)]),
        Family(
            "cartograph_index_fresh",
            "gauge",
            "1 when the retrieval index is open and matches the verified cards.",
            [({}, index_fresh)],
        ),
    ]
    if not restricted:  # which card files failed is the operator's business
        rejected = float(len(status.cards_rejected or []))
        families.append(
            Family(
                "cartograph_cards_rejected",
                "gauge",
                "Card files that failed verification and are not served.",
                [({}, rejected)],
            )
        )
    return families


def _ready(rows: object) -> bool:
    """A session is usable: ready (pooled) or one-shot (every call starts its own)."""
    return isinstance(rows, list) and any(
        getattr(r, "state", "") in ("ready", "one-shot") for r in rows
    )
