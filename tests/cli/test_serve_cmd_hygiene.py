"""`cartograph serve` says what is wrong in one line, logs each warning once, and keeps normal
client disconnects out of its error log."""

from __future__ import annotations

import socket
import subprocess

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from proxykit import Env, call, text
from servekit import CARTOGRAPH, start_serve, stop_serve

pytestmark = pytest.mark.anyio


def test_a_port_in_use_is_a_one_line_config_error(env: Env) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                CARTOGRAPH,
                *("--home", str(env.ws.root), "serve", "--config", str(env.config())),
                *("--transport", "http", "--insecure-open", "--port", str(port)),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "pick another --port" in result.stderr


async def test_http_disconnects_log_no_errors_and_each_warning_appears_once(env: Env) -> None:
    proc, url, head = start_serve(env, "--transport", "http", "--insecure-open")
    try:

        async def agent(n: int) -> None:
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as client,
            ):
                with anyio.fail_after(60):
                    await client.initialize()
                    await client.call_tool("discover", {"task": f"add numbers {n}"})
                    assert text(await call(client, "calm", "add", {"a": n, "b": 1})) == str(n + 1)

        async with anyio.create_task_group() as tg:
            for n in range(6):
                tg.start_soon(agent, n)
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            await call(client, "chaos", "crash")  # one warning: the session was lost
    finally:
        log = "".join(head) + stop_serve(proc)
    assert "Traceback" not in log and " ERROR " not in log and "ERROR:" not in log, log
    lost = [line for line in log.splitlines() if "chaos: session lost" in line]
    assert len(lost) == 1, log


def test_http_without_any_registered_client_warns_that_everything_will_get_401(
    env: Env,
) -> None:
    proc, _, head = start_serve(env, "--transport", "http", "--port", "0")
    stop_serve(proc)
    warning = "".join(head)
    assert "no client is registered" in warning and "every request will get 401" in warning
    assert "cartograph clients add NAME" in warning
