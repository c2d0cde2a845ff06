"""Shared fixtures: the anyio backend, the example fleet (installed once), the example config.

The test kits live in tests/support/ (on pytest's ``pythonpath``) and are imported by name
(``from proxykit import ...``); their fixtures are registered here, once for every test.

Tests that need the installed fleet take the ``example_config`` (or ``fleet_dir``) fixture and
carry ``@pytest.mark.fleet``; the first such test in a session runs ``scripts/install-fleet.sh``,
which is idempotent and skips what is already installed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from accesskit import served  # noqa: F401  (fixture: a real `serve --transport http` with keys)
from indexkit import cards, embedder, index  # noqa: F401  (fixtures: small signed cards, index)
from pgkit import pg_cards, pg_server, pg_url, pg_ws  # noqa: F401  (fixtures: real PostgreSQL)
from processkit import child_pids
from proxykit import env, everything, golden_home  # noqa: F401  (fixtures: signed workspaces)
from sdk1 import sdk1_python

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


@pytest.fixture(scope="session")
def bootstrap_example_home(example_config: Path) -> Callable[[Path], Path]:
    """A factory: `keys init` + `bootstrap` of the example fleet into a new home, via the CLI."""
    from click.testing import CliRunner

    from cartograph.cli import main

    def make(root: Path) -> Path:
        runner = CliRunner()
        for args in (["keys", "init"], ["bootstrap", "--config", str(example_config)]):
            result = runner.invoke(main, ["--home", str(root), *args])
            assert result.exit_code == 0, result.output
        return root

    return make


@pytest.fixture
def test_server_python() -> str:
    """The interpreter that runs our own test servers: they are written against SDK 1.x, so
    they are 2025-era upstreams, as most of the public fleet is."""
    return sdk1_python()


@pytest.fixture
def no_leftover_children() -> Iterator[None]:
    """Fails the test if it leaves child processes (live or zombie) behind."""
    before = child_pids()
    yield
    leftover = child_pids() - before
    assert not leftover, f"child processes left behind: {sorted(leftover)}"
