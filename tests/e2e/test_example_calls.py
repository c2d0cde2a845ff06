"""Every read-only tool of the example fleet, called through the proxy with the example arguments
of its own bootstrap card, succeeds (issue 17, item 4).

The cards are made the way `cartograph bootstrap` makes them: a live snapshot of the eight
example servers, the bootstrap generator, Ed25519 sealing. Read-only means annotated
``readOnlyHint: true``, or, without annotations, a list/get/read/search/show/describe-style
name; tools that reach the internet (``openWorldHint: true``) are left out. At most 10% of the
tools called may carry no example, and each of those has its reason in the generation report.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import types
from proxykit import connected, make_proxy, text

from cartograph.cards.model import ToolEntry
from cartograph.config import load_config
from cartograph.gateway.base import Limits
from cartograph.generate.attest import attest_snapshot
from cartograph.generate.bootstrap.generator import generate_card
from cartograph.generate.text import split_identifier
from cartograph.storage import open_store
from cartograph.trust.lifecycle import init_key
from cartograph.upstream.connect import snapshot_servers
from cartograph.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.fleet]

READ_WORDS = frozenset({"list", "get", "read", "search", "show", "describe", "find"})
PATIENT = Limits(
    call_timeout=45.0, start_timeout=30.0, list_timeout=15.0, backoff_base=0.0, backoff_cap=0.0
)


def read_only(entry: ToolEntry) -> bool:
    ann = entry.annotations or {}
    if ann.get("openWorldHint") is True:
        return False  # needs the internet
    if "readOnlyHint" in ann:
        return ann["readOnlyHint"] is True
    words = split_identifier(entry.name)
    return bool(words) and words[0] in READ_WORDS


async def test_every_read_only_example_tool_accepts_its_card_example(
    example_config: Path, tmp_path: Path
) -> None:
    fleet = load_config(example_config)
    outcome = await snapshot_servers(list(fleet.servers.values()), timeout=60.0, concurrency=8)
    assert not outcome.failures, outcome.failures
    ws = Workspace(tmp_path / "home").ensure()
    result = attest_snapshot(ws, outcome.snapshot, init_key(ws), store=open_store(ws))
    assert not result.failed, result.failed
    reports = {
        name: generate_card(server, created_at="2026-01-01T00:00:00Z").report
        for name, server in outcome.snapshot.servers.items()
    }

    called: list[str] = []
    missing: dict[str, str] = {}
    failures: dict[str, str] = {}
    proxy = make_proxy(ws, example_config, limits=PATIENT)
    async with connected(proxy) as client:
        for server, card in sorted(result.written.items()):
            for entry in card.tools:
                if not read_only(entry):
                    continue
                where = f"{server}/{entry.name}"
                called.append(where)
                if not entry.examples:
                    tool_report = next(t for t in reports[server].tools if t.tool == entry.name)
                    missing[where] = next(
                        (w for w in tool_report.warnings if w.startswith("no example")), ""
                    )
                    continue
                arguments = entry.examples[0].arguments
                with anyio.fail_after(90):
                    answer: types.CallToolResult = await client.call_tool(
                        "call", {"server": server, "tool": entry.name, "arguments": arguments}
                    )
                if answer.is_error:
                    failures[where] = f"{json.dumps(arguments)} -> {text(answer)[:200]}"

        with anyio.fail_after(60):
            found = await client.call_tool("discover", {"task": "what time is it in Tokyo"})
    shown = json.loads(text(found))
    assert shown["tools"] and all("keywords" not in t for t in shown["tools"])  # ranking only
    assert result.written["time"].tools[0].keywords  # ... though the card has them

    assert len(called) >= 30, called  # the eight servers have 35 such tools
    assert failures == {}
    assert len(missing) <= 0.1 * len(called), missing
    assert all(missing.values()), missing  # each one says why
