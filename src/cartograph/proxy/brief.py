"""What the discover tool's description says is behind the proxy, and who is told when it changes.

An agent reads the description of ``discover`` before it has a task for it; "find tools for a
task" alone does not say whether this proxy has tools for *its* task. :func:`catalog_brief`
writes one short paragraph from the verified cards the caller may see: how many tools on how
many servers, the servers themselves (most tools first), and the commonest domains of their
cards. It never exceeds :data:`BRIEF_CHARS` characters (175 tokens of o200k_base over the
99-server fleet catalog): servers and domains that do not fit are counted ("and 57 more"),
never cut mid-word.

:class:`ListWatch` remembers the client sessions that listed the proxy's tools and, when the
verified card set changes (a re-attestation, a new server bootstrapped, a card revoked), sends
each of them ``notifications/tools/list_changed`` (and the prompts and resources notifications,
whose lists come from the same cards), so a client that supports it lists again. The same change
is published on its :attr:`ListWatch.bus`, which the 2026-07-28 era's ``subscriptions/listen``
streams hear (:mod:`cartograph.proxy.listen`).
"""

from __future__ import annotations

import logging
import weakref
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)

from cartograph.access.policy import ALLOW_ALL

if TYPE_CHECKING:
    from cartograph.access.guard import Caller
    from cartograph.proxy.core import Proxy

logger = logging.getLogger(__name__)

BRIEF_CHARS = 600
"""The most characters the catalog paragraph of discover's description may take."""

BASE = (
    "Find tools for a task. Returns the top k tools with input schemas and example arguments, "
    "ready for call."
)
EMPTY = "No verified cards yet: the operator runs `cartograph bootstrap` to add servers."
MAX_DOMAINS = 8
WATCH_INTERVAL = 2.0  # seconds between looks at the card set for list-change notifications
LIST_EVENTS: tuple[ServerEvent, ...] = (
    ToolsListChanged(),
    PromptsListChanged(),
    ResourcesListChanged(),
)
"""What a card-set change is to a ``subscriptions/listen`` stream: all three lists change."""


def catalog_brief(servers: Iterable[tuple[str, int, list[str]]]) -> str:
    """One paragraph over ``(server, tool count, card domains)`` rows, within BRIEF_CHARS."""
    rows = sorted(((n, t, d) for n, t, d in servers if t > 0), key=lambda r: (-r[1], r[0]))
    if not rows:
        return EMPTY
    tools = sum(t for _, t, _ in rows)
    head = f"Behind this proxy: {tools:,} tools on {len(rows)} server{'s' * (len(rows) != 1)}"
    domains = Counter(d for _, _, ds in rows for d in dict.fromkeys(ds))
    top = [d for d, _ in sorted(domains.items(), key=lambda kv: (-kv[1], kv[0]))][:MAX_DOMAINS]
    tail = f". Main domains: {', '.join(top)}." if top else "."
    names = [n for n, _, _ in rows]
    budget = BRIEF_CHARS - len(head) - len(tail) - len(" (") - len(")")
    return head + f" ({_fitting(names, budget)})" + tail


def _fitting(names: list[str], budget: int) -> str:
    """As many of ``names`` as fit in ``budget`` characters, then "and N more"."""
    for shown in range(len(names), 0, -1):
        rest = len(names) - shown
        text = ", ".join(names[:shown]) + (f" and {rest} more" if rest else "")
        if len(text) <= budget:
            return text
    return f"{len(names)} servers"


def discover_description(brief: str) -> str:
    return f"{BASE} {brief}"


def proxy_brief(proxy: Proxy, caller: Caller | None = None) -> str:
    """The brief over the configured servers' verified cards that ``caller`` may see."""
    catalog = proxy.catalog
    catalog.poll()  # a tools/list, not a request's refresh (those are counted in tests)
    policy = caller.policy if caller is not None and caller.policy != ALLOW_ALL else None
    key = (catalog.generation, id(policy))
    cached = proxy.briefs.get(key)
    if cached is not None:
        return cached
    rows = []
    for server in catalog.cards:
        if proxy.configured is not None and server not in proxy.configured:
            continue
        if policy is not None and not policy.may_see_server(server):
            continue
        names = list(catalog.cards.tool_names(server))
        if policy is not None:
            names = policy.visible_tools(server, names)
        head = catalog.cards.head(server)
        rows.append((server, len(names), list(head.capability.domains) if head else []))
    brief = catalog_brief(rows)
    if len(proxy.briefs) >= 32:
        proxy.briefs.clear()
    proxy.briefs[key] = brief
    return brief


async def watch_catalog(proxy: Proxy, interval: float = WATCH_INTERVAL) -> None:
    """Look at the card set every ``interval`` seconds (off the event loop: a reload verifies
    the cards) and tell each server object's listed sessions when it changed."""
    while True:
        await anyio.to_thread.run_sync(proxy.catalog.poll, abandon_on_cancel=True)
        for watch in list(proxy.list_watches):
            await watch.changed(proxy.catalog.generation)
        await anyio.sleep(interval)


class ListWatch:
    """The sessions to tell when the proxy's lists change; one per MCP server object. 2025-era
    sessions are told on their connection; 2026-07-28 listen streams hear :attr:`bus`."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakSet[Any] = weakref.WeakSet()
        self._seen: Any = None
        self.bus = InMemorySubscriptionBus()

    def remember(self, session: Any) -> None:
        """``session`` listed something: tell it about later changes."""
        self._sessions.add(session)

    async def changed(self, generation: Any) -> int:
        """Tell every remembered session and every listen stream, once per new ``generation``;
        how many sessions were told."""
        if generation == self._seen:
            return 0
        first, self._seen = self._seen is None, generation
        if first:  # the set the sessions listed: nothing changed for them yet
            return 0
        for event in LIST_EVENTS:  # each listen stream keeps the kinds it asked for
            await self.bus.publish(event)
        told = 0
        for session in list(self._sessions):
            told += await _notify(session)
        return told


async def _notify(session: Any) -> int:
    sends: list[Callable[[], Any]] = [
        session.send_tool_list_changed,
        session.send_prompt_list_changed,
        session.send_resource_list_changed,
    ]
    try:
        for send in sends:
            await send()
    except Exception as exc:  # a session that went away: forget it, keep telling the others
        logger.debug("list change not sent to a closed session: %s", exc)
        return 0
    return 1
