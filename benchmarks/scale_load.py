"""The load half of benchmarks/scale_out.py: proxy replicas on one PostgreSQL store under load.

Starts ``cartograph serve --transport http`` replicas (each with its own home that holds only
the operator's public key) on the store the ``index`` step built, waits until each answers a
discover, then runs ``--clients`` MCP clients over streamable HTTP for ``--seconds``: client i
talks to replica i mod R for its whole session (a sticky load balancer). Each request is a
discover with a task no one asked before. Counts errors (exceptions and MCP tool errors),
throughput and latency; reports one replica against R.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))


def start_replicas(work: Path, url: str, n: int) -> list[tuple[subprocess.Popen[bytes], str]]:
    out = []
    for i in range(n):
        home = work / f"replica{i}"
        shutil.rmtree(home, ignore_errors=True)
        (home / "keys").mkdir(parents=True)
        shutil.copy(work / "home" / "keys" / "operator.pub", home / "keys" / "operator.pub")
        log = (work / f"replica{i}.log").open("wb")
        proc = subprocess.Popen(
            [CARTOGRAPH, "--home", str(home), "--store", url, "serve", "--transport", "http",
             "--insecure-open", "--port", "0", "--config", str(work / "mcp.json")],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )  # fmt: skip
        log.close()
        out.append((proc, _wait_url(work / f"replica{i}.log", proc)))
    return out


def _wait_url(log: Path, proc: subprocess.Popen[bytes], timeout: float = 600) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if "serving MCP at " in line:
                return line.rsplit(" ", 1)[1].strip()
        if proc.poll() is not None:
            raise SystemExit(f"replica exited ({proc.returncode}); see {log}")
        time.sleep(0.2)
    raise SystemExit(f"replica did not start in {timeout} s; see {log}")


def stop_replicas(replicas: list[tuple[subprocess.Popen[bytes], str]]) -> list[float]:
    """Stop them; returns each one's peak RSS in MB (read just before)."""
    peaks = []
    for proc, _ in replicas:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
            peaks.append(int(status.split("VmHWM:")[1].split()[0]) / 1024)
        except (OSError, IndexError):
            peaks.append(float("nan"))
        proc.terminate()
    for proc, _ in replicas:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return peaks


async def _warm(url: str, timeout: float = 900) -> float:
    """Wait until the replica answers a discover (it loads the index first); seconds taken."""
    started = time.monotonic()
    async with streamable_http_client(url) as (r, w), ClientSession(r, w) as s:
        with anyio.fail_after(timeout):
            await s.initialize()
            res = await s.call_tool("discover", {"task": "warm up: list invoices", "k": 5})
        if res.is_error:
            raise SystemExit(f"{url}: warm-up discover failed: {res.content}")
    return time.monotonic() - started


async def _drive(urls: list[str], tasks: list[str], clients: int, seconds: float) -> dict:
    lat: list[float] = []
    errors: list[str] = []
    ready = anyio.Event()
    connected = 0
    rng = random.Random(5)
    counter = iter(range(10**9))

    async def client(i: int) -> None:
        nonlocal connected
        try:
            async with (
                streamable_http_client(urls[i % len(urls)]) as (r, w),
                ClientSession(r, w) as s,
            ):
                with anyio.fail_after(120):
                    await s.initialize()
                connected += 1
                if connected == clients:
                    ready.set()
                await ready.wait()
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    task = f"{rng.choice(tasks)} (ref {next(counter)})"
                    t = time.perf_counter()
                    with anyio.fail_after(120):
                        res = await s.call_tool("discover", {"task": task, "k": 5})
                    lat.append((time.perf_counter() - t) * 1000)
                    if res.is_error:
                        errors.append(str(res.content)[:200])
        except Exception as exc:  # a benchmark counts every failure, whatever it is
            errors.append(f"client {i}: {type(exc).__name__}: {exc}"[:200])
            connected += 1
            if connected >= clients:
                ready.set()

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        for i in range(clients):
            tg.start_soon(client, i)
        await ready.wait()
        started = time.monotonic()
    elapsed = time.monotonic() - started
    return {
        "requests": len(lat),
        "errors": len(errors),
        "error_samples": errors[:5],
        "seconds": elapsed,
        "throughput_rps": len(lat) / elapsed if elapsed else 0.0,
        "p50_ms": statistics.median(lat) if lat else float("nan"),
        "p95_ms": float(np.percentile(lat, 95)) if lat else float("nan"),
    }


def run_load(args: Any) -> dict[str, Any]:
    from scale_out import start_pg

    work: Path = args.work
    queries = json.loads((work / "queries.json").read_text())
    tasks = [q["text"] for q in queries]
    server = start_pg(work)
    url = server.get_uri()
    runs = []
    try:
        for n in sorted({1, args.replicas}):
            replicas = start_replicas(work, url, n)
            try:
                warm = [anyio.run(_warm, u) for _, u in replicas]
                stats = anyio.run(
                    _drive, [u for _, u in replicas], tasks, args.clients, args.seconds
                )
            finally:
                peaks = stop_replicas(replicas)
            stats.update(replicas=n, clients=args.clients, warm_s=warm, replica_peak_rss_mb=peaks)
            stats["loadavg"] = [round(x, 2) for x in os.getloadavg()]
            runs.append(stats)
    finally:
        server.cleanup()
    print(f"\nload: {args.clients} clients, {args.seconds:.0f} s, discover with new tasks")
    print("| replicas | requests | errors | throughput (req/s) | p50 (ms) | p95 (ms) | load avg |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for r in runs:
        print(f"| {r['replicas']} | {r['requests']} | {r['errors']} | {r['throughput_rps']:.1f} | "
              f"{r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['loadavg']} |")  # fmt: skip
        for sample in r["error_samples"]:
            print(f"  error: {sample}")
    return {"runs": runs}
