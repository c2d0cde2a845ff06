"""The example fleet's locks pin what examples/mcp.json starts; the install script is idempotent."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOCKS = REPO / "examples" / "fleet"
NPM_SERVERS = ["everything", "filesystem", "memory", "sequential-thinking"]
PY_SERVERS = ["fetch", "git", "sqlite", "time"]


def test_npm_lock_pins_each_server_exactly_and_once() -> None:
    package = json.loads((LOCKS / "npm" / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((LOCKS / "npm" / "package-lock.json").read_text(encoding="utf-8"))
    deps = package["dependencies"]
    assert sorted(deps) == [f"@modelcontextprotocol/server-{s}" for s in NPM_SERVERS]
    assert lock["packages"][""]["dependencies"] == deps
    for name, wanted in deps.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", wanted), f"{name} is not pinned exactly: {wanted}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == wanted
    for path, entry in lock["packages"].items():
        if path:
            assert entry.get("integrity") or entry.get("link"), path  # hashes pin the bytes


def test_python_locks_pin_every_package_and_sqlite_keeps_mcp_below_2() -> None:
    for server in PY_SERVERS:
        lines = (LOCKS / "py" / f"mcp-server-{server}.txt").read_text(encoding="utf-8").split()
        pins = dict(line.split("==", 1) for line in lines if not line.startswith("#"))
        assert f"mcp-server-{server}" in pins
        assert all(re.fullmatch(r"[\w.+!-]+", v) for v in pins.values()), server
        if server == "sqlite":
            assert int(pins["mcp"].split(".")[0]) < 2


def test_example_config_starts_only_what_the_locks_install() -> None:
    config = json.loads((REPO / "examples" / "mcp.json").read_text(encoding="utf-8"))
    text = json.dumps(config)
    for server in NPM_SERVERS:
        assert f"/.fleet/npm/node_modules/@modelcontextprotocol/server-{server}/" in text
    for server in PY_SERVERS:
        assert f"/.fleet/py/mcp-server-{server}/bin/mcp-server-{server}" in text
    assert "/.venv/" not in text  # never the project venv


@pytest.mark.fleet
def test_install_script_skips_what_is_installed(fleet_dir: Path) -> None:
    again = subprocess.run(
        ["bash", str(REPO / "scripts" / "install-fleet.sh")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert again.stdout.count("up to date") == 1 + len(PY_SERVERS), again.stdout
    assert "installed in" not in again.stdout
    assert (fleet_dir / "data" / "repo" / ".git").is_dir()
    assert (fleet_dir / "data" / "test.db").is_file()
