"""`cartograph serve` over stdio: a message over the limit is refused while it streams in (its
request answered, memory flat, the session going on), and SIGTERM ends the proxy and its
upstreams at once even while the client keeps stdin open."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from proxykit import Env

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))


class Raw:
    """A JSON-RPC client of our own over the proxy's stdin/stdout (any message size)."""

    def __init__(self, env: Env) -> None:
        self.proc = subprocess.Popen(
            [CARTOGRAPH, "--home", str(env.ws.root), "serve", "--config", str(env.config())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0
        init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert "result" in init, init
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.answer()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status", encoding="utf-8") as fh:
            line = next(line for line in fh if line.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read().decode("utf-8", "replace")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_20_mb_message_is_answered_with_an_error_at_once_and_memory_stays_flat(
    env: Env,
) -> None:
    raw = Raw(env)
    try:
        warm = raw.call("discover", {"task": "add two integers"})
        assert "result" in warm
        before = raw.rss_mb()
        started = time.monotonic()
        huge = {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "tools/call",
            "params": {"name": "discover", "arguments": {"task": "x" * 20_000_000}},
        }
        raw.send(json.dumps(huge).encode())
        refused = raw.answer()
        seconds = time.monotonic() - started
        after = raw.rss_mb()
        still = raw.call("call", {"server": "chaos", "tool": "add", "arguments": {"a": 1, "b": 2}})
    finally:
        log = raw.close()
    assert refused["id"] == 99 and "4 MiB message limit" in refused["error"]["message"]
    assert seconds < 5, f"{seconds:.1f} s to refuse 20 MB"
    assert after - before < 50, f"RSS {before:.0f} -> {after:.0f} MB"
    assert still["result"]["content"][0]["text"] == "3"
    assert "Traceback" not in log


def test_sigterm_ends_stdio_serving_and_its_upstreams_while_stdin_stays_open(env: Env) -> None:
    raw = Raw(env)
    answer = raw.call("call", {"server": "chaos", "tool": "pid", "arguments": {}})
    upstream = int(answer["result"]["content"][0]["text"])
    assert _alive(upstream)
    started = time.monotonic()
    raw.proc.send_signal(signal.SIGTERM)  # stdin stays open: the client is still there
    raw.proc.wait(timeout=10)
    seconds = time.monotonic() - started
    assert raw.proc.stderr is not None
    log = raw.proc.stderr.read().decode("utf-8", "replace")
    assert seconds < 5, f"{seconds:.1f} s to exit after SIGTERM"
    assert not _alive(upstream)
    assert "Traceback" not in log, log
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()


@pytest.mark.parametrize("where", ["head", "tail"])
def test_the_request_id_of_an_oversized_message_is_found_at_either_end(
    env: Env, where: str
) -> None:
    raw = Raw(env)
    try:
        body = '"method":"tools/call","params":{"name":"discover","arguments":{"task":"%s"}}' % (
            "y" * 5_000_000
        )
        line = (
            '{"jsonrpc":"2.0","id":"req-7",' + body + "}"
            if where == "head"
            else "{" + body + ',"jsonrpc":"2.0","id":"req-7"}'
        )
        raw.send(line.encode())
        refused = raw.answer()
    finally:
        raw.close()
    assert refused["id"] == "req-7" and "message limit" in refused["error"]["message"]
