"""Test kit for the proxy and gateway: real workspaces with signed cards of our chaos upstream.

Cards are produced by the real pipeline (live snapshot with ``snapshot_servers``, the bootstrap
generator, Ed25519 sealing). A golden workspace is built once per session and copied per test,
because quarantine state and audit logs live in the workspace.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, types
from sdk1 import sdk1_python

from cartograph.config import load_config
from cartograph.gateway.base import Limits
from cartograph.generate.attest import attest_snapshot
from cartograph.proxy.app import build_proxy
from cartograph.proxy.core import Proxy
from cartograph.proxy.memory import session_on
from cartograph.proxy.server import build_server
from cartograph.proxy.settings import ServeSettings
from cartograph.storage import open_store
from cartograph.trust.keys import load_key
from cartograph.trust.lifecycle import init_key
from cartograph.upstream.connect import snapshot_servers
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot
from cartograph.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
CHAOS = REPO / "tests" / "gateway" / "servers" / "chaos.py"
CRASHY = REPO / "tests" / "gateway" / "servers" / "crashy.py"
FAST = Limits(
    call_timeout=10.0,
    start_timeout=10.0,
    list_timeout=5.0,
    backoff_base=0.0,
    backoff_cap=0.0,
)


def chaos_entry(*, env: dict[str, str] | None = None, transport: str = "stdio") -> dict[str, Any]:
    base_env = {"CHAOS_STATE": "${configDir}/chaos-state.json"}
    return {
        "command": sdk1_python(),
        "args": [str(CHAOS)] + ([] if transport == "stdio" else [transport]),
        "env": {**base_env, **(env or {})},
    }


def crashy_entry() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-S", str(CRASHY)]}


def write_config(directory: Path, servers: dict[str, dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=1), encoding="utf-8")
    return path


async def attest(home: Path, config: Path, servers: list[str] | None = None) -> Workspace:
    """Snapshot the config's servers live and write signed cards into ``home``."""
    ws = Workspace(home).ensure()
    key = init_key(ws) if not ws.private_key.exists() else None
    if key is None:
        from cartograph.trust.keys import load_key

        key = load_key(ws)
    fleet = load_config(config)
    chosen = {n: c for n, c in fleet.servers.items() if servers is None or n in servers}
    outcome = await snapshot_servers(chosen, timeout=30)
    assert not outcome.failures, outcome.failures
    result = attest_snapshot(ws, outcome.snapshot, key, store=open_store(ws))
    assert not result.failed, result.failed
    return ws


def copy_workspace(golden: Path, target: Path) -> Workspace:
    shutil.copytree(golden, target)
    return Workspace(target)


def make_proxy(
    ws: Workspace,
    config: Path,
    *,
    mode: str = "pooled",
    limits: Limits = FAST,
    per_client: frozenset[str] = frozenset(),
    opener: Any = None,
) -> Proxy:
    """The proxy `cartograph serve` would build (the app factory), with test limits."""
    settings = ServeSettings(config=str(config), mode=mode, per_client=per_client)
    return build_proxy(ws, settings, limits=limits, opener=opener)


@asynccontextmanager
async def connected(proxy: Proxy) -> AsyncIterator[ClientSession]:
    """A real SDK client connected (in memory) to the proxy's MCP server."""
    async with (
        proxy.running(),
        session_on(build_server(proxy)) as client,
    ):
        yield client


@asynccontextmanager
async def second_client(proxy: Proxy) -> AsyncIterator[ClientSession]:
    """Another client on the same (already running) proxy."""
    async with session_on(build_server(proxy)) as client:
        yield client


async def call(
    client: ClientSession, server: str, tool: str, arguments: dict[str, Any] | None = None
) -> types.CallToolResult:
    with anyio.fail_after(60):
        return await client.call_tool(
            "call", {"server": server, "tool": tool, "arguments": arguments or {}}
        )


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def data(result: types.CallToolResult) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


def start_http_upstream(transport: str) -> tuple[subprocess.Popen[str], int]:
    """Run chaos.py over streamable HTTP or SSE in a child process; returns it and its port."""
    proc = subprocess.Popen(
        [sdk1_python(), str(CHAOS), transport],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "PORT n" once it listens; blocks at most until it exits
    if not line.startswith("PORT "):
        proc.kill()
        proc.wait()
        raise RuntimeError(f"chaos {transport} server did not start: {line!r}")
    return proc, int(line.split()[1])


def stop_process(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


# -- fixtures (registered for every test by tests/conftest.py) -----------------------------------

import pytest  # noqa: E402


class Env:
    """One test's workspace (copied from the golden one) and its config directory."""

    def __init__(self, ws: Workspace, config_dir: Path) -> None:
        self.ws = ws
        self.config_dir = config_dir

    def config(self, **servers: dict[str, Any]) -> Path:
        """Write mcp.json with chaos and calm (defaults) plus/overridden by ``servers``."""
        entries = {
            "chaos": chaos_entry(),
            "calm": chaos_entry(),
            "crashy": crashy_entry(),
            **servers,
        }
        return write_config(self.config_dir, entries)

    def proxy(self, config: Path | None = None, **kwargs: Any) -> Proxy:
        return make_proxy(self.ws, config or self.config(), **kwargs)


@pytest.fixture(scope="session")
def golden_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("golden")
    cfg = write_config(
        base / "cfg", {"chaos": chaos_entry(), "calm": chaos_entry(), "crashy": crashy_entry()}
    )
    ws = anyio.run(attest, base / "home", cfg)
    from cartograph.storage import open_index

    open_index(ws)  # build once; copies reuse it
    return base / "home"


@pytest.fixture
def env(golden_home: Path, tmp_path: Path) -> Env:
    return Env(copy_workspace(golden_home, tmp_path / "home"), tmp_path / "cfg")


def sign_server(env: Env, server: ServerSnapshot) -> None:
    """Attest one recorded server into ``env``'s workspace with its operator key."""
    result = attest_snapshot(
        env.ws, Snapshot({server.name: server}), load_key(env.ws), store=open_store(env.ws)
    )
    assert not result.failed, result.failed


@pytest.fixture(scope="module")
def everything(example_config: Path) -> ServerSnapshot:
    """The example fleet's everything server as it answers now (tools, prompts, resources,
    templates), recorded once per test module."""
    fleet = load_config(example_config)
    outcome = anyio.run(lambda: snapshot_servers({"everything": fleet.servers["everything"]}))
    assert not outcome.failures, outcome.failures
    return outcome.snapshot.servers["everything"]
