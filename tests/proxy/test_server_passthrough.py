"""What ``call`` returns is the upstream's result, whole: content of every type (text with
annotations, image, audio, resource link, embedded text and blob resources), structuredContent,
isError and _meta, as a direct client of the upstream reads them; large results too, up to the
reply limit. Progress reaches an agent that asked for it; an agent's cancellation reaches the
upstream. Against our chaos upstream (tests/gateway/servers/chaos.py) and a real SDK client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from proxykit import CHAOS, FAST, Env, call, chaos_entry, connected, text

from cartograph.gateway.base import Limits
from cartograph.storage.file_state import FileAuditLog as AuditLog

pytestmark = pytest.mark.anyio


def wire(result: types.CallToolResult) -> dict[str, Any]:
    """The result as the SDK writes it on the wire."""
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def direct(env: Env, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """The same call made straight to a chaos upstream, with no proxy between."""
    entry = chaos_entry()
    state = str(env.config_dir / "chaos-state.json")
    params = StdioServerParameters(command=entry["command"], args=[str(CHAOS)])
    params.env = {"CHAOS_STATE": state, "PATH": "/usr/bin:/bin"}
    with anyio.fail_after(60):
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool(tool, arguments)


async def test_every_content_type_structured_content_and_meta_pass_through_unchanged(
    env: Env,
) -> None:
    async with connected(env.proxy()) as client:
        proxied = await call(client, "chaos", "mixed", {})
        failed = await call(client, "chaos", "mixed", {"fail": True})
    straight = await direct(env, "mixed", {})
    assert wire(proxied) == wire(straight)
    kinds = [type(block).__name__ for block in proxied.content]
    assert kinds == [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
        "EmbeddedResource",
    ]
    first = proxied.content[0]
    assert isinstance(first, types.TextContent) and first.annotations is not None
    assert first.annotations.priority == 0.5 and first.annotations.audience == ["user"]
    assert proxied.structured_content == {"answer": 42, "nothing": None, "list": [1, "two", None]}
    assert proxied.meta == {"io.chaos/trace": "t-1"}
    assert proxied.is_error is False
    # an upstream's tool error is the upstream's result too: isError and everything else kept
    assert failed.is_error is True
    assert wire(failed)["content"] == wire(straight)["content"]
    assert failed.structured_content == straight.structured_content


async def test_a_typed_tools_structured_result_passes_without_the_sdk_checking_it(
    env: Env,
) -> None:
    """FastMCP gives ``add`` an outputSchema; the proxy's ``call`` has none, so nothing on the
    way re-validates (or drops) the structured result."""
    async with connected(env.proxy()) as client:
        result = await call(client, "chaos", "add", {"a": 2, "b": 3})
    assert result.is_error is False, text(result)
    assert result.structured_content == {"result": 5}
    assert text(result) == "5"


async def test_a_large_result_passes_whole_and_one_over_the_limit_is_refused_clearly(
    env: Env,
) -> None:
    async with connected(env.proxy()) as client:
        large = await call(client, "chaos", "mixed", {"audio_kb": 3000})
    audio = large.content[2]
    assert isinstance(audio, types.AudioContent) and len(audio.data) == 6 + 3000 * 1024
    assert large.structured_content is not None and large.is_error is False
    small = Limits(**{**FAST.__dict__, "max_result_bytes": 1_000_000})
    async with connected(env.proxy(limits=small)) as client:
        refused = await call(client, "chaos", "mixed", {"audio_kb": 3000})
    assert refused.is_error is True
    message = text(refused)
    assert "upstream 'chaos'" in message
    assert "the reply is 3.1 MB, over the proxy's 1.0 MB limit; ask for less" in message


async def test_progress_of_the_upstream_reaches_the_agent_under_its_own_token(env: Env) -> None:
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, total, message))

    async with connected(env.proxy()) as client:
        with anyio.fail_after(60):
            result = await client.call_tool(
                "call",
                {"server": "chaos", "tool": "steps", "arguments": {"n": 3}},
                progress_callback=progress,
            )
            quiet = await call(client, "chaos", "steps", {"n": 2})  # no token: no progress
    assert text(result) == "did 3 steps" and text(quiet) == "did 2 steps"
    assert heard == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]


async def wait_for(path: Path, content: str) -> None:
    with anyio.fail_after(30):
        while not path.exists() or path.read_text(encoding="utf-8") != content:
            await anyio.sleep(0.05)


async def test_an_agents_cancellation_reaches_the_upstream(env: Env) -> None:
    """The agent gives up on a call (its scope cancelled: the SDK 2 client sends
    notifications/cancelled for the request); the upstream's handler is cancelled too."""
    marker = env.config_dir / "linger.txt"
    proxy = env.proxy()
    async with connected(proxy) as client:
        arguments = {"marker": str(marker)}
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, client, "chaos", "linger", arguments)
            await wait_for(marker, "started")
            tg.cancel_scope.cancel()  # the agent changed its mind
        await wait_for(marker, "cancelled")  # the upstream's handler was cancelled
        after = await call(client, "chaos", "echo", {"text": "still here"})
    assert text(after) == "still here"  # the pooled session lives on
    calls = [e for e in AuditLog(env.ws.logs_dir / "audit.jsonl").read() if e["event"] == "call"]
    assert [(e["tool"], e["outcome"]) for e in calls] == [("linger", "cancelled"), ("echo", "ok")]
