"""Soak: many clients doing discover + call over HTTP while an upstream is killed on a timer and
oversized inputs are mixed in. Fails on a leaked upstream process or a lost audit entry.

    .venv/bin/python benchmarks/soak.py [--clients 20] [--seconds 60] [--kill-every 10]
        [--max-rss-growth 10] [--json FILE]

It bootstraps a fresh workspace with the example fleet's ``time`` server (``.fleet``, installed
by scripts/install-fleet.sh; our chaos test server stands in when it is missing), starts
``cartograph serve --transport http``, and runs ``--clients`` SDK clients, each on its own
session (reconnecting every 50 operations), doing discover then call in a loop. Every 10th
round (``--oversized-every``) is oversized instead: a 100 kB or a 3.9 MB task, 2 MB of call
arguments, or a 5 MB request body. Every ``--kill-every`` seconds the upstream's processes
are SIGKILLed.

It prints ops/s, errors by kind, p50/p95 per operation, the proxy's RSS at start (after the
warm-up) and end, the upstream processes the proxy owns (status) and those alive (/proc), and
after SIGTERM how long the proxy took to exit and which upstream processes were left. It exits
1 when owned != alive, anything is left after exit, an answered discover or call has no audit
entry, or RSS grew more than ``--max-rss-growth`` percent.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[1]
CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))
TIME_SERVER = REPO / ".fleet" / "py" / "mcp-server-time" / "bin" / "mcp-server-time"
CHAOS = REPO / "tests" / "gateway" / "servers" / "chaos.py"
TASKS = [
    "what time is it in Tokyo",
    "current time in a timezone",
    "convert 14:30 from Paris to New York time",
    "time difference between two cities",
]
SERVE_ARGS = ("--transport", "http", "--insecure-open", "--port", "0")
ZONES = ["Asia/Tokyo", "Europe/Paris", "America/New_York", "UTC", "Australia/Sydney"]


def upstream_entry() -> tuple[dict[str, Any], str, str, dict[str, Any]]:
    """The killed upstream's config entry, a marker in its command line, its tool and args."""
    if TIME_SERVER.exists():
        entry = {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"]}
        return entry, str(TIME_SERVER), "get_current_time", {"timezone": "Asia/Tokyo"}
    entry = {"command": sys.executable, "args": [str(CHAOS)]}
    return entry, str(CHAOS), "echo", {"text": "soak"}


# -- /proc ------------------------------------------------------------------------------------


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in found:
                found.add(child)
                frontier.append(child)
    return found


def alive_matching(pids: set[int], marker: str) -> set[int]:
    out = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            out.add(pid)
    return out


# -- the proxy --------------------------------------------------------------------------------


def prepare(root: Path) -> tuple[Path, str, str, dict[str, Any]]:
    entry, marker, tool, args = upstream_entry()
    config = root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": entry}}), encoding="utf-8")
    home = root / "home"
    done = subprocess.run(
        [CARTOGRAPH, "--home", str(home), "bootstrap", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"bootstrap failed:\n{done.stdout}\n{done.stderr}")
    return home, marker, tool, args


def start_proxy(home: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [CARTOGRAPH, "--home", str(home), "serve", *SERVE_ARGS],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "serving MCP at " in line:
            return proc, line.rsplit(" ", 1)[1].strip()
    raise SystemExit("serve did not start")


def result_text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def leaf(exc: BaseException) -> str:
    """The first real exception in an exception group, as ``Type: first words``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {str(exc)[:50]}"


def classify(result: types.CallToolResult) -> str:
    if not result.is_error:
        return "ok"
    message = result_text(result)
    if "over the limit" in message or "the proxy's limit" in message:
        return "refused: over a limit"
    if "closed during the call" in message or "exited" in message:
        return "upstream crashed mid-call"
    if "restart" in message or "could not start" in message or "retry" in message:
        return "upstream restarting"
    return "tool error: " + message[:60]


class Soak:
    def __init__(
        self, url: str, tool: str, args: dict[str, Any], deadline: float, oversized_every: int = 0
    ) -> None:
        self.oversized_every = oversized_every
        self.url = url
        self.tool = tool
        self.args = args
        self.deadline = deadline
        self.kinds: Counter[str] = Counter()
        self.latency: dict[str, list[float]] = {"discover": [], "call": []}
        self.answered = 0  # discover and call answers: each must have an audit entry
        self.ops = 0
        self.rounds = 0
        self.slowest = (0.0, "")

    async def client(self, n: int) -> None:
        rng = random.Random(n)
        while time.monotonic() < self.deadline:
            try:
                async with (
                    streamable_http_client(self.url) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    for _ in range(25):  # 50 operations, then a fresh session
                        if time.monotonic() >= self.deadline:
                            return
                        await self.round(session, rng)
            except Exception as exc:  # a benchmark boundary: count it, go on
                self.kinds[f"client exception: {leaf(exc)}"] += 1
                await anyio.sleep(0.2)

    async def round(self, session: ClientSession, rng: random.Random) -> None:
        self.rounds += 1
        if self.oversized_every and self.rounds % self.oversized_every == 0:
            self.ops += 1
            await self.oversized(session, rng)
            return
        self.ops += 2
        started = time.perf_counter()
        found = await session.call_tool("discover", {"task": rng.choice(TASKS), "k": 3})
        self.record("discover", found, started)
        args = dict(self.args)
        if "timezone" in args:
            args["timezone"] = rng.choice(ZONES)
        started = time.perf_counter()
        answer = await session.call_tool(
            "call", {"server": "time", "tool": self.tool, "arguments": args}
        )
        self.record("call", answer, started)

    def record(self, op: str, result: types.CallToolResult, started: float) -> None:
        self.answered += 1
        kind = classify(result)
        self.kinds[kind] += 1
        took = time.perf_counter() - started
        self.slowest = max(self.slowest, (took, f"{op}: {result_text(result)[:160]}"))
        if kind == "ok":
            self.latency[op].append(took)

    async def oversized(self, session: ClientSession, rng: random.Random) -> None:
        pick = rng.randrange(4)
        try:
            if pick == 0:
                result = await session.call_tool("discover", {"task": "x" * 100_000})
            elif pick == 1:
                result = await session.call_tool("discover", {"task": "y " * 1_950_000})
            elif pick == 2:
                arguments = {**self.args, "padding": "z" * 2_000_000}
                result = await session.call_tool(
                    "call", {"server": "time", "tool": self.tool, "arguments": arguments}
                )
            else:
                result = await session.call_tool("discover", {"task": "w" * 5_000_000})
        except Exception as exc:  # the 5 MB body is refused by HTTP before it is a call
            self.kinds[f"oversized body refused ({type(exc).__name__})"] += 1
            return
        self.answered += 1
        self.kinds[classify(result)] += 1


async def killer(marker: str, pid: int, every: float, deadline: float, seen: set[int]) -> int:
    kills = 0
    while time.monotonic() + every < deadline:
        await anyio.sleep(every)
        victims = alive_matching(descendants(pid), marker)
        seen |= victims
        for victim in victims:
            os.kill(victim, signal.SIGKILL)
        kills += bool(victims)
    return kills


async def status_of(url: str) -> dict[str, Any]:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return json.loads(result_text(await session.call_tool("status", {})))


def audit_count(home: Path) -> int:
    total = 0
    for path in (home / "logs").glob("audit.jsonl*"):
        for line in path.read_text("utf-8").splitlines():
            if line and json.loads(line)["event"] in ("discover", "call"):
                total += 1
    return total


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cartograph-soak-") as tmp:
        home, marker, tool, tool_args = prepare(Path(tmp))
        proc, url = start_proxy(home)
        seen: set[int] = set()
        kills = 0
        try:
            warm = Soak(url, tool, tool_args, time.monotonic() + 3600)
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for _ in range(3):
                    await warm.round(session, random.Random(0))
            rss_start = rss_mb(proc.pid)
            started = time.monotonic()
            run = Soak(url, tool, tool_args, started + args.seconds, args.oversized_every)
            async with anyio.create_task_group() as tg:
                for n in range(args.clients):
                    tg.start_soon(run.client, n)
                kills = await killer(marker, proc.pid, args.kill_every, run.deadline, seen)
            elapsed = time.monotonic() - started
            await anyio.sleep(1.0)  # let closing sessions finish
            status = await status_of(url)
            alive = alive_matching(descendants(proc.pid), marker)
            seen |= alive
            rss_end = rss_mb(proc.pid)
        finally:
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            exit_s = time.monotonic() - t0
            log = proc.stderr.read() if proc.stderr else ""
        time.sleep(0.5)
        leftover = alive_matching(seen, marker)
        audited = audit_count(home)
    owned = status["totals"].get("upstream_sessions_owned")
    sessions = next((s["sessions"] for s in status["servers"] if s["server"] == "time"), [])
    return {
        "clients": args.clients,
        "seconds": round(elapsed, 1),
        "ops": run.ops,
        "ops_per_s": round(run.ops / elapsed, 1),
        "kinds": dict(run.kinds.most_common()),
        "p50_ms": {op: round(percentile(v, 0.5), 1) for op, v in run.latency.items()},
        "p95_ms": {op: round(percentile(v, 0.95), 1) for op, v in run.latency.items()},
        "slowest": f"{run.slowest[0]:.1f} s ({run.slowest[1]})",
        "kills": kills,
        "crashes_seen": sum(s.get("crashes", 0) for s in sessions if isinstance(s, dict)),
        "rss_mb": {"start": round(rss_start, 1), "end": round(rss_end, 1)},
        "rss_growth_pct": round(100 * (rss_end - rss_start) / rss_start, 1),
        "upstream_owned": owned,
        "upstream_alive": len(alive),
        "exit_s": round(exit_s, 2),
        "leftover_after_exit": len(leftover),
        "answered": run.answered + warm.answered,
        "audited": audited,
        "error_lines": sum("ERROR" in line or "Traceback" in line for line in log.splitlines()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Soak the proxy over HTTP (see the module doc).")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--kill-every", type=float, default=10.0)
    parser.add_argument("--max-rss-growth", type=float, default=10.0, help="percent")
    parser.add_argument(
        "--oversized-every", type=int, default=10, help="every Nth round is oversized (0: none)"
    )
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    result = anyio.run(soak, args)
    for key, value in result.items():
        print(f"{key:>20}: {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    problems = []
    if result["upstream_owned"] != result["upstream_alive"]:
        problems.append("upstream processes alive != owned (a leak, or a miscount)")
    if result["leftover_after_exit"]:
        problems.append("upstream processes outlived the proxy")
    if result["audited"] != result["answered"]:
        problems.append(f"{result['answered'] - result['audited']} answered op(s) not audited")
    if result["rss_growth_pct"] > args.max_rss_growth:
        problems.append(f"RSS grew more than {args.max_rss_growth:g}%")
    if result["error_lines"]:
        problems.append("ERROR lines or tracebacks in the proxy's log")
    for problem in problems:
        print("FAIL:", problem, file=sys.stderr)
    raise SystemExit(1 if problems else 0)


if __name__ == "__main__":
    main()
