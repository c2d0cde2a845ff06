"""How `hybrid`'s weights were chosen: R@5 of fusion variants on every benchmark set at once.

Each data set's evidence (dense tool cosines, BM25, per-step cosines, server cosines) is
computed once with the real cards and embedder (``benchmarks/retrieval.py``'s ``prepare``),
then every variant re-ranks it: the shipped fitted fusion (``benchmarks/fusion_fit.py``), the
hand-set score fusion it replaced over a grid of weights, and the reciprocal-rank fusion before
that (k = 60, dense 1, BM25 1.5, steps 1, server 0.5 on the top 8 servers) as the baseline.
Rows are sorted by the mean R@5 over the sets, so a weight that only wins on one set does not
come first. The last row is an upper bound: the share of queries that
any one channel alone (hybrid, dense, BM25, one step) finds in its top 5.

    .venv/bin/python benchmarks/fusion_grid.py [--datasets ... | --parts tune] [--embedder SPEC]
        [--cache DIR] [--top N]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cartograph.index import load_embedder
from cartograph.index.methods import HAND_SET, Evidence, HybridParams, hybrid_scores
from retrieval import ALL_SETS, DATASETS, TUNE_PARTS, prepare, shared_dir

Scorer = Callable[[Evidence], np.ndarray]


def collect(
    dataset: str, cache: Path | None, embedder: str = "minilm"
) -> list[tuple[Evidence, set[int]]]:
    """(evidence, positions of the hit tools) per query, as discover computes it."""
    prepared = prepare(dataset, "cards", load_embedder(embedder), cache)
    if prepared is None:
        return []
    index, queries = prepared
    out = []
    for q in queries:
        qv, sv = index.query_vectors(q.query, steps=True)
        hits = {index.position(s, t) for s, t in q.hits}
        out.append(
            (
                index.evidence(q.query, qv, sv, names=True, actions=True, frames=True),
                {h for h in hits if h is not None},
            )
        )
    return out


def recall_at(rows: list[tuple[Evidence, set[int]]], score: Scorer, k: int = 5) -> float:
    found = 0
    for ev, hits in rows:
        s = score(ev)
        top = np.argpartition(-s, k)[:k] if len(s) > k else np.arange(len(s))
        found += bool(hits & set(top.tolist()))
    return found / max(1, len(rows))


def oracle_recall(rows: list[tuple[Evidence, set[int]]], k: int = 5) -> float:
    """Share of queries where ANY single channel (shipped hybrid, dense, BM25, one of the
    task's steps) has a hit in its top k: an upper bound for every way of choosing among these
    channels per query, so no fusion of this evidence can rank above it."""

    def top(values: np.ndarray) -> set[int]:
        return set(np.argsort(-values, kind="stable")[:k].tolist())

    found = 0
    for ev, hits in rows:
        channels = [hybrid_scores(ev), ev.tool_cos]
        if ev.bm25.max() > 0:
            channels.append(ev.bm25)
        if ev.step_cos is not None:
            channels.extend(ev.step_cos)
        found += any(top(c) & hits for c in channels)
    return found / max(1, len(rows))


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def _server_best(values: np.ndarray, tool_server: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, -np.inf)
    np.maximum.at(out, tool_server, values.astype(np.float64))
    return out


def rank_fusion(ev: Evidence) -> np.ndarray:
    """The reciprocal-rank fusion `hybrid` used before (the baseline row)."""
    rrf = 60.0
    score = 1.0 / (rrf + _ranks(ev.tool_cos))
    matched = ev.bm25 > 0
    if matched.any():
        score += np.where(matched, 1.5 / (rrf + _ranks(ev.bm25)), 0.0)
    if ev.step_cos is not None and len(ev.step_cos):
        score += np.max([1.0 / (rrf + _ranks(r)) for r in ev.step_cos], axis=0)
    if ev.n_servers > 1:
        best_tool = _server_best(ev.tool_cos, ev.tool_server, ev.n_servers)
        srv_dense = np.maximum(ev.server_cos.astype(np.float64), best_tool)
        srv = 1.0 / (rrf + _ranks(srv_dense))
        if matched.any():
            srv += 1.5 / (rrf + _ranks(_server_best(ev.bm25, ev.tool_server, ev.n_servers)))
        top = np.argsort(-srv, kind="stable")[:8]
        boost = np.zeros(ev.n_servers)
        boost[top] = srv[top]
        score += 0.5 * boost[ev.tool_server]
    return score


def variants() -> dict[str, Scorer]:
    out: dict[str, Scorer] = {
        "flat (dense only)": lambda ev: ev.tool_cos.astype(np.float64),
        "bm25 only": lambda ev: ev.bm25.astype(np.float64),
        "rank fusion (before)": rank_fusion,
    }
    out["fitted fusion (shipped, benchmarks/fusion_fit.py)"] = lambda ev: hybrid_scores(ev)
    for bm25, steps, server in itertools.product(
        (0.75, 1.0, 1.5, 2.25, 3.0, 4.5, 6.0, 7.5), (0.0, 0.5, 1.0), (0.0, 0.15, 0.3)
    ):
        p = HybridParams.hand_set(w_bm25=bm25, w_steps=steps, w_server=server)
        before = " (hand-set default before)" if p == HAND_SET else ""
        out[f"score fusion bm25 {bm25} steps {steps} server {server}{before}"] = lambda ev, p=p: (
            hybrid_scores(ev, p)
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=ALL_SETS)
    ap.add_argument("--parts", choices=["tune"], default=None, help="the protocol's tune parts")
    ap.add_argument("--embedder", default="minilm", help="embedder spec (default: product's)")
    ap.add_argument("--cache", type=Path, default=None, help="document vector cache folder")
    ap.add_argument("--top", type=int, default=15, help="rows printed (best mean first)")
    args = ap.parse_args(argv)
    if args.parts:
        args.datasets = list(TUNE_PARTS)
    if not shared_dir().is_dir():
        print(f"skipped: no shared data at {shared_dir()} (set CARTOGRAPH_SHARED)")
        return 0
    data = {d: collect(d, args.cache, args.embedder) for d in args.datasets}
    data = {d: rows for d, rows in data.items() if rows}
    results = []
    for name, score in variants().items():
        per = [recall_at(rows, score) for rows in data.values()]
        first = [recall_at(rows, score, k=1) for rows in data.values()]
        results.append((float(np.mean(per)), name, [*per, float(np.mean(first))]))
    head = ["variant", "mean R@5", *data, "mean R@1"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    ranked = sorted(results, key=lambda r: -r[0])
    fixed = [r for r in ranked if "score fusion" not in r[1] or "(hand-set" in r[1]]
    names = {r[1] for r in ranked[: args.top]}
    shown = [*ranked[: args.top], *(r for r in fixed if r[1] not in names)]
    oracle = [oracle_recall(rows) for rows in data.values()]
    oracle_mean = float(np.mean(oracle))
    oracle.append(float(np.mean([oracle_recall(rows, k=1) for rows in data.values()])))
    shown.append((oracle_mean, "oracle: best single channel per query", oracle))
    for mean, name, per in shown:
        print(f"| {name} | {mean:.3f} | " + " | ".join(f"{x:.3f}" for x in per) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
