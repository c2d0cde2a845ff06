"""Several `cartograph serve --transport http` replicas on one PostgreSQL store.

Real processes, a real SDK client over streamable HTTP, real upstreams (our chaos server, one
process per replica), the real CLI for bootstrap. What one replica or the CLI changes in the
store, the others see without a restart: new cards, quarantine, audit rows.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from proxykit import call, chaos_entry, data, text, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))


def cli(home: Path, store: str, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [CARTOGRAPH, "--home", str(home), "--store", store, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


class Replicas:
    """Proxy replicas started on one store, each with its own home holding only public keys."""

    def __init__(self, base: Path, store: str, config: Path) -> None:
        self.base, self.store, self.config = base, store, config
        self.procs: list[subprocess.Popen[str]] = []
        self.urls: list[str] = []

    def start(self, operator_home: Path) -> str:
        home = self.base / f"replica{len(self.procs)}"
        (home / "keys").mkdir(parents=True)
        shutil.copy(operator_home / "keys" / "operator.pub", home / "keys" / "operator.pub")
        proc = subprocess.Popen(
            [CARTOGRAPH, "--home", str(home), "--store", self.store, "serve",
             "--transport", "http", "--insecure-open", "--port", "0",
             "--config", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        self.procs.append(proc)
        assert proc.stderr is not None
        for line in proc.stderr:  # ends at EOF if the replica dies
            if "serving MCP at " in line:
                self.urls.append(line.rsplit(" ", 1)[1].strip())
                return self.urls[-1]
        raise AssertionError(f"replica {len(self.procs)} did not start")

    def stop(self) -> None:
        procs, self.procs = self.procs, []
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()


@pytest.fixture
def setup(tmp_path: Path, pg_url: str) -> Iterator[tuple[Path, Replicas]]:
    config = write_config(tmp_path / "cfg", {"chaos": chaos_entry(), "calm": chaos_entry()})
    operator = tmp_path / "operator"
    cli(operator, pg_url, "keys", "init")
    cli(operator, pg_url, "bootstrap", "--config", str(config), "--server", "calm")
    replicas = Replicas(tmp_path, pg_url, config)
    try:
        yield operator, replicas
    finally:
        replicas.stop()


@asynccontextmanager
async def client(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
        with anyio.fail_after(60):
            await s.initialize()
        yield s


async def found(session: ClientSession, task: str) -> set[tuple[str, str]]:
    answer = data(await session.call_tool("discover", {"task": task, "k": 20}))
    return {(t["server"], t["tool"]) for t in answer["tools"]}


async def eventually(check: Any, what: str, seconds: float = 30) -> None:
    """Poll ``check`` (async, returns bool) until it holds; fail after ``seconds``."""
    with anyio.fail_after(seconds):
        while not await check():
            await anyio.sleep(0.2)


async def test_replicas_share_new_cards_quarantine_and_the_audit_log(setup) -> None:
    operator, replicas = setup
    urls = [replicas.start(operator), replicas.start(operator)]
    async with client(urls[0]) as a, client(urls[1]) as b:
        for session in (a, b):
            assert ("chaos", "echo") not in await found(session, "echo the text back")
            assert ("calm", "echo") in await found(session, "echo the text back")
        # 1. a bootstrap through the CLI reaches both running replicas
        cli(operator, replicas.store, "bootstrap", "--config", str(replicas.config),
            "--server", "chaos")  # fmt: skip

        async def chaos_everywhere() -> bool:
            return all([("chaos", "echo") in await found(s, "echo the text back") for s in (a, b)])

        await eventually(chaos_everywhere, "the new card on both replicas")
        assert text(await call(b, "chaos", "add", {"a": 2, "b": 3})) == "5"
        assert not (await call(b, "chaos", "echo", {"text": "before"})).is_error
        # 2. replica A's upstream changes a tool: A's drift guard holds it, and so does B
        assert not (await call(a, "chaos", "mutate", {"what": "description"})).is_error

        async def held_on_a() -> bool:
            return (await call(a, "chaos", "echo", {"text": "now?"})).is_error

        await eventually(held_on_a, "replica A's drift guard")
        refused = await call(a, "chaos", "echo", {"text": "now?"})
        assert "chaos/echo is quarantined" in text(refused)

        async def held_on_b() -> bool:  # B's own upstream never changed
            return (await call(b, "chaos", "echo", {"text": "b?"})).is_error

        await eventually(held_on_b, "replica B honouring A's quarantine", seconds=10)
        assert "description changed since the card was signed" in text(
            await call(b, "chaos", "echo", {"text": "b?"})
        )
        status = data(await b.call_tool("status", {}))
        chaos = next(s for s in status["servers"] if s["server"] == "chaos")
        assert [q["tool"] for q in chaos["quarantined"]] == ["echo"]
        assert ("chaos", "echo") not in await found(b, "echo the text back")
    replicas.stop()  # flushes each replica's audit records
    import psycopg

    with psycopg.connect(replicas.store) as conn:
        rows = conn.execute(
            "SELECT replica, event FROM cartograph_audit WHERE event IN ('call', 'quarantined')"
        ).fetchall()
    assert len({replica for replica, _ in rows}) == 2  # both replicas wrote to one audit log
    assert "quarantined" in {event for _, event in rows}
