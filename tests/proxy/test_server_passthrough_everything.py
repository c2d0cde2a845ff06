"""``call`` through the proxy against the real ``everything`` server of the example fleet: its
results (images, resource links, embedded resources, annotated content, structuredContent, tool
errors) arrive as a direct client reads them; its long-running operation's progress reaches the
agent; discover shows the signed output schema and annotations (needs scripts/install-fleet.sh).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from proxykit import Env, call, connected, data, sign_server, text

from cartograph.config import load_config
from cartograph.upstream.connect import open_session
from cartograph.upstream.snapshot import ServerSnapshot

pytestmark = [pytest.mark.anyio, pytest.mark.fleet]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get-structured-content", {"location": "Chicago"}),
    ("get-tiny-image", {}),
    ("get-resource-links", {"count": 3}),
    ("get-resource-reference", {"resourceType": "Blob", "resourceId": 2}),
    ("get-annotated-message", {"messageType": "error", "includeImage": True}),
    ("get-resource-reference", {"resourceId": -1}),  # the server's own tool error
]


def wire(result: Any) -> dict[str, Any]:
    """The result as written on the wire, a dynamic resource's data left out (it holds the
    time it was made)."""
    doc = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    for block in doc["content"]:
        if block["type"] == "resource" and "/dynamic/" in block["resource"]["uri"]:
            block["resource"].pop("blob", None)
            block["resource"].pop("text", None)
    return doc


async def test_results_of_every_kind_arrive_as_a_direct_client_reads_them(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    async with connected(env.proxy(example_config)) as client:
        proxied = [await call(client, "everything", tool, args) for tool, args in CALLS]
    config = load_config(example_config).servers["everything"]
    with anyio.fail_after(60):
        async with open_session(config) as upstream:
            straight = [await upstream.session.call_tool(t, a) for t, a in CALLS]
    assert [wire(p) for p in proxied] == [wire(s) for s in straight]
    weather, image, links, blob, annotated, failed = proxied
    assert weather.structured_content == {
        "temperature": 36,
        "conditions": "Light rain / drizzle",
        "humidity": 82,
    }
    assert [b.type for b in image.content] == ["text", "image", "text"]
    assert [b.type for b in links.content] == ["text"] + ["resource_link"] * 3
    assert [b.type for b in blob.content] == ["text", "resource", "text"]
    embedded = blob.content[1]
    assert isinstance(embedded, types.EmbeddedResource)
    assert isinstance(embedded.resource, types.BlobResourceContents)
    assert base64.b64decode(embedded.resource.blob).startswith(b"Resource 2: This is a base64 blob")
    assert all(b.annotations is not None for b in annotated.content)
    assert failed.is_error is True and "resourceId" in text(failed)
    assert not any(r.is_error for r in proxied[:-1])


async def test_the_long_running_operations_progress_reaches_the_agent(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    heard: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, _message: str | None) -> None:
        heard.append((done, total))

    arguments = {"duration": 0.4, "steps": 4}
    async with connected(env.proxy(example_config)) as client:
        with anyio.fail_after(60):
            result = await client.call_tool(
                "call",
                {
                    "server": "everything",
                    "tool": "trigger-long-running-operation",
                    "arguments": arguments,
                },
                progress_callback=progress,
            )
    assert "Long running operation completed" in text(result), text(result)
    assert heard == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]


async def test_discover_shows_the_signed_output_schema_and_annotations(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    live = next(t for t in everything.tools if t["name"] == "get-structured-content")
    async with connected(env.proxy(example_config)) as client:
        with anyio.fail_after(60):
            answer = data(
                await client.call_tool("discover", {"task": "structured weather content", "k": 20})
            )
    tools = {t["tool"]: t for t in answer["tools"]}
    weather = tools["get-structured-content"]
    expected = {k: v for k, v in live["outputSchema"].items() if k != "$schema"}
    assert weather["output_schema"] == expected
    assert weather["annotations"] == {
        "title": "Get Structured Content Tool",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert "output_schema" not in tools["get-tiny-image"]  # it has none
