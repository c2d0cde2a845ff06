"""What each console page shows, as plain values for its template, cut to what the caller may see.

Every function takes the serving :class:`~cartograph.proxy.core.Proxy` and the logged-in
:class:`~cartograph.access.Caller` and reads what the proxy already holds (status, the verified
cards, the quarantine, the audit trail, the index); nothing here writes, and nothing reads the
operator's private key: where a change needs one (re-attesting a server, regenerating cards)
the page shows the exact command to run.
"""

from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from cartograph.access import ALLOW_ALL
from cartograph.errors import CartographError

if TYPE_CHECKING:
    from cartograph.access.guard import Caller
    from cartograph.proxy.core import Proxy

logger = logging.getLogger(__name__)
AUDIT_ROWS = 200
STALE_FORM = "This form has expired or did not come from this console; load it again."


class NotFound(Exception):
    """A page for something that does not exist (or that the caller may not see); ``known``:
    the console paths of what does."""

    def __init__(self, what: str, known: list[str]) -> None:
        super().__init__(what)
        self.what = what
        self.known = known


def server_path(server: str, *rest: str | int) -> str:
    """The console path of a server's page, or of a tool or a kept card version under it."""
    return "/".join(["/console/servers", *(quote(str(p), safe="") for p in (server, *rest))])


def tool_path(server: str, tool: str) -> str:
    return server_path(server, "tools", tool)


def version_path(server: str, version: int, tool: str | None = None) -> str:
    """A kept card version's page (at ``tool``'s row)."""
    return server_path(server, "versions", version) + (f"#{quote(tool)}" if tool else "")


def unrestricted(caller: Caller) -> bool:
    return caller.policy == ALLOW_ALL


@dataclass
class ToolRow:
    name: str
    summary: str
    usage: str
    params: list[str]
    held: str | None
    publisher: str | None


@dataclass
class ServerPage:
    server: str
    key_id: str | None
    version: int | None  # the version shown
    signed_at: str | None
    generator: str | None
    served: int | None  # the version now served (``version`` unless an older one is shown)
    is_served: bool = True
    tool: str | None = None  # one tool of the card, not all
    tools: list[ToolRow] = field(default_factory=list)
    snapshot_note: str | None = None


def server_page(
    proxy: Proxy,
    caller: Caller,
    server: str,
    *,
    version: int | None = None,
    tool: str | None = None,
) -> ServerPage:
    """One server's tools (or ``tool`` alone) on the served card, or on a ``version`` the card
    history keeps: the signed card text beside the publisher text recorded at attestation, and
    the drift state (held by the guard: the live text no longer matches the served card).
    :class:`NotFound` for what the caller cannot see or the store does not hold."""
    proxy.catalog.refresh()
    visible = {s.server for s in proxy.status(caller).servers}
    if server not in visible:
        raise NotFound(f"server {server!r}", [server_path(s) for s in sorted(visible)])
    served = proxy.catalog.card_version(server)
    if version is None or version == served:
        card = proxy.catalog.cards[server]  # with its tools (``head`` has none)
    else:
        kept = [v.version for v in proxy.store.card_history(server)]
        if version not in kept:
            what = f"version {version} of the card of {server!r}"
            raise NotFound(what, [version_path(server, v) for v in reversed(kept)])
        card = proxy.store.read_version(server, version)  # verified; refusal: CartographError
    names = [e.name for e in card.tools if caller.policy.permits(server, e.name)]
    if tool is not None and tool not in names:
        raise NotFound(f"tool {tool!r} on server {server!r}", [tool_path(server, n) for n in names])
    publisher, note = _recorded_descriptions(proxy, card)
    current = version is None or version == served
    page = ServerPage(
        server=server,
        key_id=card.signature.key_id if card.signature else None,
        version=served if version is None else version,
        signed_at=card.signature.signed_at if card.signature else None,
        generator=card.provenance.generator,
        served=served,
        is_served=current,
        tool=tool,
        snapshot_note=note,
    )
    for entry in card.tools:
        if entry.name not in names or tool not in (None, entry.name):
            continue
        held = proxy.guard.held(server, entry.name) if current else None
        props = entry.input_schema.get("properties") if isinstance(entry.input_schema, dict) else {}
        page.tools.append(
            ToolRow(
                name=entry.name,
                summary=entry.summary,
                usage=entry.usage,
                params=sorted(props) if isinstance(props, dict) else [],
                held=f"{held.reason} (since {held.detected_at})" if held else None,
                publisher=publisher.get(entry.name),
            )
        )
    return page


