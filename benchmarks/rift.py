"""Benchmark Rift: clusters, risk counts, time and peak memory per corpus and per method.

    .venv/bin/python benchmarks/rift.py [--corpus fleet core livemcpbench union]
        [--methods rift no-margin cosine jaccard] [--embedder minilm-exact]
        [--cache /tmp/cartograph-bench/rift] [--json benchmarks/results/rift.json]
        [--show N]

For each corpus: cards are generated from the snapshot with the real bootstrap generator
(``generate_cards``, unsigned: signing does not change the text Rift reads), the index is built
with the real embedder (``ToolIndex.build``; cached on disk by card digest, so the embedding
time is reported once, apart), then each method runs through :func:`cartograph.rift.analyze`.
"rift s" is Rift's own time without embedding the synthetic queries; "query embed s" is that
embedding, reported apart. Peak memory is tracemalloc's peak during the analysis (NumPy and
SciPy arrays are traced) and the process's maximum RSS so far (which includes the model).

Corpora (from ../shared): ``fleet`` = fleet/catalog.json (99 servers, 2,598 tools), ``core`` =
the 28 servers of fleet/core.txt, ``livemcpbench`` and ``union`` = corpus/*/tools.jsonl.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from cartograph.cards.model import Card
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.index import ToolIndex, card_set_digest, embed_queries, load_embedder
from cartograph.index.manifest import read_manifest
from cartograph.rift import RiftConfig, RiftReport, analyze
from cartograph.rift.analyze import RiftTool
from cartograph.rift.workspace import discover_ranker, tools_from_cards
from cartograph.upstream.snapshot import Snapshot, load_snapshot

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPORA = {
    "fleet": SHARED / "fleet" / "catalog.json",
    "core": SHARED / "fleet" / "catalog.json",
    "livemcpbench": SHARED / "corpus" / "livemcpbench" / "tools.jsonl",
    "union": SHARED / "corpus" / "union" / "tools.jsonl",
    "callnavi": SHARED / "corpus" / "train" / "callnavi" / "tools.jsonl",
    "seal_tools": SHARED / "corpus" / "train" / "seal_tools" / "tools.jsonl",
}
METHODS = {
    "rift": RiftConfig(),
    "rift-cosine": RiftConfig(grouping="cosine"),
    "no-margin": RiftConfig(use_margin=False),
    "cosine": RiftConfig(method="cosine"),
    "jaccard": RiftConfig(method="jaccard"),
    "rift-catalog": RiftConfig(margin_scope="catalog"),
}


def load_corpus(name: str) -> Snapshot:
    snap = load_snapshot(CORPORA[name])
    if name == "core":
        wanted = [
            line.strip()
            for line in (SHARED / "fleet" / "core.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")
        ]
        snap = Snapshot({n: snap.servers[n] for n in wanted if n in snap.servers})
    return snap


def build_index(
    name: str, cards: dict[str, Card], spec: str | None, cache: Path, reuse: bool = False
) -> tuple[ToolIndex, float, bool]:
    embedder = load_embedder(spec)
    digest = card_set_digest(cards)
    where = cache / f"{name}-{embedder.name}"
    try:
        if read_manifest(where)["card_digest"] == digest:
            return ToolIndex.load(where, embedder), 0.0, True
        if reuse:
            print(f"# {name}: reusing cached vectors of an EARLIER card set (--reuse-index)")
            return ToolIndex.load(where, embedder), 0.0, True
    except Exception:  # any unreadable cache is rebuilt
        pass
    t0 = time.perf_counter()
    index = ToolIndex.build(cards, embedder)
    seconds = time.perf_counter() - t0
    index.save(where)
    return index, seconds, False


def run_method(
    tools: list[RiftTool], vectors: np.ndarray, index: ToolIndex, cfg: RiftConfig
) -> dict[str, Any]:
    def embed(texts: list[str]) -> np.ndarray:
        return embed_queries(index.embedder, texts)

    tracemalloc.start()
    t0 = time.perf_counter()
    report = analyze(tools, vectors, embed, cfg, discover_ranker(index))
    wall = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    s = report.summary
    return {
        "clusters": s.clusters,
        "high": s.high,
        "medium": s.medium,
        "low": s.low,
        "tools_in_clusters": s.tools_in_clusters,
        "within_server": s.within_server,
        "cross_server": s.cross_server,
        "negative_margins": s.negative_margins,
        "largest": max((len(c.members) for c in report.clusters), default=0),
        "rift_s": round(wall - report.timing["query_embed_s"], 3),
        "query_embed_s": report.timing["query_embed_s"],
        "group_s": report.timing["group_s"],
        "peak_mb": round(peak / 2**20, 1),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "report": report,
    }


QUERIES = {
    "livemcpbench": SHARED / "corpus" / "livemcpbench" / "queries.jsonl",
    "union": SHARED / "corpus" / "union" / "queries.jsonl",
}


def confusion_check(name: str, index: ToolIndex, reports: dict[str, Any]) -> list[dict[str, Any]]:
    """Do the flagged clusters explain real retrieval mistakes on the corpus's human tasks?

    For each task, flat cosine top-1 over the tool vectors; a *mistake* is a top-1 that is not
    one of the task's relevant tools. A method *explains* the mistake when the wrong top-1 shares
    a cluster (any risk, or HIGH only) with one of the relevant tools. "flagged pairs" is the
    number of tool pairs the method puts together: explaining more with fewer pairs is better.
    """
    path = QUERIES.get(name)
    if path is None or not path.is_file():
        return []
    tasks = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pos = {tid: i for i, tid in enumerate(index.tool_ids)}
    qv = embed_queries(index.embedder, [t["query"] for t in tasks])
    top1 = (qv @ index.tool_vectors.T).argmax(axis=1)
    mistakes = []
    for task, best in zip(tasks, top1, strict=True):
        rel = {pos[(s, t)] for s, t in task["relevant"] if (s, t) in pos}
        rel |= {pos[(s, t)] for s, t in task.get("relevant_equivalent") or [] if (s, t) in pos}
        if rel and int(best) not in rel:
            mistakes.append((int(best), rel))
    server_of = [s for s, _ in index.tool_ids]
    same_server = sum(1 for b, rel in mistakes if any(server_of[b] == server_of[r] for r in rel))
    rows = []
    for method, report in reports.items():
        for label, risks in (("any", {"HIGH", "MEDIUM", "LOW"}), ("HIGH", {"HIGH"})):
            cluster_of: dict[int, set[int]] = {}
            pairs = 0
            for k, c in enumerate(report.clusters):
                if c.risk not in risks:
                    continue
                pairs += len(c.members) * (len(c.members) - 1) // 2
                for member in c.members:
                    cluster_of.setdefault(pos[tuple(member)], set()).add(k)
            explained = sum(
                1
                for b, rel in mistakes
                if any(cluster_of.get(b, set()) & cluster_of.get(r, set()) for r in rel)
            )
            rows.append(
                {
                    "corpus": name,
                    "method": method,
                    "risk": label,
                    "tasks": len(tasks),
                    "mistakes": len(mistakes),
                    "same_server": same_server,
                    "explained": explained,
                    "flagged_pairs": pairs,
                }
            )
    return rows


def print_confusions(checks: list[dict[str, Any]]) -> None:
    if not checks:
        return
    print()
    keys = ["corpus", "method", "risk", "tasks", "mistakes", "same_server", "explained"]
    print(" ".join(k.rjust(12) for k in [*keys, "flagged_pairs"]))
    for r in checks:
        print(" ".join(str(r[k]).rjust(12) for k in [*keys, "flagged_pairs"]))


def confusions_from(path: Path, cache: Path, spec: str | None) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    by_corpus: dict[str, dict[str, RiftReport]] = {}
    for key, report in data["reports"].items():
        corpus, method = key.split("/", 1)
        by_corpus.setdefault(corpus, {})[method] = RiftReport.model_validate(report)
    embedder = load_embedder(spec)
    checks: list[dict[str, Any]] = []
    for corpus, reports in by_corpus.items():
        if corpus not in QUERIES:
            continue
        index = ToolIndex.load(cache / f"{corpus}-{embedder.name}", embedder)
        checks.extend(confusion_check(corpus, index, reports))
    return checks


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    ap.add_argument(
        "--methods",
        nargs="+",
        default=["rift", "no-margin", "cosine", "jaccard"],
        choices=list(METHODS),
    )
    ap.add_argument(
        "--thetas", nargs="*", type=float, default=[], help="extra rift runs at these thetas"
    )
    ap.add_argument("--embedder", default=None, help="embedder spec (default: the product default)")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cartograph-bench/rift"))
    ap.add_argument(
        "--reuse-index",
        action="store_true",
        help="use a cached index even when the generator has changed the cards since (vectors "
        "then come from the earlier cards; summaries and schemas from the current ones)",
    )
    ap.add_argument(
        "--json", type=Path, default=None, help="write the rows (and full reports) here"
    )
    ap.add_argument(
        "--show", type=int, default=0, help="print the first N rift clusters per corpus"
    )
    ap.add_argument(
        "--confusions-from",
        type=Path,
        default=None,
        help="only run the confusion check on the reports of an earlier --json file, with the "
        "cached indexes it was computed on",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.confusions_from:
        print_confusions(confusions_from(args.confusions_from, args.cache, args.embedder))
        return

    rows: list[dict[str, Any]] = []
    full: dict[str, Any] = {}
    checks: list[dict[str, Any]] = []
    for name in args.corpus:
        t0 = time.perf_counter()
        snap = load_corpus(name)
        generated = generate_cards(snap, created_at="2026-11-30T00:00:00Z")
        cards = {n: g.card for n, g in generated.items()}
        gen_s = time.perf_counter() - t0
        index, embed_s, cached = build_index(
            name, cards, args.embedder, args.cache, args.reuse_index
        )
        lexical = [d.lexical for d in index.documents]
        tools = tools_from_cards(cards, index.tool_ids, lexical)
        vectors = np.asarray(index.tool_vectors, dtype=np.float32)
        print(
            f"# {name}: {len(cards)} servers, {len(tools)} tools; cards {gen_s:.1f} s; "
            f"index embedding {'cached' if cached else f'{embed_s:.1f} s'} ({index.embedder.name})",
            flush=True,
        )
        reports: dict[str, Any] = {}
        configs = {m: METHODS[m] for m in args.methods}
        configs.update({f"rift@{t:g}": RiftConfig(theta=t) for t in args.thetas})
        for method, cfg in configs.items():
            row = run_method(tools, vectors, index, cfg)
            report = row.pop("report")
            reports[method] = report
            rows.append({"corpus": name, "tools": len(tools), "method": method, **row})
            full[f"{name}/{method}"] = report.to_json()
            print(f"  {method}: {row}", file=sys.stderr, flush=True)
            if args.show and method == "rift":
                for c in report.clusters[: args.show]:
                    members = ", ".join(f"{s}/{t}" for s, t in c.members[:8])
                    head = f"{c.risk} n={len(c.members)} coh={c.cohesion} m={c.margin_min}"
                    print(f"    {head} {members} | {c.diagnosis[:120]}")

        checks.extend(confusion_check(name, index, reports))

    cols = [
        ("corpus", 12),
        ("method", 12),
        ("tools", 6),
        ("clusters", 8),
        ("high", 5),
        ("medium", 6),
        ("low", 5),
        ("tools_in_clusters", 8),
        ("cross_server", 6),
        ("largest", 7),
        ("negative_margins", 6),
        ("rift_s", 7),
        ("query_embed_s", 8),
        ("peak_mb", 8),
        ("max_rss_mb", 9),
    ]
    heads = {
        "tools_in_clusters": "in-clu",
        "cross_server": "cross",
        "negative_margins": "neg-m",
        "query_embed_s": "q-emb s",
        "rift_s": "rift s",
        "peak_mb": "peak MB",
        "max_rss_mb": "RSS MB",
    }
    print(" ".join(heads.get(c, c).rjust(w) for c, w in cols))
    for r in rows:
        print(" ".join(str("-" if r[c] is None else r[c]).rjust(w) for c, w in cols))
    if checks:
        print()
        keys = [
            "corpus",
            "method",
            "risk",
            "tasks",
            "mistakes",
            "same_server",
            "explained",
            "flagged_pairs",
        ]
        print(" ".join(k.rjust(13) for k in keys))
        for r in checks:
            print(" ".join(str(r[k]).rjust(13) for k in keys))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        data = {"rows": rows, "confusions": checks, "reports": full}
        args.json.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
