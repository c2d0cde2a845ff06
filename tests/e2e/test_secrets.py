"""Upstream credentials reach only their upstream, and never an artefact, a log or an error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from accesskit import cli, session, start_serve, stop
from mcp import ClientSession, types
from proxykit import (
    attest,
    chaos_entry,
    start_http_upstream,
    stop_process,
    write_config,
)
from sdk1 import sdk1_python

from cartograph.transport.streams import stdio_transport

pytestmark = pytest.mark.anyio

ENVDUMP = Path(__file__).resolve().parents[1] / "access" / "servers" / "envdump.py"
SECRETS = {
    "env": "s3cr3t-ENV-7f1c9a",
    "header": "s3cr3t-HDR-4b2e0d",
    "proxy": "s3cr3t-PROXY-9d8c7b",
    "broken": "s3cr3t-BROKEN-1a2b3c",
    "args": "sk-s3cr3t-ARGS-5e6f7a",  # a literal secret in args: no pattern can spot it
}


async def test_child_gets_a_minimal_environment_plus_its_own_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CARTOGRAPH_PROXY_ONLY_SECRET", SECRETS["proxy"])
    with (tmp_path / "err.log").open("w") as errlog:
        async with (
            stdio_transport(sdk1_python(), [str(ENVDUMP)], {"MY_TOKEN": "x"}, None, errlog) as (
                read,
                write,
            ),
            ClientSession(read, write) as client,
        ):
            with anyio.fail_after(60):
                await client.initialize()
                result = await client.call_tool("env_names", {})
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    names = set(block.text.split(","))
    assert "MY_TOKEN" in names and "PATH" in names
    assert "CARTOGRAPH_PROXY_ONLY_SECRET" not in names
    allowed = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "MY_TOKEN"}
    assert names - allowed <= {"LC_CTYPE", "PWD", "SHLVL", "_"}, names - allowed


def _with_args(entry: dict[str, Any], extra: list[str]) -> dict[str, Any]:
    return {**entry, "args": [*entry["args"], *extra]}


def _everything_under(root: Path) -> str:
    texts = []
    for path in root.rglob("*"):
        if path.is_file() and path.name != "mcp.json":
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


async def test_secrets_never_reach_artefacts_logs_or_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARTOGRAPH_PROXY_ONLY_SECRET", SECRETS["proxy"])
    upstream, port = start_http_upstream("http")
    try:
        config = write_config(
            tmp_path / "cfg",
            {
                "local": _with_args(
                    chaos_entry(env={"CHAOS_TOKEN": SECRETS["env"]}),
                    ["--user-agent", SECRETS["args"]],
                ),
                "remote": {
                    "url": f"http://127.0.0.1:{port}/mcp",
                    "headers": {"Authorization": f"Bearer {SECRETS['header']}"},
                },
                "broken": {
                    "command": str(tmp_path / "no-such-server"),
                    "env": {"BROKEN_TOKEN": SECRETS["broken"]},
                },
            },
        )
        home = tmp_path / "home"
        await attest(home, config, ["local", "remote"])
        added = cli(home, "clients", "add", "agent", "--json")
        assert added.returncode == 0
        key = added.stdout.split('"key": "')[1].split('"')[0]
        proc, url = start_serve(home, ["--config", str(config)], verbose=True)
        seen: list[str] = []
        try:
            async with session(url, key) as client:
                for task in ("add two numbers", "echo text"):
                    seen.append(str(await client.call_tool("discover", {"task": task})))
                for server in ("local", "remote"):
                    args = {"server": server, "tool": "add", "arguments": {"a": 1, "b": 2}}
                    ok = await client.call_tool("call", args)
                    assert not ok.is_error, ok
                    seen.append(str(ok))
                    wrong = {"server": server, "tool": "add", "arguments": {"a": "x"}}
                    seen.append(str(await client.call_tool("call", wrong)))
                failing = {"server": "local", "tool": "crash", "arguments": {}}
                seen.append(str(await client.call_tool("call", failing)))
                broken = {"server": "broken", "tool": "x", "arguments": {}}
                seen.append(str(await client.call_tool("call", broken)))
                seen.append(str(await client.call_tool("status", {})))
        finally:
            logs = stop(proc)
    finally:
        stop_process(upstream)
    haystack = "\n".join([_everything_under(home), logs, *seen])
    assert "discover" in _everything_under(home / "logs")  # the audit log was written
    for name, secret in SECRETS.items():
        assert secret not in haystack, f"{name} secret leaked"
    assert os.environ["CARTOGRAPH_PROXY_ONLY_SECRET"] == SECRETS["proxy"]
