"""Benchmark: tokens a client receives, every upstream's tools/list vs. the proxy, per k.

    .venv/bin/python benchmarks/tokens.py [--tokenizer o200k_base] [--k 1 3 5 10]
        [--tasks 50] [--no-example-fleet] [--no-catalog]

Two catalogs, each measured by :func:`cartograph.evaluate.tokens.measure` (real proxy, real
wire serialisation, the cards' own example tasks spread evenly):

  example fleet   examples/mcp.json, bootstrapped live into a temporary workspace
  fleet catalog   ../shared/fleet/catalog.json (99 servers), cards generated and signed into a
                  temporary workspace, snapshot saved there, index built

Prints one table row per catalog and k, and writes benchmarks/results/tokens.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner

from cartograph.cli import main as cli
from cartograph.evaluate.tokenizers import TOKENIZERS, load_tokenizer
from cartograph.evaluate.tokens import TokenReport, example_tasks
from cartograph.generate.attest import attest_snapshot
from cartograph.index import open_index
from cartograph.proxy.memory import measure_tokens
from cartograph.storage import load_verified, open_store
from cartograph.trust.lifecycle import init_key
from cartograph.upstream.snapshot import load_snapshot, save_snapshot
from cartograph.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO.parent / "shared" / "fleet" / "catalog.json"


def example_fleet(root: Path) -> Workspace:
    runner = CliRunner()
    for args in (["keys", "init"], ["bootstrap", "--config", str(REPO / "examples/mcp.json")]):
        result = runner.invoke(cli, ["--home", str(root), *args])
        if result.exit_code != 0:
            raise SystemExit(f"bootstrap of the example fleet failed:\n{result.output}")
    return Workspace(root)


def fleet_catalog(root: Path) -> Workspace:
    ws = Workspace(root).ensure()
    snapshot = load_snapshot(CATALOG)
    save_snapshot(snapshot, ws.snapshots_dir / "catalog.json")
    store = open_store(ws)
    attest_snapshot(ws, snapshot, init_key(ws), store=store)
    open_index(ws, store)
    return ws


def row(name: str, r: TokenReport) -> dict[str, Any]:
    return {
        "catalog": name,
        "k": r.k,
        "servers": r.servers,
        "tools": r.tools,
        "direct_tools_list": r.direct_list,
        "tokens_per_tool": round(r.tokens_per_tool, 1),
        "proxy_tools_list": r.proxy_list,
        "discover_mean": round(r.mean("discover_response"), 1),
        "per_returned_tool": round(r.per_returned_tool, 1),
        "proxy_first_call_mean": round(r.mean("proxy"), 1),
        "saving": round(1 - r.mean("proxy") / r.direct_list, 4),
        "completed_direct": round(r.mean("direct_completed"), 1),
        "completed_proxy": round(r.mean("proxy_completed"), 1),
        "break_even_tools": round(r.break_even_tools, 1),
        "tasks": len(r.rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description="tokens: every tools/list vs. the proxy, per k")
    parser.add_argument("--tokenizer", choices=TOKENIZERS, default="o200k_base")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3, 5, 10])
    parser.add_argument("--tasks", type=int, default=50, help="example tasks per catalog")
    parser.add_argument("--no-example-fleet", action="store_true")
    parser.add_argument("--no-catalog", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/tokens.json")
    args = parser.parse_args()
    tok = load_tokenizer(args.tokenizer)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cartograph-tokens-") as tmp:
        builders = []
        if not args.no_example_fleet:
            builders.append(("example fleet", example_fleet))
        if not args.no_catalog and CATALOG.is_file():
            builders.append(("fleet catalog", fleet_catalog))
        for i, (name, build) in enumerate(builders):
            started = time.perf_counter()
            ws = build(Path(tmp) / f"home{i}")
            print(f"{name}: workspace in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            tasks = example_tasks(load_verified(ws).cards, args.tasks)
            reports = anyio.run(lambda ws=ws, tasks=tasks: measure_tokens(ws, tasks, tok, args.k))
            rows.extend(row(name, r) for r in reports)
    cols = [
        ("catalog", 14), ("k", 3), ("tools", 6), ("direct_tools_list", 18), ("tokens_per_tool", 8),
        ("proxy_tools_list", 6), ("discover_mean", 9), ("per_returned_tool", 9),
        ("saving", 7), ("completed_proxy", 9), ("break_even_tools", 10),
    ]  # fmt: skip
    heads = ["catalog", "k", "tools", "all tools/list", "tok/tool", "proxy", "discover",
             "tok/hit", "saving", "completed", "break-even"]  # fmt: skip
    print(f"tokenizer: {tok.name} ({tok.source})")
    print("  ".join(h.rjust(w) for h, (_, w) in zip(heads, cols, strict=True)))
    for r in rows:
        cells = []
        for key, width in cols:
            value = r[key]
            if isinstance(value, str):
                text = value
            else:
                text = f"{value:.1%}" if key == "saving" else f"{value:,}"
            cells.append(str(text).rjust(width))
        print("  ".join(cells))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"tokenizer": tok.name, "source": tok.source, "rows": rows}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
