"""Benchmark: snapshot the example fleet concurrently vs each server connecting alone.

    .venv/bin/python benchmarks/bootstrap_fleet.py [--config examples/mcp.json] [--runs 3]
        [--concurrency 8] [--json benchmarks/results/bootstrap_fleet.json]

Runs ``scripts/install-fleet.sh`` first (a no-op when installed), one warm-up snapshot (the first
start of a Python server compiles its bytecode), then ``--runs`` rounds of: every server alone,
then the whole fleet at once. Per server it reports "ready" (spawn to tools listed) and "total"
(ready plus the clean shutdown: stdin closed, process waited for), as medians over the runs.
The ratio fleet wall / slowest alone shows the concurrency: 1.0 would be perfect overlap, the
sum of the servers' totals / fleet wall is the speed-up over starting them one by one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

from cartograph.config import UpstreamConfig, load_config
from cartograph.upstream.connect import list_tools_raw, open_session, snapshot_servers

REPO = Path(__file__).resolve().parent.parent


async def alone(cfg: UpstreamConfig, timeout: float) -> tuple[float, float, int]:
    """(ready seconds, total seconds, tools) for one server started on its own."""
    t0 = time.perf_counter()
    async with open_session(cfg, timeout=timeout) as up:
        tools = await list_tools_raw(up)
        ready = time.perf_counter() - t0
    return ready, time.perf_counter() - t0, len(tools)


async def fleet(
    configs: list[UpstreamConfig], timeout: float, concurrency: int
) -> tuple[float, dict[str, float], int]:
    t0 = time.perf_counter()
    outcome = await snapshot_servers(configs, timeout=timeout, concurrency=concurrency)
    wall = time.perf_counter() - t0
    if outcome.failures:
        raise SystemExit(f"fleet snapshot failed: {outcome.failures}")
    return wall, outcome.seconds, outcome.snapshot.tool_count()


async def run(args: argparse.Namespace) -> dict[str, object]:
    cfg = load_config(args.config)
    configs = list(cfg.servers.values())
    t0 = time.perf_counter()
    warm_wall, _, _ = await fleet(configs, args.timeout, args.concurrency)
    first = time.perf_counter() - t0
    ready: dict[str, list[float]] = {c.name: [] for c in configs}
    total: dict[str, list[float]] = {c.name: [] for c in configs}
    tools: dict[str, int] = {}
    walls: list[float] = []
    in_fleet: dict[str, list[float]] = {c.name: [] for c in configs}
    tool_total = 0
    for _ in range(args.runs):
        for c in configs:
            r, t, n = await alone(c, args.timeout)
            ready[c.name].append(r)
            total[c.name].append(t)
            tools[c.name] = n
        wall, per_server, tool_total = await fleet(configs, args.timeout, args.concurrency)
        walls.append(wall)
        for name, secs in per_server.items():
            in_fleet[name].append(secs)
    med = statistics.median
    return {
        "config": str(args.config),
        "servers": len(configs),
        "tools": tool_total,
        "runs": args.runs,
        "concurrency": args.concurrency,
        "cpus": os.cpu_count(),
        "first_snapshot_s": round(first, 3),
        "warmup_wall_s": round(warm_wall, 3),
        "per_server": {
            name: {
                "tools": tools[name],
                "alone_ready_s": round(med(ready[name]), 3),
                "alone_total_s": round(med(total[name]), 3),
                "in_fleet_total_s": round(med(in_fleet[name]), 3),
            }
            for name in sorted(ready)
        },
        "fleet_wall_s": round(med(walls), 3),
        "fleet_walls_s": [round(w, 3) for w in walls],
    }


def print_table(result: dict[str, object]) -> None:
    per = result["per_server"]
    assert isinstance(per, dict)
    print(f"{'server':<22}{'tools':>6}{'alone ready s':>15}{'alone total s':>15}{'in fleet s':>12}")
    for name, row in per.items():
        print(
            f"{name:<22}{row['tools']:>6}{row['alone_ready_s']:>15.2f}"
            f"{row['alone_total_s']:>15.2f}{row['in_fleet_total_s']:>12.2f}"
        )
    slowest_name, slowest = max(
        ((n, r["alone_total_s"]) for n, r in per.items()), key=lambda item: item[1]
    )
    summed = sum(r["alone_total_s"] for r in per.values())
    wall = result["fleet_wall_s"]
    assert isinstance(wall, float)
    print()
    print(
        f"fleet: {result['servers']} servers, {result['tools']} tools, "
        f"concurrency {result['concurrency']}, {result['cpus']} CPUs, "
        f"median of {result['runs']} runs"
    )
    print(f"  fleet wall time (all at once)      {wall:7.2f} s   runs: {result['fleet_walls_s']}")
    print(f"  slowest server alone ({slowest_name:<12}) {slowest:7.2f} s")
    print(f"  sum of servers alone (one by one)  {summed:7.2f} s")
    print(f"  wall / slowest alone               {wall / slowest:7.2f}   (1.00 = perfect overlap)")
    print(f"  sum alone / wall (speed-up)        {summed / wall:7.2f} x")
    print(f"  warm-up snapshot (first this run)  {result['first_snapshot_s']:7.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "mcp.json")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    parser.add_argument("--no-install", action="store_true", help="skip scripts/install-fleet.sh")
    args = parser.parse_args()
    if not args.no_install:
        subprocess.run(
            ["bash", str(REPO / "scripts" / "install-fleet.sh")],
            check=True,
            stdout=sys.stderr,
        )
    result = anyio.run(run, args)
    print_table(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
