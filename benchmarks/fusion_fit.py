"""How `hybrid`'s default weights were fitted: pairwise logistic regression on the tune parts.

For every query of the protocol's tune parts and the fleet dev set, the real index (real
cards, signed and verified, the stock embedder) gives discover's evidence; each candidate tool
(the top 30 of the hand-set fusion that was the default before, plus the top 10 of BM25 and of
the dense channel) becomes a row of the fusion's features, each computed by
``cartograph.index.methods.hybrid_parts`` itself with that feature's weight alone set to 1, so
the fitted weights mean in the product exactly what they meant here. Every (relevant, other)
pair of a query's candidates is one example of a pairwise logistic regression with an L2
penalty (C, as scikit-learn's), each set weighted alike whatever its size. It prints a
leave-one-set-out table (fit on the other sets, score the held-out one) for the features and C
chosen, then the weights fitted on all tune sets, as a ``HybridParams`` literal.
``--test`` also scores the protocol's test parts once with those weights, beside the shipped
and the hand-set fusion. ``--latency N`` times ``ToolIndex.search`` (discover's ranking, query
embedding included: the query cache is switched off) on the fleet and the 9.6k union
with the shipped and the hand-set weights, alternating query by query in one process.

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/fusion_fit.py [--cache DIR] \\
        [--features NAME ...] [--c 1.0] [--test] [--latency 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fusion_grid
from cartograph.index import load_embedder, tool_index
from cartograph.index.methods import HAND_SET, Evidence, HybridParams, hybrid_parts, hybrid_scores
from retrieval import TEST_PARTS, TRAIN_SETS, TUNE_PARTS, prepare, shared_dir

FEATURES = tuple(f.name for f in fields(HybridParams))
"""One feature per weight of :class:`HybridParams` (the feature is what that weight multiplies)."""
FITTED = (
    "w_dense",
    "w_bm25",
    "w_bm25_strength",
    "w_dense_rank",
    "w_bm25_rank",
    "w_coverage",
    "w_action",
)
"""The features the shipped weights were fitted on (the others took no weight when tried)."""
CANDIDATES = (30, 10, 10)  # top of the hand-set fusion, of BM25, of the dense channel


@dataclass
class Query:
    features: np.ndarray  # (candidates, len(FEATURES))
    relevant: np.ndarray  # (candidates,) bool
    shipped: np.ndarray  # (candidates,) the shipped fusion's scores
    hand_set: np.ndarray  # (candidates,) the hand-set fusion's scores


def feature_columns(ev: Evidence) -> np.ndarray:
    """(n, len(FEATURES)): each weight's term with that weight alone set to 1."""
    zero = HybridParams(**dict.fromkeys(FEATURES, 0.0))
    cols = []
    for name in FEATURES:
        parts = hybrid_parts(ev, replace(zero, **{name: 1.0}))
        cols.append(sum(parts.values(), np.zeros(len(ev.tool_cos))))
    return np.column_stack(cols)


def candidates(ev: Evidence, hand_set: np.ndarray) -> list[int]:
    """The rows fitted for one query: the top of the hand-set fusion's scores, BM25, dense."""
    hand, lexical, dense = CANDIDATES
    picks = [
        *np.argsort(-hand_set, kind="stable")[:hand].tolist(),
        *np.argsort(-ev.bm25, kind="stable")[:lexical].tolist(),
        *np.argsort(-ev.tool_cos, kind="stable")[:dense].tolist(),
    ]
    return list(dict.fromkeys(picks))


def collect(dataset: str, cache: Path | None, embedder: str = "minilm") -> list[Query]:
    """One :class:`Query` per labelled query of ``dataset`` (none when its files are absent)."""
    out = []
    for ev, hits in fusion_grid.collect(dataset, cache, embedder):
        hand_set = hybrid_scores(ev, HAND_SET)
        picks = candidates(ev, hand_set)
        out.append(
            Query(
                feature_columns(ev)[picks],
                np.array([p in hits for p in picks]),
                hybrid_scores(ev)[picks],
                hand_set[picks],
            )
        )
    return out


