"""open_session and list_tools_raw against our own small servers over real stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from sdk1 import sdk1_python

from cartograph.config import StdioUpstream
from cartograph.errors import UpstreamError, UpstreamTimeout
from cartograph.upstream.connect import list_tools_raw, open_session

SERVERS = Path(__file__).resolve().parent / "servers"
pytestmark = pytest.mark.anyio


def raw_server(mode: str, *extra: str, name: str | None = None) -> StdioUpstream:
    return StdioUpstream(
        name=name or f"raw-{mode}",
        command=sys.executable,
        args=(str(SERVERS / "raw_server.py"), mode, *extra),
    )


def paging_server(total: int, page: int, name: str = "paging") -> StdioUpstream:
    return StdioUpstream(
        name=name,
        command=sdk1_python(),
        args=(str(SERVERS / "paging_server.py"), str(total), str(page)),
    )


async def test_missing_command_is_reported_with_the_command(no_leftover_children: None) -> None:
    cfg = StdioUpstream(name="ghost", command="/nonexistent/bin/mcp-ghost")
    with pytest.raises(UpstreamError) as info:
        async with open_session(cfg, timeout=5):
            pytest.fail("a missing command must not yield a session")
    assert info.value.server == "ghost"
    assert "/nonexistent/bin/mcp-ghost" in str(info.value)
    assert "no such command" in str(info.value)


async def test_server_that_never_answers_initialize_times_out(no_leftover_children: None) -> None:
    with pytest.raises(UpstreamTimeout) as info:
        async with open_session(raw_server("hang"), timeout=1.5):
            pytest.fail("a hung server must not yield a session")
    assert "did not answer initialize within 1.5s" in str(info.value)
    assert "raw_server starting in mode hang" in info.value.stderr_tail


async def test_server_that_prints_garbage_is_reported_with_what_it_printed(
    no_leftover_children: None,
) -> None:
    seen: list[object] = []

    async def handler(message: object) -> None:
        seen.append(message)

    with pytest.raises(UpstreamError) as info:
        async with open_session(raw_server("garbage"), timeout=1.5, message_handler=handler):
            pytest.fail("a garbage server must not yield a session")
    assert seen and all(isinstance(m, Exception) for m in seen)  # the handler saw each line
    message = str(info.value)
    assert "non-JSON-RPC text on stdout" in message
    assert "Welcome to a program that does not speak MCP!" in message


async def test_server_that_exits_at_start_shows_its_stderr(no_leftover_children: None) -> None:
    with pytest.raises(UpstreamError) as info:
        async with open_session(raw_server("exit"), timeout=10):
            pytest.fail("an exited server must not yield a session")
    assert not isinstance(info.value, UpstreamTimeout)
    assert "connection closed during initialize" in str(info.value)
    assert "fatal: cannot open the database" in info.value.stderr_tail
    assert "fatal: cannot open the database" in str(info.value)


async def test_tools_come_back_exactly_as_sent_even_when_the_sdk_would_refuse_them(
    tmp_path: Path,
) -> None:
    tools: list[dict[str, Any]] = [
        {"name": "no_schema", "description": "Sends no inputSchema.", "x-vendor": {"kept": 1}},
        {
            "name": "odd_schema",
            "title": "Odd schema",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "strnig"}},
                "required": 7,
            },
            "annotations": {"readOnlyHint": True, "vendorHint": "yes"},
            "outputSchema": None,
        },
    ]
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(tools), encoding="utf-8")
    async with open_session(raw_server("raw", str(tools_file)), timeout=10) as up:
        assert up.initialize_result.server_info.name == "raw-server"
        assert up.initialize_result.instructions == "Hand-written for tests."
        listed = await list_tools_raw(up)
        assert "raw_server starting in mode raw" in up.stderr_tail()
    assert listed == tools


async def test_paged_tools_list_is_followed_to_the_end() -> None:
    async with open_session(paging_server(total=25, page=10), timeout=10) as up:
        tools = await list_tools_raw(up)
    assert [t["name"] for t in tools] == [f"tool_{i:03d}" for i in range(25)]
    first = tools[0]
    assert first["inputSchema"] == {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert first["title"] == "Tool number 0"
    assert first["annotations"]["readOnlyHint"] is True


async def test_a_single_page_without_cursor_is_listed() -> None:
    async with open_session(paging_server(total=3, page=10), timeout=10) as up:
        assert len(await list_tools_raw(up.session)) == 3


async def test_errors_raised_in_the_body_propagate_unchanged(no_leftover_children: None) -> None:
    with pytest.raises(LookupError, match="from the body"):
        async with open_session(paging_server(total=1, page=1), timeout=10):
            raise LookupError("from the body")


async def test_cancelling_a_live_session_still_reaps_the_child(no_leftover_children: None) -> None:
    with anyio.CancelScope() as scope:
        async with open_session(paging_server(total=1, page=1), timeout=10) as up:
            assert len(await list_tools_raw(up)) == 1
            scope.cancel()
            await anyio.sleep_forever()  # a checkpoint: the cancellation lands here
    assert scope.cancelled_caught


async def test_a_session_serves_many_requests_in_a_row() -> None:
    async with open_session(paging_server(total=7, page=3), timeout=10) as up:
        first = await list_tools_raw(up)
        second = await list_tools_raw(up)
        await up.session.send_ping()
    assert first == second and len(first) == 7


async def test_cancelling_during_start_up_propagates_and_reaps(no_leftover_children: None) -> None:
    outcome: list[str] = []

    async def start() -> None:
        try:
            async with open_session(raw_server("hang"), timeout=60):
                outcome.append("yielded")
        except UpstreamError as exc:  # must not happen: the cancel is ours, not the upstream's
            outcome.append(f"reported {exc}")

    async with anyio.create_task_group() as tg:
        tg.start_soon(start)
        await anyio.wait_all_tasks_blocked()  # the session now waits for initialize's answer
        tg.cancel_scope.cancel()
    assert outcome == []


async def test_a_snapshot_records_the_listings_an_upstream_answers_and_skips_the_rest(
    no_leftover_children: None, tmp_path: Path
) -> None:
    from cartograph.upstream.connect import snapshot_server

    snap = await snapshot_server(raw_server("listings"), timeout=15)
    assert [t["name"] for t in snap.tools] == ["ping"]
    assert snap.prompts is None  # answered without a list: recorded as absent
    assert snap.resources is None  # refused (-32601)
    assert snap.resource_templates == [{"uriTemplate": "raw://doc/{id}", "name": "doc"}]
    assert snap.listings() == {
        "prompts": [],
        "resources": [],
        "resourceTemplates": [{"uriTemplate": "raw://doc/{id}", "name": "doc"}],
    }
    tools_file = tmp_path / "tools.json"
    tools_file.write_text('[{"name": "t", "inputSchema": {}}]', encoding="utf-8")
    plain = await snapshot_server(raw_server("raw", str(tools_file)), timeout=15)
    assert plain.listings() is None and "prompts" not in plain.to_json()
