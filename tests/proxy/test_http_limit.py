"""`cartograph serve --transport http`: a body over the message limit is refused before it is
read, large tasks leave memory flat, and SIGTERM ends the proxy and its upstreams at once."""

from __future__ import annotations

import signal
import socket
import time
from urllib.parse import urlsplit

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from proxykit import Env, call, text
from servekit import start_serve

from cartograph.proxy.http_limit import BodyLimit

pytestmark = pytest.mark.anyio


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
        line = next(line for line in fh if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_declared_50_mb_body_is_refused_before_it_is_sent(env: Env) -> None:
    proc, url, _ = start_serve(env, "--transport", "http", "--insecure-open")
    try:
        where = urlsplit(url)
        assert where.hostname is not None and where.port is not None
        with socket.create_connection((where.hostname, where.port), timeout=10) as conn:
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: {where.netloc}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                "Content-Length: 50000000\r\n\r\n"
            )
            conn.sendall(head.encode() + b'{"jsonrpc":"2.0","id":1,')  # and nothing more
            received = b""
            while chunk := conn.recv(65536):  # the server closes after its answer
                received += chunk
            answer = received.decode("utf-8", "replace")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert answer.startswith("HTTP/1.1 413")
    assert "4 MiB message limit (declared 47.7 MiB) and was not read" in answer


async def test_a_streamed_body_is_read_no_further_than_the_limit() -> None:
    """No Content-Length (chunked): BodyLimit keeps nothing past the limit, reads on (dropping
    it) to 4 times the limit so the client can read the 413, and no further."""
    reached: list[int] = []
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        reached.append(len(reached))
        return {"type": "http.request", "body": b"z" * 65536, "more_body": True}  # forever

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("an oversized body reached the app")

    scope = {"type": "http", "method": "POST", "headers": []}
    await BodyLimit(app, 1024 * 1024)(scope, receive, send)
    assert len(reached) * 65536 <= 4 * 1024 * 1024 + 65536  # never read past 4x the limit
    assert len(reached) > 17  # 16 chunks fit in 1 MiB; the rest up to 4 MiB was dropped
    assert sent[0]["status"] == 413
    assert b"1 MiB message limit (already 1.1 MiB)" in sent[1]["body"]  # type: ignore[operator]


async def test_a_body_within_the_limit_reaches_the_app_whole() -> None:
    parts = [b'{"a":', b'"b"}']
    seen: list[bytes] = []

    async def receive() -> dict[str, object]:
        body = parts.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(parts)}

    async def app(scope: object, receive: object, send: object) -> None:
        assert callable(receive)
        message = await receive()
        seen.append(message["body"])

    scope = {"type": "http", "method": "POST", "headers": [(b"content-length", b"9")]}
    await BodyLimit(app, 1024)(scope, receive, lambda m: None)
    assert seen == [b'{"a":"b"}']


async def test_three_concurrent_large_tasks_leave_memory_flat(env: Env) -> None:
    proc, url, _ = start_serve(env, "--transport", "http", "--insecure-open")
    try:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            await client.call_tool("discover", {"task": "add two integers"})  # warm
            before = _rss_mb(proc.pid)
            answers: list[str] = []

            async def large_task() -> None:
                found = await client.call_tool("discover", {"task": "w " * 1_950_000})
                answers.append(text(found))

            async with anyio.create_task_group() as tg:
                for _ in range(3):  # the probe: three concurrent 3.9 MB tasks
                    tg.start_soon(large_task)
            after = _rss_mb(proc.pid)
            added = await call(client, "calm", "add", {"a": 2, "b": 2})
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert len(answers) == 3 and all("over the limit of 2,000" in a for a in answers)
    assert after - before < 50, f"RSS {before:.0f} -> {after:.0f} MB"
    assert text(added) == "4"


async def test_sigterm_ends_http_serving_and_its_upstreams_within_5_s(env: Env) -> None:
    proc, url, _ = start_serve(env, "--transport", "http", "--insecure-open")
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        upstream = int(text(await call(client, "chaos", "pid")))
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(10):
            while proc.poll() is None:
                await anyio.sleep(0.05)
    seconds = time.monotonic() - started
    assert seconds < 5 and not _alive(upstream)