def _recorded_descriptions(proxy: Proxy, card: Any) -> tuple[dict[str, str], str | None]:
    """The publisher's tool descriptions recorded in the snapshot the card was made from (not
    through Rift's module, which would load SciPy into the serving process)."""
    from cartograph.upstream.snapshot import find_recorded_server

    where = proxy.ws.snapshots_dir
    try:
        snap = find_recorded_server(where, card.server, card.provenance.snapshot_hash)
    except CartographError as exc:
        return {}, str(exc)
    out = {str(t.get("name")): str(t.get("description") or "") for t in snap.tools}
    return out, None


@dataclass
class RankedRow:
    rank: int
    server: str
    tool: str
    score: float
    channels: dict[str, float]
    summary: str
    key_id: str | None
    version: int | None
    usage: str = ""
    examples: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)


def discover_page(proxy: Proxy, caller: Caller, task: str, k: int) -> list[RankedRow]:
    """The ranking discover gives ``caller`` for ``task``, with each channel's part of each
    score (hybrid ranking) and the signed card text that ranking reads (summary, usage,
    example tasks, ranking-only keywords) and the key and card version behind each tool."""
    allow = None if unrestricted(caller) else caller.policy.permits
    ranking = proxy.resolver.rank(task, k, allow)
    parts = _channel_parts(proxy, task, [(h.server, h.tool) for h in ranking.results])
    rows = []
    for rank, hit in enumerate(ranking.results, 1):
        entry = proxy.catalog.cards.tool(hit.server, hit.tool)
        ref = proxy.catalog.refs.get(hit.server)
        rows.append(
            RankedRow(
                rank=rank,
                server=hit.server,
                tool=hit.tool,
                score=round(hit.score, 4),
                channels=parts.get((hit.server, hit.tool), {}),
                summary=entry.summary if entry else "",
                key_id=ref.key_id if ref else None,
                version=proxy.catalog.card_version(hit.server),
                usage=entry.usage if entry else "",
                examples=[ex.task for ex in entry.examples] if entry else [],
                keywords=list(entry.keywords) if entry else [],
            )
        )
    return rows


TRAINED = "trained"
"""The reorder stage's score among the channels (shown apart: not a term of the score)."""


def _channel_parts(
    proxy: Proxy, task: str, wanted: list[tuple[str, str]]
) -> dict[tuple[str, str], dict[str, float]]:
    """Each channel's term of the hybrid score for the ``wanted`` tools ({} when the index is
    not open or ranks another way), and with the reorder stage its trained score
    (:data:`TRAINED`)."""
    from cartograph.index.methods import hybrid_parts

    index = getattr(proxy.resolver, "_index", None)
    if index is None or not wanted:
        return {}
    try:
        evidence = index.evidence(task)
        parts = hybrid_parts(evidence, index.hybrid_params)
        stage = getattr(index, "reorderer", None)
        if stage is not None and getattr(index, "reranker", None) is None:
            parts[TRAINED] = stage.scores(task, evidence)  # what ordered the top 5
    except Exception:  # the playground's breakdown is optional; the ranking above stands
        logger.exception("channel breakdown failed for the console")
        return {}
    where = {tid: k for k, tid in enumerate(index.tool_ids)}
    out: dict[tuple[str, str], dict[str, float]] = {}
    for tid in wanted:
        k = where.get(tid)
        if k is not None:
            out[tid] = {name: round(float(v[k]), 3) for name, v in parts.items()}
    return out


