"""Benchmark: reorder discover's first places with the trained encoder (a probe, not shipped).

The stock encoder (the default) finds more right tools in the top 5 on MCP catalogs; the trained
one (``minilm-tools``) more often puts the right tool first (docs/models.md, "Fusion weights").
This scores, per data set, ways of using the second behind the first, all from the same fused
score (``hybrid_scores`` with the shipped weights) over each model's own evidence:

  stock        the default: the stock encoder's hybrid ranking
  trained      the trained encoder's hybrid ranking alone
  top N        the stock ranking's top N put in the trained ranking's order (N = 5 keeps the
               top-5 set, and so R@5, exactly; a larger N lets the trained model change it)
  top 5 + cos  the stock top 5 reordered by stock score + 8 x the trained model's cosine (needs
               no second vector per tool, only the five candidates' vectors)

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/reorder.py [--parts tune|test]
        [--datasets NAME ...] [--cache DIR]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cartograph.index import load_embedder
from cartograph.index.methods import hybrid_scores
from retrieval import ALL_SETS, TEST_PARTS, TUNE_PARTS, prepare, shared_dir

DEPTHS = (5, 10, 20)
COSINE_WEIGHT = 8.0
"""The weight of the trained cosine in ``top 5 + cos`` (the best of 2-32 on the tune parts)."""


def orders(stock: np.ndarray, trained: np.ndarray, cos: np.ndarray) -> dict[str, np.ndarray]:
    """The top 5 of every variant, as tool positions."""
    first = np.argsort(-stock, kind="stable")
    out = {"stock": first[:5], "trained": np.argsort(-trained, kind="stable")[:5]}
    for n in DEPTHS:
        head = first[:n]
        out[f"top {n}"] = head[np.argsort(-trained[head], kind="stable")][:5]
    head = first[:5]
    mixed = stock[head] + COSINE_WEIGHT * cos[head]
    out["top 5 + cos"] = head[np.argsort(-mixed, kind="stable")]
    return out


def score_set(dataset: str, cache: Path | None) -> dict[str, tuple[float, float]] | None:
    """R@1 and R@5 of every variant on ``dataset`` (None when its files are absent)."""
    stock_prep = prepare(dataset, "cards", load_embedder("minilm-int8"), cache)
    trained_prep = prepare(dataset, "cards", load_embedder("minilm-tools"), cache)
    if stock_prep is None or trained_prep is None:
        return None
    (stock_index, queries), (trained_index, _) = stock_prep, trained_prep
    if stock_index.tool_ids != trained_index.tool_ids:
        raise SystemExit(f"{dataset}: the two indexes list different tools")
    vectors = trained_index.tool_vectors
    hits1: dict[str, int] = {}
    hits5: dict[str, int] = {}
    for q in queries:
        relevant = {stock_index.position(s, t) for s, t in q.hits} - {None}
        stock_vec, _ = stock_index.query_vectors(q.query, steps=False)
        trained_vec, _ = trained_index.query_vectors(q.query, steps=False)
        stock = hybrid_scores(stock_index.evidence(q.query, stock_vec))
        trained = hybrid_scores(trained_index.evidence(q.query, trained_vec))
        cos = vectors @ np.asarray(trained_vec).reshape(-1)
        for name, top in orders(stock, trained, cos).items():
            hits1[name] = hits1.get(name, 0) + int(top[0] in relevant)
            hits5[name] = hits5.get(name, 0) + int(bool(relevant & set(top.tolist())))
    n = max(len(queries), 1)
    return {name: (hits1[name] / n, hits5[name] / n) for name in hits1}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--parts", choices=("tune", "test"), default="tune")
    ap.add_argument("--datasets", nargs="+", choices=ALL_SETS, help="these sets, not a part's")
    ap.add_argument("--cache", type=Path, default=None, help="document vector cache folder")
    args = ap.parse_args(argv)
    if not shared_dir().is_dir():
        print(f"skipped: no shared data at {shared_dir()} (set CARTOGRAPH_SHARED)")
        return 0
    sets = args.datasets or (TUNE_PARTS if args.parts == "tune" else TEST_PARTS)
    results = {d: r for d in sets if (r := score_set(d, args.cache)) is not None}
    if not results:
        print("skipped: none of the sets is present")
        return 0
    names = list(next(iter(results.values())))
    print("| variant | " + " | ".join(results) + " | mean R@1 / R@5 |")
    print("|---" * (len(results) + 2) + "|")
    for name in names:
        cells = [f"{results[d][name][0]:.3f} / {results[d][name][1]:.3f}" for d in results]
        r1 = float(np.mean([results[d][name][0] for d in results]))
        r5 = float(np.mean([results[d][name][1] for d in results]))
        print(f"| {name} | " + " | ".join(cells) + f" | {r1:.3f} / {r5:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
