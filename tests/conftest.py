"""Shared fixtures: the anyio backend, the example fleet (installed once), the example config.

Tests that need the installed fleet take the ``example_config`` (or ``fleet_dir``) fixture and
carry ``@pytest.mark.fleet``; the first such test in a session runs ``scripts/install-fleet.sh``,
which is idempotent and skips what is already installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_CONFIG = REPO / "examples" / "mcp.json"
INSTALL_SCRIPT = REPO / "scripts" / "install-fleet.sh"
TEST_SERVERS = REPO / "tests" / "upstream" / "servers"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def fleet_dir() -> Path:
    """``.fleet/`` with the example fleet installed (runs the install script once a session)."""
    result = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(
            f"scripts/install-fleet.sh failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return REPO / ".fleet"


@pytest.fixture(scope="session")
def example_config(fleet_dir: Path) -> Path:
    """The path of ``examples/mcp.json``, with its fleet installed."""
    assert fleet_dir.is_dir()
    return EXAMPLE_CONFIG


@pytest.fixture
def test_server_python() -> str:
    """The interpreter that runs our own test servers (the project venv has the SDK)."""
    return sys.executable


def child_pids(pid: int | None = None) -> set[int]:
    """Every live or zombie descendant of ``pid`` (default: this process), read from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name is in parentheses and may hold spaces; fields after it are fixed
        fields = stat.rsplit(")", 1)[1].split()
        parents[int(entry)] = int(fields[1])
    root = os.getpid() if pid is None else pid
    found: set[int] = set()
    frontier = [root]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in found:
                found.add(child)
                frontier.append(child)
    return found


@pytest.fixture
def no_leftover_children() -> Iterator[None]:
    """Fails the test if it leaves child processes (live or zombie) behind."""
    before = child_pids()
    yield
    leftover = child_pids() - before
    assert not leftover, f"child processes left behind: {sorted(leftover)}"
