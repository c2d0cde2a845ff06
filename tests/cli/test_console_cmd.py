"""`cartograph console`: the console alone, over a copy of the golden workspace, as a process.

It never reaches an upstream: the servers page shows what the replicas published, and the
configured servers' sessions as not started here."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from accesskit import CARTOGRAPH, stop
from consolekit import Console, login
from proxykit import copy_workspace

from cartograph.storage.health import FileHealthBoard


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CARTOGRAPH, "--home", str(home), *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def standalone(golden_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    ws = copy_workspace(golden_home, tmp_path_factory.mktemp("standalone") / "home")
    added = _cli(ws.root, "clients", "add", "ops", "--json")
    assert added.returncode == 0, added.stderr
    proc = subprocess.Popen(
        [CARTOGRAPH, "--home", str(ws.root), "console", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    url = next((ln.rsplit(" ", 1)[1].strip() for ln in proc.stderr if "console at " in ln), None)
    assert url, "cartograph console did not report its URL"
    try:
        yield Console(
            url.removesuffix("/console"), {"ops": json.loads(added.stdout)["key"]}, ws.root
        )
    finally:
        assert "Traceback" not in stop(proc)
        assert proc.returncode == 0


def test_it_serves_the_console_and_nothing_else(standalone: Console) -> None:
    root = httpx.get(standalone.base + "/", timeout=30)
    assert root.status_code == 303 and root.headers["location"] == "/console"
    mcp = httpx.post(standalone.base + "/mcp", json={}, timeout=30)
    assert mcp.status_code == 404 and "the console is at /console" in mcp.text
    assert httpx.get(standalone.base + "/console", timeout=30).headers["location"] == (
        "/console/login"
    )


def test_its_servers_page_shows_the_replicas_not_its_own_sessions(standalone: Console) -> None:
    board = FileHealthBoard(standalone.home / "replicas")
    board.publish("replica-a:11", {"state": "serving", "endpoint": "http://a:8765/mcp",
                                   "servers": [{"server": "chaos", "tools": 9,
                                                "sessions": ["ready"], "crashes": 0}]})  # fmt: skip
    page = login(standalone, standalone.keys["ops"]).get("/console").text
    assert all(f'href="/console/servers/{s}"' in page for s in ("chaos", "calm", "crashy"))
    assert "replica-a:11" in page and "http://a:8765/mcp" in page and "1 of 1" in page
    mine = sorted(p.name for p in (standalone.home / "replicas").iterdir())
    assert mine == ["replica-a_11.json"]  # the console publishes no record of its own


def test_a_discover_from_the_console_ranks_the_shared_index(standalone: Console) -> None:
    client = login(standalone, standalone.keys["ops"])
    page = client.get("/console/discover", params={"task": "echo some text back", "k": 3})
    assert page.status_code == 200 and "chaos" in page.text


def test_jwt_logins_need_an_issuer_its_keys_and_an_audience(tmp_path: Path) -> None:
    half = _cli(tmp_path, "console", "--auth-issuer", "https://id.example")
    assert half.returncode == 2 and "--auth-issuer and --auth-jwks" in half.stderr
    jwks = tmp_path / "jwks.json"
    jwks.write_text('{"keys": []}', "utf-8")
    blind = _cli(
        tmp_path, "console", "--auth-issuer", "https://id.example", "--auth-jwks", str(jwks)
    )
    assert blind.returncode == 2 and "--auth-audience" in blind.stderr