def pair_differences(queries: list[Query], columns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(relevant - other) feature differences of every pair, and weights summing to 1 per set."""
    diffs, weights = [], []
    for q in queries:
        x = q.features[:, columns]
        pos, neg = x[q.relevant], x[~q.relevant]
        if len(pos) and len(neg):
            d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, len(columns))
            diffs.append(d)
            weights.append(np.full(len(d), 1.0 / len(d)))
    if not diffs:
        return np.zeros((0, len(columns))), np.zeros(0)
    w = np.concatenate(weights)
    return np.vstack(diffs), w / w.sum()


def fit(sets: Sequence[list[Query]], columns: list[int], c: float = 1.0) -> np.ndarray:
    """Weights minimising ``C * sum(w_i * log(1 + exp(-d_i . beta))) + |beta|^2 / 2`` over
    every set's pairs (each pair seen both ways, weights scaled to a mean of 1, as
    scikit-learn's ``LogisticRegression(C, fit_intercept=False)`` with sample weights)."""
    parts = [pair_differences(q, columns) for q in sets]
    d = np.vstack([p[0] for p in parts])
    w = np.concatenate([p[1] for p in parts]) * len(d) / len(parts)

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        m = d @ beta
        value = 2 * c * float(w @ np.logaddexp(0.0, -m)) + 0.5 * float(beta @ beta)
        sig = 0.5 * (1.0 - np.tanh(0.5 * m))  # 1 / (1 + e^m), overflow-free
        return value, -2 * c * (d.T @ (w * sig)) + beta

    found = minimize(loss, np.zeros(len(columns)), jac=True, method="L-BFGS-B")
    return np.asarray(found.x)


def recall(queries: list[Query], scores: Sequence[np.ndarray], k: int) -> float:
    found = sum(
        bool(q.relevant[np.argsort(-s, kind="stable")[:k]].any())
        for q, s in zip(queries, scores, strict=True)
    )
    return found / max(1, len(queries))


def scored(queries: list[Query], columns: list[int], beta: np.ndarray) -> list[np.ndarray]:
    return [q.features[:, columns] @ beta for q in queries]


def table(rows: list[tuple[str, list[Query], list[np.ndarray]]]) -> None:
    head = ["set", "queries"] + [
        f"{m} R@{k}" for m in ("fitted", "shipped", "hand-set") for k in (1, 5)
    ]
    print("| " + " | ".join(head) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for name, qs, fitted in rows:
        cells = [
            recall(qs, s, k)
            for s in (fitted, [q.shipped for q in qs], [q.hand_set for q in qs])
            for k in (1, 5)
        ]
        print(f"| {name} | {len(qs)} | " + " | ".join(f"{x:.3f}" for x in cells) + " |")


def latency(datasets: Sequence[str], n: int, cache: Path | None, embedder: str) -> None:
    """p50 / p95 of discover's ranking per query, shipped vs hand-set weights, interleaved."""
    print(f"\ndiscover latency (ToolIndex.search, k = 5, {n} queries per set, ms):")
    print("| set | tools | shipped p50 | shipped p95 | hand-set p50 | hand-set p95 |")
    print("|---|---|---|---|---|---|")
    for dataset in datasets:
        prepared = prepare(dataset, "cards", load_embedder(embedder), cache)
        if prepared is None:
            continue
        index, queries = prepared
        tool_index._QUERIES.size = 0  # every search embeds its query, as a new task would
        times: dict[str, list[float]] = {"shipped": [], "hand-set": []}
        for k, q in enumerate(queries[:n]):
            for name in ("shipped", "hand-set") if k % 2 else ("hand-set", "shipped"):
                index.hybrid = HAND_SET if name == "hand-set" else None
                t0 = time.perf_counter()
                index.search(q.query, k=5)
                times[name].append((time.perf_counter() - t0) * 1000)
        cells = [f"{np.percentile(times[m], p):.2f}" for m in times for p in (50, 95)]
        print(f"| {dataset} | {len(index.tool_ids)} | " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--features", nargs="+", default=list(FITTED), choices=FEATURES)
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 strength (default 1)")
    ap.add_argument("--cache", type=Path, default=None, help="document vector cache folder")
    ap.add_argument("--embedder", default="minilm", help="embedder spec (default: product's)")
    ap.add_argument("--test", action="store_true", help="also score the test parts, once")
    ap.add_argument("--latency", type=int, default=0, help="time N queries per set (0: off)")
    ap.add_argument("--only-latency", action="store_true", help="skip the fit, time only")
    ap.add_argument(
        "--tune",
        nargs="+",
        default=list(TUNE_PARTS),
        choices=[*TUNE_PARTS, *TRAIN_SETS],
        help="the sets to fit on (default: the protocol's tune parts and the fleet dev set)",
    )
    args = ap.parse_args(argv)
    if not shared_dir().is_dir():
        print(f"skipped: no shared data at {shared_dir()} (set CARTOGRAPH_SHARED)")
        return 0
    if args.latency:
        latency(("fleet", "union"), args.latency, args.cache, args.embedder)
    if args.only_latency:
        return 0
    columns = [FEATURES.index(f) for f in args.features]
    tune = {d: rows for d in args.tune if (rows := collect(d, args.cache, args.embedder))}
    print(f"leave one set out (C = {args.c}, features {', '.join(args.features)}):")
    rows = []
    for held, qs in tune.items():
        beta = fit([q for d, q in tune.items() if d != held], columns, args.c)
        rows.append((held, qs, scored(qs, columns, beta)))
    table(rows)
    beta = fit(list(tune.values()), columns, args.c)
    weights = dict.fromkeys(FEATURES, 0.0) | {
        f: round(float(b), 3) for f, b in zip(args.features, beta, strict=True)
    }
    print(
        "\nfitted on every tune set: HybridParams("
        + ", ".join(f"{k}={v}" for k, v in weights.items())
        + ")"
    )
    if args.test:
        print("\ntest parts (weights fitted on the tune sets above):")
        test = {d: rows for d in TEST_PARTS if (rows := collect(d, args.cache, args.embedder))}
        table([(d, qs, scored(qs, columns, beta)) for d, qs in test.items()])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
