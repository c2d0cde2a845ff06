"""Benchmark: where a proxied call's time goes, as CPU per call of each process in the chain.

    .venv/bin/python benchmarks/hop_cpu.py [--server time --tool get_current_time
        --args JSON] [--calls 300] [--compare-src OTHER_CHECKOUT/src] [--label-compare NAME]

Wall-clock medians on a shared 2-core machine move by 2x between runs; CPU seconds per call
of each process (read from /proc, Linux only) move far less. Scenarios, taken in turns call by
call so that the machine's load falls on all alike:

  direct   SDK client -> upstream (one warm session)
  pooled   SDK client -> `cartograph serve` (stdio, pooled) -> upstream
  hop      SDK client -> `cartograph serve`, a call refused by argument validation
  discover SDK client -> `cartograph serve`, discover for the tool's name (top 5)

For each: wall median, and CPU ms per call of the client (this process), of the proxy process
(its own, not its upstream's) and of the upstream. ``--compare-src`` starts a second proxy
with PYTHONPATH at another checkout's ``src`` (e.g. a `git worktree` of the previous commit),
so that a change is measured side by side in one run. Results: table and
benchmarks/results/hop_cpu.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gateway import (  # a sibling benchmark's helpers
    CARTOGRAPH,
    REPO,
    check,
    prepare_workspace,
    stdio_session,
    upstream_params,
)

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (not its children), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children(parent: int | None = None) -> dict[int, str]:
    """The child processes of ``parent`` (default: this process): pid -> command line."""
    parent = os.getpid() if parent is None else parent
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
            if int(stat[1]) == parent:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found[int(entry.name)] = cmd
        except (OSError, ValueError):
            continue
    return found


def one_server_config(home: Path, args: argparse.Namespace) -> Path:
    """An mcp.json with only the measured server, so that the proxy's one child is its own."""
    raw = json.loads(args.config.read_text(encoding="utf-8"))["mcpServers"][args.server]
    text = json.dumps({"mcpServers": {args.server: raw}})
    path = home / "one.json"
    path.write_text(text.replace("${configDir}", str(args.config.resolve().parent)))
    return path


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tool_args = json.loads(args.args)
    command, up_args, up_env = upstream_params(args.config, args.server)
    home = Path(tempfile.mkdtemp(prefix="cartograph-hopcpu-"))
    await prepare_workspace(home, args.config, args.server)
    serve = ["--home", str(home), "serve", "--config", str(one_server_config(home, args))]
    good = {"server": args.server, "tool": args.tool, "arguments": tool_args}
    bad = {"server": args.server, "tool": args.tool, "arguments": {"__nope__": [1]}}
    async with AsyncExitStack() as stack:
        before = set(children())
        direct = await stdio_session(stack, command, up_args, up_env)
        direct_pid = next(iter(set(children()) - before))
        proxies: dict[str, tuple[ClientSession, int, int]] = {}
        variants = {"this checkout": None}
        if args.compare_src:
            variants[args.label_compare] = args.compare_src
        for label, src in variants.items():
            before = set(children())
            env = {"PYTHONPATH": str(src)} if src else None
            session = await stdio_session(stack, CARTOGRAPH, serve, env)
            check(await session.call_tool("call", good))  # opens the pooled upstream session
            pid = next(iter(set(children()) - before))
            # the one-server config leaves the proxy one long-lived child: its upstream
            proxies[label] = (session, pid, next(iter(children(pid))))
        scenarios: dict[str, tuple[ClientSession, str, dict[str, Any], int | None, int]] = {
            "direct": (direct, args.tool, tool_args, None, direct_pid)
        }
        for label, (session, pid, upstream) in proxies.items():
            suffix = "" if len(proxies) == 1 else f" ({label})"
            scenarios[f"pooled{suffix}"] = (session, "call", good, pid, upstream)
            scenarios[f"hop{suffix}"] = (session, "call", bad, pid, upstream)
            ask = {"task": f"{args.tool.replace('_', ' ')} on {args.server}", "k": 5}
            scenarios[f"discover{suffix}"] = (session, "discover", ask, pid, upstream)
        return await measure(scenarios, args.calls)


async def measure(scenarios: dict[str, Any], calls: int) -> dict[str, Any]:
    """Each scenario ``calls`` times in turns; wall median and CPU per call per process."""
    walls: dict[str, list[float]] = {name: [] for name in scenarios}
    cpu: dict[str, dict[str, float]] = {
        n: {"client": 0.0, "proxy": 0.0, "upstream": 0.0} for n in scenarios
    }
    for session, tool, arguments, _, _ in scenarios.values():
        for _ in range(10):
            await session.call_tool(tool, arguments)
    for _ in range(calls):
        for name, (session, tool, arguments, proxy_pid, upstream_pid) in scenarios.items():
            pids = {"proxy": proxy_pid, "upstream": upstream_pid}
            start = {k: cpu_seconds(p) for k, p in pids.items() if p}
            c0, t0 = time.process_time(), time.perf_counter()
            result = await session.call_tool(tool, arguments)
            walls[name].append((time.perf_counter() - t0) * 1000)
            cpu[name]["client"] += time.process_time() - c0
            for k, p in pids.items():
                if p:
                    cpu[name][k] += cpu_seconds(p) - start[k]
            check(result, expect_error=name.startswith("hop"))
    return {
        name: {
            "wall_median_ms": statistics.median(walls[name]),
            **{f"{k}_cpu_ms": v / calls * 1000 for k, v in cpu[name].items()},
        }
        for name in scenarios
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "mcp.json")
    parser.add_argument("--server", default="time")
    parser.add_argument("--tool", default="get_current_time")
    parser.add_argument("--args", default='{"timezone": "UTC"}')
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--compare-src", type=Path, default=None)
    parser.add_argument("--label-compare", default="compared")
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks" / "results" / "hop_cpu.json"
    )
    args = parser.parse_args()
    if not Path("/proc/self/stat").exists():
        print("hop_cpu needs /proc (Linux); skipped", file=sys.stderr)
        return 0
    res = anyio.run(run, args)
    print(
        f"\n{args.server}/{args.tool}, {args.calls} calls each, in turns "
        f"(machine: {platform.machine()}, {os.cpu_count()} cpus)"
    )
    print(
        f"{'scenario':26} {'wall median ms':>15} {'client CPU':>11} {'proxy CPU':>10} "
        f"{'upstream CPU':>13}"
    )
    for name, r in res.items():
        print(
            f"{name:26} {r['wall_median_ms']:>15.2f} {r['client_cpu_ms']:>11.2f} "
            f"{r['proxy_cpu_ms']:>10.2f} {r['upstream_cpu_ms']:>13.2f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "results": res,
                "machine": platform.platform(),
                "args": {k: str(v) for k, v in vars(args).items()},
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
