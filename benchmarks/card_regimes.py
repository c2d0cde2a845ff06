"""Card regimes: all-bootstrap, all-LLM and hybrid (LLM cards for some servers) indexes, compared.

Run from the repository root (``scripts/setup-llm.sh`` first)::

    .venv/bin/python benchmarks/card_regimes.py                       # fleet core + LiveMCPBench
    .venv/bin/python benchmarks/card_regimes.py --max-tools 0         # every tool (slow: ~3 s/tool)
    .venv/bin/python benchmarks/card_regimes.py --llm-url URL --llm-model NAME   # your endpoint

For each data set it takes a bounded subset of servers (whole servers, those the most queries
point at per tool first, until ``--max-tools``; 0 = all), writes the cards
three ways, signs and verifies them, builds a :class:`~cartograph.index.ToolIndex` and reports
R@1/R@5/MRR (:func:`cartograph.evaluate.run_eval`), Rift counts (:func:`cartograph.rift.analyze`),
the mean dense-document length by generator, and the *centroid pull*: how often stage 1's top
server is an LLM-carded one, next to how often the right server is. A server counts as
LLM-carded when its LLM card has at least one model-written entry; the hybrid regime gives LLM
cards to every other such server by name. LLM answers are cached in ``--cache`` so a
re-run asks only about new tools; without ``--llm-url`` the script starts llama-cpp-python's
server with SmolLM2-135M from ``.llm-venv`` on a free loopback port.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchkit import shared_dir, signed
from cartograph.cards.model import Card
from cartograph.evaluate import EvalQuery, load_queries, run_eval
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.generate.llm.cache import LLMCache
from cartograph.generate.llm.client import LLMSettings
from cartograph.generate.llm.generator import generate_llm_cards
from cartograph.index import ToolIndex, load_embedder
from cartograph.rift import analyze
from cartograph.rift.workspace import discover_ranker, tools_from_cards
from cartograph.upstream.snapshot import Snapshot, load_snapshot

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
REGIMES = ("bootstrap", "llm", "hybrid")
METHODS = ("two-stage", "flat", "hybrid")


def load_dataset(name: str) -> tuple[Snapshot, list[EvalQuery]]:
    root = shared_dir()
    if name == "fleet":
        snap = load_snapshot(root / "fleet" / "catalog.json")
        core = [s.strip() for s in (root / "fleet" / "core.txt").read_text().splitlines()]
        keep = {s for s in core if s and not s.startswith("#")}
        snap = Snapshot({n: s for n, s in snap.servers.items() if n in keep}, snap.created_at)
        return snap, load_queries(REPO / "benchmarks" / "queries" / "fleet_dev.jsonl")
    folder = root / "corpus" / name
    return load_snapshot(folder / "tools.jsonl"), load_queries(folder / "queries.jsonl")


def bounded(
    snap: Snapshot, queries: list[EvalQuery], max_tools: int
) -> tuple[Snapshot, list[EvalQuery]]:
    """Whole servers up to ``max_tools`` tools (0 = all): first those the most queries point at
    per tool (so the subset keeps as many queries as it can), then the rest, by name."""
    alive = {n: s for n, s in snap.servers.items() if s.tools and not s.error}
    votes: dict[str, int] = {}
    for q in queries:
        for srv in {srv for srv, _ in q.hits if srv in alive}:
            votes[srv] = votes.get(srv, 0) + 1
    order = sorted(alive, key=lambda n: (-votes.get(n, 0) / len(alive[n].tools), n))
    chosen: dict[str, Any] = {}
    total = 0
    for name in order:
        n = len(alive[name].tools)
        if max_tools and total + n > max_tools:
            continue
        chosen[name] = alive[name]
        total += n
    kept = [q for q in queries if any(srv in chosen for srv, _ in q.hits)]
    return Snapshot(chosen, snap.created_at), kept


def regime_cards(
    regime: str, boot: dict[str, Card], llm: dict[str, Card]
) -> tuple[dict[str, Card], set[str]]:
    if regime == "bootstrap":
        return boot, set()
    written = {n for n, c in llm.items() if any(t.generator.startswith("llm/") for t in c.tools)}
    if regime == "llm":
        return {n: llm.get(n, c) for n, c in boot.items()}, written
    # every other server whose LLM card has model-written entries (not only fallbacks)
    chosen = {n for i, n in enumerate(sorted(written)) if i % 2 == 0}
    return {n: (llm[n] if n in chosen else c) for n, c in boot.items()}, chosen


def centroid_pull(index: ToolIndex, queries: list[EvalQuery], llm_servers: set[str]) -> dict:
    """Share of stage-1 top servers that are LLM-carded vs share of right servers that are."""
    if not llm_servers or len(llm_servers) == len(index.servers):
        return {}
    qv = index.embed_queries([q.query for q in queries])
    cos = qv @ index.centroids.T
    top = [index.servers[int(i)] for i in np.argmax(cos, axis=1)]
    right = [q.relevant[0][0] if q.relevant else q.hits[0][0] for q in queries]
    return {
        "llm_share_of_servers": round(len(llm_servers) / len(index.servers), 3),
        "llm_share_of_stage1_top": round(sum(t in llm_servers for t in top) / len(top), 3),
        "llm_share_of_right_server": round(sum(r in llm_servers for r in right) / len(right), 3),
        "stage1_top_is_right": round(
            sum(t == r for t, r in zip(top, right, strict=True)) / len(top), 3
        ),
    }


def evaluate(cards: dict[str, Card], queries: list[EvalQuery], embedder, llm_servers: set[str]):
    index = ToolIndex.build(cards, embedder)
    report = run_eval(index, queries, METHODS, k=5)
    lexical = [d.lexical for d in index.documents]
    tools = tools_from_cards(cards, index.tool_ids, lexical)

    def embed(texts: list[str]) -> np.ndarray:
        return index.embed_queries(texts)

    vectors = np.asarray(index.tool_vectors, dtype=np.float32)
    rift = analyze(tools, vectors, embed, None, discover_ranker(index))
    lengths: dict[str, list[int]] = {}
    for doc in index.documents:
        entry = cards[doc.server].tool(doc.tool)
        gen = (entry.generator if entry else "?").split(":")[0]
        lengths.setdefault(gen, []).append(len(doc.dense.split()))
    return {
        "tools": len(index.tool_ids),
        "servers": len(index.servers),
        "queries": len(queries),
        "methods": {m: r.scores.as_json() for m, r in report.methods.items()},
        "rift": rift.summary.model_dump(),
        "dense_words_by_generator": {g: round(float(np.mean(v)), 1) for g, v in lengths.items()},
        "centroid_pull": centroid_pull(index, queries, llm_servers),
    }


def llm_cards(snap: Snapshot, settings: LLMSettings, cache: Path) -> tuple[dict[str, Card], dict]:
    done = [0]
    total = snap.tool_count()

    def on_tool(server: str, tool: str, outcome: str) -> None:
        done[0] += 1
        if done[0] % 10 == 0 or done[0] == total:
            print(f"  llm {done[0]}/{total} tools", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    run = generate_llm_cards(
        [snap.servers[n] for n in sorted(snap.servers)],
        settings,
        LLMCache(cache),
        created_at="2026-11-30T00:00:00Z",
        snapshot_hash=snap.digest(),
        on_tool=on_tool,
    )
    stats = run.stats.as_json()
    fallbacks = sum(len(v) for v in stats.pop("fallbacks").values())
    stats.update(
        seconds=round(time.perf_counter() - t0, 1),
        fallback_tools=fallbacks,
        failed_servers=sorted(run.failed),
    )
    return {n: g.card for n, g in run.cards.items()}, stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["fleet", "livemcpbench"])
    ap.add_argument("--max-tools", type=int, default=200, help="tools per data set (0 = all)")
    ap.add_argument("--llm-url")
    ap.add_argument("--llm-model", default="smollm2-135m")
    ap.add_argument("--attempts", type=int, default=2, help="model tries per tool")
    ap.add_argument("--max-tokens", type=int, default=200, help="completion budget per answer")
    ap.add_argument("--embedder", default="minilm-int8")
    ap.add_argument("--cache", type=Path, default=REPO / "benchmarks" / "results" / "llm-cache")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "regimes.json")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("bm25s").setLevel(logging.WARNING)

    server_ctx = None
    url = args.llm_url
    if not url:
        support = importlib.import_module("llm_server")  # tests/support: the same launcher
        install = support.llm_install()
        if install is None:
            print("no .llm-venv: run scripts/setup-llm.sh or pass --llm-url", file=sys.stderr)
            return 2
        args.out.parent.mkdir(parents=True, exist_ok=True)
        server_ctx = support.running_llm_server(install, args.out.with_suffix(".llm.log"))
        server = server_ctx.__enter__()
        url, args.llm_model = server.base_url, server.model
    settings = LLMSettings(
        base_url=url,
        model=args.llm_model,
        allow_fallback=True,
        concurrency=1,
        max_attempts=args.attempts,
        max_tokens=args.max_tokens,
    ).validate()
    embedder = load_embedder(args.embedder)
    results: dict[str, Any] = {
        "embedder": args.embedder,
        "model": args.llm_model,
        "max_tools": args.max_tools,
        "machine": f"{os.cpu_count()} cores",
    }
    try:
        for name in args.datasets:
            full_snap, full_queries = load_dataset(name)
            snap, queries = bounded(full_snap, full_queries, args.max_tools)
            print(
                f"{name}: {len(snap.servers)} servers, {snap.tool_count()} tools, "
                f"{len(queries)} queries",
                file=sys.stderr,
                flush=True,
            )
            boot = {n: g.card for n, g in generate_cards(snap).items()}
            llm, stats = llm_cards(snap, settings, args.cache)
            out: dict[str, Any] = {"llm_run": stats}
            for regime in REGIMES:
                cards, llm_servers = regime_cards(regime, boot, llm)
                out[regime] = evaluate(signed(cards), queries, embedder, llm_servers)
            if args.max_tools:  # the cheap regime on everything, for reference
                all_snap, all_queries = bounded(full_snap, full_queries, 0)
                all_boot = {n: g.card for n, g in generate_cards(all_snap).items()}
                ref = evaluate(signed(all_boot), all_queries, embedder, set())
                out["bootstrap_all_tools"] = ref
            results[name] = out
            print_table(name, out)
    finally:
        if server_ctx is not None:
            server_ctx.__exit__(None, None, None)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written {args.out}", file=sys.stderr)
    return 0


def print_table(name: str, out: dict[str, Any]) -> None:
    first = out["bootstrap"]
    print(
        f"\n{name}: {first['servers']} servers, {first['tools']} tools, "
        f"{first['queries']} queries; llm run: {out['llm_run']}"
    )
    print(
        f"{'regime':10} {'method':10} {'R@1':>6} {'R@5':>6} {'MRR':>6}  rift H/M/L/clusters  "
        "dense words"
    )
    for regime in REGIMES:
        r = out[regime]
        rift = r["rift"]
        for m, s in r["methods"].items():
            print(
                f"{regime:10} {m:10} {s['R@1']:6.3f} {s['R@5']:6.3f} {s['MRR']:6.3f}  "
                f"{rift['high']}/{rift['medium']}/{rift['low']}/{rift['clusters']:<10} "
                f"{r['dense_words_by_generator']}"
            )
        if r["centroid_pull"]:
            print(f"{'':10} centroid pull: {r['centroid_pull']}")
    ref = out.get("bootstrap_all_tools")
    if ref:
        s = ref["methods"]["two-stage"]
        print(
            f"bootstrap over all {ref['tools']} tools, {ref['queries']} queries (two-stage): "
            f"R@1 {s['R@1']:.3f} R@5 {s['R@5']:.3f} MRR {s['MRR']:.3f}; rift {ref['rift']}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
