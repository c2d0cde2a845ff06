"""The reranker (issue 18 item 4) against stage one alone, side by side on the same index.

For each set: the shipped stock index (bootstrap cards, minilm-int8, hybrid), stage one's top
``--depth`` (20) for every task, the cross-encoder's logit for each of those pairs, then R@1,
R@3, R@5 and MRR for stage one and for each ``mix`` of the grid (0 = stage one's order, 1 =
the reranker's alone). The mix is chosen on the tune parts only (the highest mean of R@1 + R@5
over them) and reported on the test parts, which no choice has seen; ``--write-mix`` records it
in the model's manifest. The cost: discover's p50/p95 with stage one alone, reranked by one
worker and by ``--workers`` (default: the CPUs, at most 4), each pair on one onnxruntime
thread, interleaved task by task; and milliseconds a pair (one worker). Project venv; data
from ``../shared``::

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/rerank.py
    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/rerank.py --model DIR --write-mix
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI does (cli/common.py)
import numpy as np

from cartograph.index import load_embedder, tool_index
from cartograph.index.packaged import checked_model, file_sha256
from cartograph.index.rerank import (
    RERANK_DEPTH,
    RERANKER,
    Reranker,
    load_reranker,
    mixed_scores,
    top_indexes,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval import TEST_PARTS, TUNE_PARTS, prepare

MIXES = (0.0, 0.1, 0.15, 0.2, 0.35, 0.5, 0.65, 0.8, 1.0)
SETS = (*TUNE_PARTS, "livemcpbench", "union", "bfcl-live-test", "metatool-test")


def candidates(name: str, reranker, depth: int, limit: int):
    """Per task: stage one's top ``depth`` indexes, their hybrid scores, the reranker's logits
    and the positions that count as hits; and the set's index and tasks (for the timings)."""
    prepared = prepare(name, "cards", load_embedder("minilm-int8"), None)
    if prepared is None:
        print(f"{name}: data absent, skipped", file=sys.stderr)
        return None
    index, queries = prepared
    rows = []
    for q in queries[: limit or None]:
        hits = {p for p in (index.position(*pair) for pair in q.hits) if p is not None}
        if not hits:
            continue
        scores = index.scores(q.query, "hybrid")
        top = top_indexes(scores, depth)
        logits = reranker.score(q.query, [index.documents[int(i)].dense for i in top])
        rows.append((top, scores[top], logits, hits))
    print(f"{name}: {len(rows)} tasks, {len(index)} tools", file=sys.stderr)
    return rows, index, queries


def figures(rows: list[tuple], mix: float | None) -> dict[str, float]:
    """R@1/R@3/R@5/MRR (first hit's rank, within the depth) under ``mix`` (None: stage one)."""
    ranks = []
    for top, first, logits, hits in rows:
        order = (
            top
            if mix is None
            else top[np.argsort(-mixed_scores(logits, first, mix), kind="stable")]
        )
        rank = next((r for r, i in enumerate(order, 1) if int(i) in hits), None)
        ranks.append(rank)
    n = len(ranks) or 1
    at = lambda k: sum(1 for r in ranks if r is not None and r <= k) / n  # noqa: E731
    mrr = sum(1.0 / r for r in ranks if r is not None) / n
    return {"n": len(ranks), "r1": at(1), "r3": at(3), "r5": at(5), "mrr": mrr}


