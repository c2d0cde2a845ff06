"""Discover's description says what is behind the proxy, within its budget, as the caller may
see it; listed sessions are told when the card set changes (tools/list_changed)."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from mcp import types
from proxykit import Env

from cartograph.access.guard import Caller
from cartograph.access.policy import Policy
from cartograph.proxy.brief import BRIEF_CHARS, EMPTY, catalog_brief, proxy_brief
from cartograph.proxy.memory import session_on
from cartograph.proxy.server import build_server

pytestmark = pytest.mark.anyio


def test_the_brief_counts_tools_and_servers_most_tools_first() -> None:
    brief = catalog_brief(
        [
            ("time", 2, ["time"]),
            ("github", 40, ["code", "issues"]),
            ("gitlab", 30, ["code"]),
            ("idle", 0, ["nothing"]),  # a server with no tool the caller may use is left out
        ]
    )
    assert brief.startswith("Behind this proxy: 72 tools on 3 servers (github, gitlab, time)")
    assert brief.endswith("Main domains: code, issues, time.")
    assert "idle" not in brief and "nothing" not in brief


def test_the_brief_stays_within_its_budget_and_counts_what_it_leaves_out() -> None:
    rows = [(f"server-with-a-long-name-{i:03d}", 500 - i, [f"domain{i % 30}"]) for i in range(400)]
    brief = catalog_brief(rows)
    assert len(brief) <= BRIEF_CHARS
    shown = brief.count("server-with-a-long-name-")
    assert 0 < shown < 400 and f"and {400 - shown} more" in brief
    assert "400 servers" in brief and len(re.findall(r"domain\d+", brief)) == 8


def test_no_cards_says_what_the_operator_does() -> None:
    assert catalog_brief([]) == EMPTY
    assert catalog_brief([("a", 0, [])]) == EMPTY


async def test_tools_list_describes_the_cards_the_caller_may_see(env: Env) -> None:
    proxy = env.proxy()
    everything = proxy_brief(proxy)
    counts = {s: len(proxy.catalog.cards.tool_names(s)) for s in ("chaos", "calm", "crashy")}
    assert f"{sum(counts.values())} tools on 3 servers" in everything
    only_calm = proxy_brief(proxy, Caller("c", Policy(allow=("calm.*",))))
    assert f"{counts['calm']} tools on 1 server (calm)" in only_calm
    async with (
        proxy.running(),
        session_on(build_server(proxy)) as client,
    ):
        listed = await client.list_tools()
    discover = next(t for t in listed.tools if t.name == "discover")
    assert discover.description is not None and everything in discover.description


async def test_a_listed_session_is_told_when_the_card_set_changes(env: Env) -> None:
    proxy = env.proxy()
    seen: list[Any] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            seen.append(message)

    async with (
        proxy.running(),
        session_on(build_server(proxy), message_handler=handler) as client,
    ):
        caps = client.server_capabilities
        assert caps is not None and caps.tools is not None and caps.tools.list_changed
        before = await client.list_tools()
        await anyio.sleep(3)  # the watch has taken the set the client listed as its baseline
        assert not seen
        assert proxy.store.remove_card("crashy")  # as `cartograph cards prune` does
        with anyio.fail_after(20):
            while not any(isinstance(n, types.ToolListChangedNotification) for n in seen):
                await anyio.sleep(0.1)
        after = await client.list_tools()
    kinds = {type(n) for n in seen}
    assert {types.PromptListChangedNotification, types.ResourceListChangedNotification} <= kinds
    old = next(t for t in before.tools if t.name == "discover").description or ""
    new = next(t for t in after.tools if t.name == "discover").description or ""
    assert "on 3 servers" in old and "on 2 servers" in new and "crashy" not in new
