"""Kit for console tests: a real `serve --transport http` over a copy of the golden workspace,
with a server whose publisher text carries a script tag (and two tools Rift finds confusable),
four clients (``ops`` may see all,
``narrow`` only ``calm``, ``boss`` may see all and act, ``warden`` may act but see only
``calm``), and a browser-like login."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from accesskit import CARTOGRAPH, start_serve, stop
from proxykit import chaos_entry, copy_workspace, write_config

EVIL = "<script>alert('owned')</script><b>bold</b>"
QUERY = {"type": "object", "properties": {"query": {"type": "string"}}}
TWINS = [  # two tools an agent could confuse: a Rift cluster with margins
    {"name": "search_issues", "description": "Search the issues of a repository.",
     "inputSchema": QUERY},
    {"name": "find_issues", "description": "Find issues in the repository.", "inputSchema": QUERY},
]  # fmt: skip


@dataclass
class Console:
    base: str
    keys: dict[str, str]
    home: Path
    config: Path | None = None
    pid: int = 0  # the serving process


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CARTOGRAPH, "--home", str(home), *args], capture_output=True, text=True, timeout=120
    )


def fleet_servers(fleet_config: Path, home: Path) -> dict[str, dict[str, object]]:
    """Bootstrap the servers of ``fleet_config`` (the example fleet) into ``home`` for real and
    return their entries, ``${configDir}`` resolved, for a config written elsewhere."""
    done = _cli(home, "bootstrap", "--config", str(fleet_config))
    assert done.returncode == 0, done.stderr
    text = fleet_config.read_text(encoding="utf-8")
    text = text.replace("${configDir}", str(fleet_config.resolve().parent))
    return json.loads(text)["mcpServers"]


@contextmanager
def serve_console(golden_home: Path, base: Path, fleet: Path | None = None) -> Iterator[Console]:
    """Serve it until the block ends; with ``fleet`` (examples/mcp.json, installed), its servers
    are bootstrapped live and served beside the test servers."""
    ws = copy_workspace(golden_home, base / "home")
    snap = {
        "evil": {
            "tools": [
                {
                    "name": "peek",
                    "description": EVIL,
                    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
                *TWINS,
            ]
        }
    }
    (base / "evil.json").write_text(json.dumps(snap), encoding="utf-8")
    done = _cli(ws.root, "bootstrap", "--from-snapshot", str(base / "evil.json"))
    assert done.returncode == 0, done.stderr
    servers = {"chaos": chaos_entry(), "calm": chaos_entry(), "evil": chaos_entry()}
    if fleet is not None:
        servers |= fleet_servers(fleet, ws.root)
    config = write_config(base / "cfg", servers)
    keys = {}
    clients = {
        "ops": [],
        "narrow": ["--allow", "calm.*"],
        "boss": ["--admin"],
        "warden": ["--admin", "--allow", "calm.*"],
    }
    for name, options in clients.items():
        added = _cli(ws.root, "clients", "add", name, *options, "--json")
        assert added.returncode == 0, added.stderr
        keys[name] = json.loads(added.stdout)["key"]
    proc, url = start_serve(ws.root, ["--config", str(config)])
    try:
        yield Console(url.rsplit("/", 1)[0], keys, ws.root, config, proc.pid)
    finally:
        stop(proc)


def login_form(client: httpx.Client) -> str:
    """The login form's CSRF token (the form also sets its cookie on ``client``)."""
    form = client.get("/console/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert form.status_code == 200 and csrf
    return csrf[1]


def login(console: Console, key: str) -> httpx.Client:
    """A browser-like client, logged in (cookies kept)."""
    client = httpx.Client(base_url=console.base, timeout=60)
    done = client.post("/console/login", data={"token": key, "csrf": login_form(client)})
    assert done.status_code == 303 and done.headers["location"] == "/console", done.text
    return client