def audit_rows(
    proxy: Proxy,
    caller: Caller,
    *,
    client: str = "",
    tool: str = "",
    since: str = "",
    entry: str = "",
) -> list[dict[str, Any]]:
    """The newest audit entries first, filtered (``entry``: the one discover answer with that
    id); a restricted client sees only its own."""
    rows = proxy.store.audit_log().read()
    own = None if unrestricted(caller) else caller.name
    out = []
    for row in reversed(rows):
        if own is not None and row.get("client") != own:
            continue
        if entry and row.get("id") != entry:
            continue
        if client and row.get("client") != client:
            continue
        if tool and tool not in (str(row.get("tool") or ""), *_result_tools(row)):
            continue
        if since and str(row.get("time") or "") < since:
            continue
        out.append(row)
        if len(out) >= AUDIT_ROWS:
            break
    return out


def _result_tools(row: dict[str, Any]) -> list[str]:
    results = row.get("results") or []
    return [str(r.get("tool")) for r in results if isinstance(r, dict)]


@dataclass
class HeldRow:
    server: str
    tool: str
    reason: str
    since: str
    command: str


def quarantine_rows(proxy: Proxy, caller: Caller) -> list[HeldRow]:
    """The tools the drift guard holds that ``caller`` may see, each with the command that
    lifts it (re-attesting the server: it needs the operator's key, so it is not a button)."""
    proxy.catalog.refresh()  # a re-attested card lifts its tools (CardGuard.held)
    rows = []
    config = proxy.settings.config_path
    where = f" --config {shlex.quote(config)}" if config else ""
    for held in proxy.quarantine.held():
        if not caller.policy.permits(held.server, held.tool):
            continue
        if proxy.guard.held(held.server, held.tool) is None:
            continue  # lifted just now
        command = f"cartograph bootstrap --server {shlex.quote(held.server)}{where}"
        rows.append(HeldRow(held.server, held.tool, held.reason, held.detected_at, command))
    return rows


class RiftCache:
    """The Rift report of the served cards, computed on first view and again when they change."""

    def __init__(self) -> None:
        self._key: int | None = None
        self._report: Any = None

    def report(self, proxy: Proxy) -> Any:
        from cartograph.rift.workspace import run_rift

        proxy.catalog.refresh()
        key = proxy.catalog.generation
        if self._key != key or self._report is None:
            self._report = run_rift(proxy.ws, proxy.store)
            self._key = key
        return self._report


def visible_clusters(report: Any, caller: Caller) -> list[Any]:
    """The clusters all of whose members ``caller`` may see."""
    return [c for c in report.clusters if all(caller.policy.permits(s, t) for s, t in c.members)]


@dataclass
class ReplicaRow:
    replica: str
    state: str  # serving / stale / stopped (storage.health.ReplicaHealth.state)
    age_s: float
    endpoint: str
    started: str
    servers: int
    tools: int
    sessions_up: int
    sessions: int
    crashes: int
    quarantined: int
    errors: list[str] = field(default_factory=list)


def replica_rows(board: list[Any], visible: set[str]) -> list[ReplicaRow]:
    """The health board's records (:class:`~cartograph.storage.health.ReplicaHealth`), each cut to
    the servers in ``visible`` (those the caller's status shows), serving replicas first."""
    rows = []
    for entry in board:
        body = entry.body
        servers = [s for s in body.get("servers") or [] if s.get("server") in visible]
        states = [
            st for s in servers if isinstance(s.get("sessions"), list) for st in s["sessions"]
        ]
        rows.append(
            ReplicaRow(
                replica=entry.replica,
                state=entry.state,
                age_s=round(entry.age_s, 1),
                endpoint=str(body.get("endpoint") or "-"),
                started=str(body.get("started") or "-"),
                servers=len(servers),
                tools=sum(int(s.get("tools") or 0) for s in servers),
                sessions_up=sum(st in ("ready", "one-shot") for st in states),
                sessions=len(states),
                crashes=sum(int(s.get("crashes") or 0) for s in servers),
                quarantined=sum(len(s.get("quarantined") or []) for s in servers),
                errors=[
                    f"{s['server']}: {s['last_error']}" for s in servers if s.get("last_error")
                ],
            )
        )
    order = {"serving": 0, "stale": 1, "stopped": 2}
    return sorted(rows, key=lambda r: (order.get(r.state, 3), r.replica))