def timings(index, queries, reranker, n: int = 50) -> dict[str, float]:
    """discover's search p50/p95 in process (k=5): stage one alone, reranked with one worker
    and with the reranker's workers, interleaved task by task so that all three share the
    machine's state; and the reranker's cost a pair (one worker: its CPU time)."""
    sample = [q.query for q in queries[:n]]
    one = reranker
    if reranker.workers > 1:
        one = Reranker(reranker.folder, reranker.manifest, 1, reranker.int8_matmul, workers=1)
    variants = {"stage_one": None, "reranked_1_worker": one}
    if one is not reranker:
        variants["reranked"] = reranker
    ranked = {label: replace(index, reranker=model) for label, model in variants.items()}
    times: dict[str, list[float]] = {label: [] for label in ranked}
    for idx in ranked.values():
        idx.search("warm up the model", k=5)
    for q in sample:
        for label, idx in ranked.items():
            tool_index._QUERIES._items.clear()  # each pass embeds its query, as a new task does
            t0 = time.perf_counter()
            idx.search(q, k=5)
            times[label].append((time.perf_counter() - t0) * 1000)
    out: dict[str, float] = {"tools": len(index), "workers": reranker.workers}
    for label, values in times.items():
        out[f"{label}_p50_ms"] = round(float(np.percentile(values, 50)), 1)
        out[f"{label}_p95_ms"] = round(float(np.percentile(values, 95)), 1)
    extra = out["reranked_1_worker_p50_ms"] - out["stage_one_p50_ms"]
    out["ms_per_pair"] = round(extra / RERANK_DEPTH, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None, help="reranker folder (default: shipped)")
    ap.add_argument("--depth", type=int, default=RERANK_DEPTH)
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--limit", type=int, default=0, help="at most N tasks a set (0: all)")
    ap.add_argument("--write-mix", action="store_true", help="record the chosen mix in --model")
    ap.add_argument(
        "--choose-on",
        nargs="*",
        default=None,
        help="tune parts the mix is chosen on (default: every tune part run); leave out those "
        "the model trained on, which flatter it",
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument(
        "--matmul",
        choices=("manifest", "float", "int8"),
        default="manifest",
        help="weight products in float (as exported) or int8 (DynamicQuantizeMatMul); "
        "default: as the model's manifest says",
    )
    ap.add_argument(
        "--workers", type=int, default=None, help="pairs run at once (default: the CPUs, <= 4)"
    )
    args = ap.parse_args(argv)
    int8 = {"manifest": None, "float": False, "int8": True}[args.matmul]
    reranker = load_reranker(args.model, threads=1, int8_matmul=int8, workers=args.workers)
    found = {s: got for s in args.sets if (got := candidates(s, reranker, args.depth, args.limit))}
    data = {s: got[0] for s, got in found.items()}
    tune = [s for s in data if s in TUNE_PARTS and (args.choose_on is None or s in args.choose_on)]
    scored = {(s, m): figures(rows, m) for s, rows in data.items() for m in (None, *MIXES[1:])}

    def tune_score(mix: float | None) -> float:
        return float(np.mean([scored[s, mix]["r1"] + scored[s, mix]["r5"] for s in tune]))

    chosen = max(MIXES[1:], key=tune_score) if tune else MIXES[1]
    table = [
        {"set": s, "mix": "stage one" if m is None else m, **fig} for (s, m), fig in scored.items()
    ]
    print(f"{'set':16} {'mix':>9} {'n':>5} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6}")
    for r in table:
        mark = " <- chosen" if r["mix"] == chosen else ""
        part = "test" if r["set"] in TEST_PARTS else "tune"
        print(
            f"{r['set']:16} {r['mix']!s:>9} {r['n']:>5} {r['r1']:6.3f} {r['r3']:6.3f} "
            f"{r['r5']:6.3f} {r['mrr']:6.3f}  {part}{mark}"
        )
    if tune:
        verdict = "better" if tune_score(chosen) > tune_score(None) else "not better"
        print(
            f"tune parts {tune}: mean R@1 + R@5 stage one {tune_score(None):.3f}, "
            f"mix {chosen} {tune_score(chosen):.3f}: reranking is {verdict} than stage one"
        )
    matmul = "int8" if reranker.int8_matmul else "float"
    print(
        f"chosen mix {chosen}; model {reranker.model}, {matmul} weight products, "
        f"{reranker.workers} worker(s) of one thread"
    )
    cost = {}
    for s in ("fleet", "union"):
        if s in found:
            cost[s] = timings(found[s][1], found[s][2], reranker)
            print(f"{s}: {cost[s]}")
    if args.json:
        args.json.write_text(json.dumps({"rows": table, "mix": chosen, "cost": cost}, indent=1))
    if args.write_mix and args.model:
        write_mix(args.model, chosen, tune)
    return 0


def write_mix(folder: Path, mix: float, tune: list[str]) -> None:
    """Record ``mix`` (and where it was chosen) in the model's manifest; files are unchanged."""
    checked_model(RERANKER, folder)
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["mix"] = mix
    manifest["mix_chosen_on"] = tune
    assert manifest["files"]["model.onnx"] == file_sha256(folder / "model.onnx")
    path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{path}: mix {mix}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
