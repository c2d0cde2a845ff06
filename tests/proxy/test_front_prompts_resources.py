"""Upstream prompts, resources and resource templates through the proxy, against the real
``everything`` server of the example fleet: listed under server-qualified names with the
operator's text, got and read through the gateway, hidden by policy and by the drift guard,
audited (needs scripts/install-fleet.sh)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, MCPError, types
from mcp.client.streamable_http import streamable_http_client
from proxykit import Env, data, sign_server

from cartograph.access import Access, Caller, Policy
from cartograph.proxy.addresses import wrap_uri
from cartograph.proxy.core import Proxy
from cartograph.proxy.memory import session_on
from cartograph.proxy.server import build_server
from cartograph.storage.file_state import FileAuditLog as AuditLog
from cartograph.upstream.snapshot import ServerSnapshot

pytestmark = [pytest.mark.anyio, pytest.mark.fleet]

DOC = "demo://resource/static/document/architecture.md"
CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))


@asynccontextmanager
async def client_of(proxy: Proxy, caller: Caller | None = None) -> AsyncIterator[ClientSession]:
    access = Access() if caller is not None else None
    server = build_server(proxy, access, caller)
    async with proxy.running(), session_on(server) as client:
        yield client


def audit(env: Env) -> list[dict[str, Any]]:
    return AuditLog(env.ws.logs_dir / "audit.jsonl").read()


async def refused(request: Any) -> str:
    with pytest.raises(MCPError) as caught:
        with anyio.fail_after(60):
            await request
    return caught.value.error.message


async def test_prompts_and_resources_are_listed_got_and_read_under_qualified_names(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    async with client_of(env.proxy(example_config)) as client:
        with anyio.fail_after(60):
            init_caps = client.server_capabilities
            prompts = (await client.list_prompts()).prompts
            resources = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
            got = await client.get_prompt("everything.args-prompt", {"city": "Lisbon"})
            read = await client.read_resource(wrap_uri("everything", DOC))  # pyright: ignore[reportArgumentType]
            dynamic = next(t for t in templates if "dynamic%2Ftext" in t.uri_template)
            expanded = dynamic.uri_template.replace("{resourceId}", "7")
            read_dyn = await client.read_resource(expanded)  # pyright: ignore[reportArgumentType]
            status = data(await client.call_tool("status", {}))
    assert init_caps is not None and init_caps.prompts is not None
    assert init_caps.resources is not None
    by_name = {p.name: p for p in prompts}
    assert {"everything.simple-prompt", "everything.args-prompt"} <= set(by_name)
    args = by_name["everything.args-prompt"]
    assert [(a.name, a.required) for a in args.arguments or []] == [
        ("city", True),
        ("state", False),
    ]
    publisher = {str(p.get("description")) for p in everything.prompts or []}
    publisher |= {str(r.get("description")) for r in everything.resources or []}
    shown = [p.description for p in prompts] + [r.description for r in resources]
    assert shown and not publisher & set(shown)  # the operator's text, never the publisher's
    assert str(resources[0].uri).startswith("cartograph://everything/demo%3A%2F%2F")
    assert len(resources) == len(everything.resources or [])
    assert "Lisbon" in json.dumps(got.model_dump(mode="json"))  # the messages, as data
    doc = read.contents[0]
    assert isinstance(doc, types.TextResourceContents) and "Everything" in doc.text
    assert str(doc.uri) == wrap_uri("everything", DOC)
    assert isinstance(read_dyn.contents[0], types.TextResourceContents)
    assert "7" in read_dyn.contents[0].text
    row = next(r for r in status["servers"] if r["server"] == "everything")
    assert row["prompts"] == len(prompts)
    assert row["resources"] == len(resources) + len(templates)
    events = [e for e in audit(env) if e["event"] in ("prompt", "resource")]
    assert [(e["event"], e["server"], e["outcome"]) for e in events] == [
        ("prompt", "everything", "ok"),
        ("resource", "everything", "ok"),
        ("resource", "everything", "ok"),
    ]
    assert events[1]["upstream_uri"] == DOC
    assert events[2]["upstream_uri"] == "demo://resource/dynamic/text/7"


async def test_bad_names_get_errors_that_name_the_server_and_the_prompt(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    async with client_of(env.proxy(example_config)) as client:
        no_prompt = await refused(client.get_prompt("everything.no-such-prompt"))
        no_server = await refused(client.get_prompt("nowhere.simple-prompt"))
        missing = await refused(client.get_prompt("everything.args-prompt", {"state": "x"}))
        foreign = await refused(client.read_resource("demo://resource/x"))  # pyright: ignore[reportArgumentType]
        unknown = await refused(
            client.read_resource(wrap_uri("everything", "demo://nothing/here"))  # pyright: ignore[reportArgumentType]
        )
    assert "server 'everything' has no prompt 'no-such-prompt'" in no_prompt
    assert "args-prompt" in no_prompt  # what it does have
    assert "<server>.<prompt>" in no_server and "everything" in no_server
    assert "'everything.args-prompt' needs the argument(s) city" in missing
    assert "cartograph://<server>/" in foreign
    assert "server 'everything' has no resource 'demo://nothing/here'" in unknown
    refusals = [e for e in audit(env) if e["event"] in ("prompt", "resource")]
    assert len(refusals) == 5 and all(e["outcome"] != "ok" for e in refusals)


async def test_a_client_policy_hides_prompts_and_resources_of_servers_it_may_not_use(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    proxy = env.proxy(example_config)
    denied = Caller("no-everything", Policy(deny=("everything",)))
    one = Caller("one-prompt", Policy(allow=("everything.simple-prompt", "time")))
    async with client_of(proxy, denied) as client:
        with anyio.fail_after(60):
            prompts = (await client.list_prompts()).prompts
            resources = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
        hidden_get = await refused(client.get_prompt("everything.simple-prompt"))
        hidden_read = await refused(client.read_resource(wrap_uri("everything", DOC)))  # pyright: ignore[reportArgumentType]
    async with client_of(proxy, one) as client:
        with anyio.fail_after(60):
            only = [p.name for p in (await client.list_prompts()).prompts]
        other = await refused(client.get_prompt("everything.args-prompt", {"city": "x"}))
    assert not [p for p in prompts if p.name.startswith("everything.")]
    assert not resources and not templates
    assert "for you" in hidden_get and "args-prompt" not in hidden_get
    assert "for you" in hidden_read
    assert only == ["everything.simple-prompt"]
    assert "for you" in other
    clients = {e["client"] for e in audit(env) if e["event"] in ("prompt", "resource")}
    assert clients == {"no-everything", "one-prompt"}


async def test_drifted_or_unsigned_prompts_and_resources_are_quarantined_and_hidden(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    recorded = copy.deepcopy(everything)
    prompts = recorded.prompts or []
    resources = recorded.resources or []
    next(p for p in prompts if p["name"] == "args-prompt")["description"] = "Something else."
    dropped = resources.pop()  # the live server has it, the card will not
    sign_server(env, recorded)
    async with client_of(env.proxy(example_config)) as client:
        with anyio.fail_after(60):
            before = [p.name for p in (await client.list_prompts()).prompts]
            await client.get_prompt("everything.simple-prompt")  # starts the session: drift check
            after = [p.name for p in (await client.list_prompts()).prompts]
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
        held = await refused(client.get_prompt("everything.args-prompt", {"city": "x"}))
        unsigned = await refused(
            client.read_resource(wrap_uri("everything", dropped["uri"]))  # pyright: ignore[reportArgumentType]
        )
    assert "everything.args-prompt" in before and "everything.args-prompt" not in after
    assert "everything.simple-prompt" in after
    assert wrap_uri("everything", dropped["uri"]) not in listed and len(listed) == len(resources)
    assert "quarantined by the drift guard" in held and "description changed" in held
    assert "has no resource" in unsigned
    quarantined = {e["tool"] for e in audit(env) if e["event"] == "quarantined"}
    assert quarantined == {"prompt:args-prompt", f"resource:{dropped['uri']}"}


async def test_a_subscription_hears_the_upstreams_updates_under_the_wrapped_uri(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    heard: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message, types.ResourceUpdatedNotification
        ):
            heard.append(str(message.params.uri))
            got.set()

    proxy = env.proxy(example_config)
    wrapped = wrap_uri("everything", DOC)
    async with (
        proxy.running(),
        session_on(build_server(proxy), message_handler=on_message) as client,
    ):
        with anyio.fail_after(60):
            caps = client.server_capabilities
            await client.subscribe_resource(wrapped)  # pyright: ignore[reportArgumentType]
            # the everything server sends an update for each subscribed resource at once
            await client.call_tool(
                "call", {"server": "everything", "tool": "toggle-subscriber-updates"}
            )
            await got.wait()
            await client.unsubscribe_resource(wrapped)  # pyright: ignore[reportArgumentType]
            remaining = proxy.subscriptions.count()
    assert caps is not None and caps.resources is not None and caps.resources.subscribe
    assert heard and set(heard) == {wrapped}
    assert remaining == 0
    subscribed = [e for e in audit(env) if e["event"] == "subscribe"]
    assert [(e["server"], e["upstream_uri"]) for e in subscribed] == [("everything", DOC)]


async def test_one_shot_mode_does_not_offer_subscriptions(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    async with client_of(env.proxy(example_config, mode="one-shot")) as client:
        caps = client.server_capabilities
        why = await refused(client.subscribe_resource(wrap_uri("everything", DOC)))  # pyright: ignore[reportArgumentType]
        with anyio.fail_after(60):
            read = await client.read_resource(wrap_uri("everything", DOC))  # pyright: ignore[reportArgumentType]
    assert caps is not None and caps.resources is not None and not caps.resources.subscribe
    assert "pooled" in why
    assert read.contents  # reads work in one-shot mode, through a session of their own


async def test_cartograph_serve_over_http_answers_prompts_resources_and_subscriptions(
    env: Env, example_config: Path, everything: ServerSnapshot
) -> None:
    sign_server(env, everything)
    args = ["--home", str(env.ws.root), "serve", "--transport", "http", "--insecure-open"]
    args += ["--port", "0", "--config", str(example_config)]
    proc = subprocess.Popen([CARTOGRAPH, *args], stderr=subprocess.PIPE, text=True)
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message, types.ResourceUpdatedNotification
        ):
            heard.set()

    try:
        url = _served_url(proc)
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write, message_handler=on_message) as client,
        ):
            with anyio.fail_after(60):
                await client.initialize()
                prompts = (await client.list_prompts()).prompts
                got = await client.get_prompt("everything.args-prompt", {"city": "Porto"})
                doc = await client.read_resource(wrap_uri("everything", DOC))  # pyright: ignore[reportArgumentType]
                await client.subscribe_resource(wrap_uri("everything", DOC))  # pyright: ignore[reportArgumentType]
                await client.call_tool(
                    "call", {"server": "everything", "tool": "toggle-subscriber-updates"}
                )
                await heard.wait()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        assert proc.stderr is not None
        proc.stderr.close()
    assert "everything.args-prompt" in {p.name for p in prompts}
    assert "Porto" in json.dumps(got.model_dump(mode="json"))
    assert isinstance(doc.contents[0], types.TextResourceContents)


def _served_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "serving MCP at " in line:
            return line.rsplit(" ", 1)[1].strip()
    raise AssertionError("serve did not start: " + "".join(seen))
