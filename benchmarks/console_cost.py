"""Benchmark: what the console and telemetry cost an MCP call over HTTP, side by side.

    .venv/bin/python benchmarks/console_cost.py [--calls 300] [--rounds 2]
        [--before OTHER_CHECKOUT/src] [--server time --tool get_current_time --args JSON]

The console is served only by ``serve --transport http`` (with authentication), so this is
measured over streamable HTTP with an API key, unlike benchmarks/hop_cpu.py (stdio). One
workspace with the example fleet's one server (``time`` by default), attested once; then each
scenario is a real process, called by an SDK client on one open session:

  direct       SDK client -> upstream over stdio (one warm session, no proxy)
  console      `cartograph serve --transport http` of this checkout: /console, /metrics and
               the instruments on every discover and call (and the health board)
  no-console   the same with --no-console (/metrics and the instruments stay: they are
               always on)
  before       the same command with PYTHONPATH at --before (e.g. a `git worktree` of the
               commit before the metrics: no instruments, no traces, no console)

Pooled calls (and a discover) are taken in turns, call by call, the order rotated each turn, so
that the machine's load falls on all alike; per scenario the wall median and p95 and the CPU ms
per call of the client, the proxy process and the upstream (from /proc, Linux only);
``--rounds`` repeats the measurement on the same sessions to show the run-to-run spread. The
console's pages are each loaded once before the calls (RSS read before and after Rift, the one
page that loads SciPy); after the calls, each serve's RSS. ``--src`` runs console and no-console
from another checkout too (so that two commits compare with nothing else between them).
Results: table and benchmarks/results/console_cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gateway import (  # a sibling benchmark's helpers
    CARTOGRAPH,
    REPO,
    check,
    prepare_workspace,
    stdio_session,
    upstream_params,
)
from hop_cpu import children, cpu_seconds, one_server_config


def start_serve(
    home: Path, config: Path, extra: list[str], src: Path | None, log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """`cartograph serve --transport http` on a free port; its stderr goes to ``log``."""
    env = {**os.environ, **({"PYTHONPATH": str(src)} if src else {})}
    argv = [CARTOGRAPH, "--home", str(home), "serve", "--config", str(config)]
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*argv, "--transport", "http", "--port", "0", *extra],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if "serving MCP at " in line:
                return proc, line.rsplit(" ", 1)[1].strip()
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"serve did not start:\n{log.read_text(errors='replace')[-2000:]}")


async def http_session(stack: AsyncExitStack, url: str, key: str) -> ClientSession:
    http = await stack.enter_async_context(
        httpx.AsyncClient(headers={"authorization": f"Bearer {key}"}, timeout=60)
    )
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    with anyio.fail_after(120):
        await session.initialize()
    return session


async def measure(scenarios: dict[str, Any], calls: int) -> dict[str, Any]:
    """Each scenario ``calls`` times in turns, the order rotated every turn (so that none always
    follows the same one); wall median and p95, and CPU ms per call of each process."""
    names = list(scenarios)
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpu = {n: {"client": 0.0, "proxy": 0.0, "upstream": 0.0} for n in names}
    for session, tool, arguments, _, _ in scenarios.values():
        for _ in range(10):
            await session.call_tool(tool, arguments)
    for i in range(calls):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            session, tool, arguments, proxy_pid, upstream_pid = scenarios[name]
            pids = {"proxy": proxy_pid, "upstream": upstream_pid}
            start = {k: cpu_seconds(p) for k, p in pids.items() if p}
            c0, t0 = time.process_time(), time.perf_counter()
            result = await session.call_tool(tool, arguments)
            walls[name].append((time.perf_counter() - t0) * 1000)
            cpu[name]["client"] += time.process_time() - c0
            for k, p in pids.items():
                if p:
                    cpu[name][k] += cpu_seconds(p) - start[k]
            check(result)
    return {
        name: {
            "wall_median_ms": statistics.median(walls[name]),
            "wall_p95_ms": sorted(walls[name])[int(0.95 * (len(walls[name]) - 1))],
            **{f"{k}_cpu_ms": v / calls * 1000 for k, v in cpu[name].items()},
        }
        for name in names
    }


PAGES = (
    "/console",
    "/console/servers/time",
    "/console/discover?task=what+time+is+it",
    "/console/audit",
    "/console/quarantine",
    "/console/jobs",
)


def visit_console(base: str, key: str, paths: tuple[str, ...]) -> None:
    """Log in to the console and load each of ``paths`` once."""
    with httpx.Client(base_url=base, timeout=120) as web:
        form = web.get("/console/login").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', form)
        assert csrf, "no console login form"
        done = web.post("/console/login", data={"token": key, "csrf": csrf[1]})
        assert done.status_code == 303, done.text[:300]
        for path in paths:
            page = web.get(path)
            assert page.status_code == 200, (path, page.status_code)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, float]]:
    tool_args = json.loads(args.args)
    command, up_args, up_env = upstream_params(args.config, args.server)
    home = Path(tempfile.mkdtemp(prefix="cartograph-consolecost-"))
    await prepare_workspace(home, args.config, args.server)
    config = one_server_config(home, args)
    added = subprocess.run(
        [CARTOGRAPH, "--home", str(home), "clients", "add", "bench", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    key = json.loads(added.stdout)["key"]
    good = {"server": args.server, "tool": args.tool, "arguments": tool_args}
    ask = {"task": f"{args.tool.replace('_', ' ')} on {args.server}", "k": 5}
    variants: dict[str, tuple[list[str], Path | None]] = {
        "console": ([], args.src),
        "no-console": (["--no-console"], args.src),
    }
    if args.before:
        variants["before"] = ([], args.before)
    procs: list[subprocess.Popen[bytes]] = []
    pids: dict[str, int] = {}
    rss: dict[str, float] = {}
    try:
        async with AsyncExitStack() as stack:
            before = set(children())
            direct = await stdio_session(stack, command, up_args, up_env)
            direct_pid = next(iter(set(children()) - before))
            scenarios: dict[str, Any] = {"direct": (direct, args.tool, tool_args, None, direct_pid)}
            for label, (extra, src) in variants.items():
                proc, url = start_serve(home, config, extra, src, home / f"serve-{label}.log")
                procs.append(proc)
                session = await http_session(stack, url, key)
                check(await session.call_tool("call", good))  # opens the pooled session
                upstream = next(iter(children(proc.pid)))
                if label == "console":  # the console is there, and each page loaded once
                    visit_console(url.rsplit("/", 1)[0], key, PAGES)
                    rss["console, every page but Rift"] = rss_mb(proc.pid)
                    visit_console(url.rsplit("/", 1)[0], key, ("/console/rift",))
                pids[label] = proc.pid
                scenarios[f"call ({label})"] = (session, "call", good, proc.pid, upstream)
                scenarios[f"discover ({label})"] = (session, "discover", ask, proc.pid, upstream)
            rounds = []
            for _ in range(args.rounds):
                rounds.append(await measure(scenarios, args.calls))
            rss |= {label: rss_mb(pid) for label, pid in pids.items()}
            return rounds, rss
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "mcp.json")
    parser.add_argument("--server", default="time")
    parser.add_argument("--tool", default="get_current_time")
    parser.add_argument("--args", default='{"timezone": "UTC"}')
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", type=Path, default=None, help="another checkout's src")
    parser.add_argument(
        "--src", type=Path, default=None, help="the src of console and no-console (default: ours)"
    )
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks" / "results" / "console_cost.json"
    )
    args = parser.parse_args()
    if not Path("/proc/self/stat").exists():
        print("console_cost needs /proc (Linux); skipped", file=sys.stderr)
        return 0
    rounds, rss = anyio.run(run, args)
    print(
        f"\n{args.server}/{args.tool} over streamable HTTP, {args.calls} calls each, in turns "
        f"(machine: {platform.machine()}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f})"
    )
    for k, res in enumerate(rounds, 1):
        direct = res["direct"]["wall_median_ms"]
        print(f"\nround {k}")
        print(
            f"{'scenario':24} {'wall median ms':>15} {'/ direct':>9} {'p95 ms':>8} "
            f"{'client CPU':>11} {'proxy CPU':>10} {'upstream CPU':>13}"
        )
        for name, r in res.items():
            print(
                f"{name:24} {r['wall_median_ms']:>15.2f} {r['wall_median_ms'] / direct:>8.2f}x "
                f"{r['wall_p95_ms']:>8.2f} {r['client_cpu_ms']:>11.2f} {r['proxy_cpu_ms']:>10.2f} "
                f"{r['upstream_cpu_ms']:>13.2f}"
            )
    print("\nserve RSS after the rounds (MB): " + ", ".join(f"{k} {v:.1f}" for k, v in rss.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "rounds": rounds,
                "serve_rss_mb": rss,
                "machine": platform.platform(),
                "cpus": os.cpu_count(),
                "args": {k: str(v) for k, v in vars(args).items()},
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
