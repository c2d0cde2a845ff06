"""Grade Rift's risk labels against observed confusions on tune data, and its substitute rule.

    PYTHONPATH=src .venv/bin/python benchmarks/rift_tune.py [--corpus fleet callnavi seal_tools]
        [--variants paper default ...] [--thetas 0.65 0.7 0.75] [--reorder] [--json FILE]

Observed confusions are the top-1 mistakes of discover (the default method, ``ToolIndex.search``)
on tune data only: the fleet dev set (``benchmarks/queries/fleet_dev.jsonl``, 77 tasks, whose
``acceptable`` labels name substitutes that are not mistakes) and multi-server training sets
(``corpus/train/callnavi``, ``corpus/train/seal_tools``: never test data). A task is a mistake
when its top-1 is none of ``relevant`` / ``acceptable`` / ``relevant_equivalent``; the mistake
is *inside* a risk grade when the wrong tool shares a cluster of that grade with a relevant tool.

Per variant (a :class:`RiftConfig`): clusters, HIGH / MEDIUM / LOW, share of tools in a cluster,
recall = mistakes inside a HIGH or MEDIUM cluster / mistakes (and inside any cluster: the
ceiling at that theta), and HIGH clusters holding no mistake. For the fleet it also checks the
substitute rule against the dev set's cross-server ``acceptable`` labels (precision, recall).

Cards and indexes are built and cached as ``benchmarks/rift.py`` does (``--cache``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rift as riftbench
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.index import ToolIndex, embed_queries
from cartograph.rift import RiftConfig, RiftReport, analyze
from cartograph.rift.cluster import threshold_edges
from cartograph.rift.grading import Confusion, confusions, grade
from cartograph.rift.margin import MarginThresholds
from cartograph.rift.queries import QueryOptions
from cartograph.rift.substitutes import SubstituteRule, is_substitute
from cartograph.rift.workspace import discover_ranker, tools_from_cards

TASKS = {
    "fleet": riftbench.REPO / "benchmarks" / "queries" / "fleet_dev.jsonl",
    "callnavi": riftbench.SHARED / "corpus" / "train" / "callnavi" / "queries.jsonl",
    "seal_tools": riftbench.SHARED / "corpus" / "train" / "seal_tools" / "queries.jsonl",
}
PAPER = RiftConfig(
    grouping="cosine",
    margin_score="cosine",
    substitutes=False,
    query_options=QueryOptions(style="schema"),
)
COSINE = RiftConfig(grouping="cosine")
DEFAULT = RiftConfig()
PAPER_TH = MarginThresholds(0.10, 0.20)
VARIANTS: dict[str, RiftConfig] = {
    # layer 1 by card cosine (the paper's clusters; the default before issue 19's last round)
    "paper": PAPER,
    "cos+task": replace(PAPER, query_options=QueryOptions(style="task")),
    "discover+schema": replace(PAPER, margin_score="discover"),
    "discover+task": replace(COSINE, substitutes=False),
    "cosine": COSINE,
    "cosine-h0": replace(COSINE, margin_thresholds=MarginThresholds(0.0, 0.20)),
    "default-h0": replace(COSINE, margin_thresholds=MarginThresholds(0.0, 0.10)),
    "default-h05": replace(COSINE, margin_thresholds=MarginThresholds(0.05, 0.10)),
    "paper-h0": replace(PAPER, margin_thresholds=MarginThresholds(0.0, 0.10)),
    "no-margin": RiftConfig(grouping="cosine", use_margin=False),
    # layer 1 by confusion: discover's ranking of each tool's query over the whole catalog
    "confusion": DEFAULT,
    "confusion-paper": replace(DEFAULT, margin_thresholds=PAPER_TH),
    "confusion-components": replace(DEFAULT, confusion_cap=None, margin_thresholds=PAPER_TH),
    "confusion-cap0.45": replace(DEFAULT, confusion_cap=0.45),
    "confusion-cap0.65": replace(DEFAULT, confusion_cap=0.65),
    "confusion-2styles": replace(DEFAULT, graph_styles=("task", "schema")),
    "confusion-m0.15": replace(DEFAULT, margin_thresholds=MarginThresholds(0.0, 0.15)),
    # substitutes by the argument and cosine rule alone (the default until round 10)
    "confusion-no-family": replace(DEFAULT, substitute_rule=SubstituteRule(same_name_family=False)),
    "confusion-h0.05": replace(DEFAULT, margin_thresholds=MarginThresholds(0.05, 0.20)),
    "confusion-h-0.03": replace(DEFAULT, margin_thresholds=MarginThresholds(-0.03, 0.20)),
    "confusion-h-0.05": replace(DEFAULT, margin_thresholds=MarginThresholds(-0.05, 0.20)),
    "confusion-h-0.1": replace(DEFAULT, margin_thresholds=MarginThresholds(-0.1, 0.20)),
    "confusion-no-margin": replace(DEFAULT, use_margin=False),
}


def attach_reorder(index: ToolIndex) -> None:
    """Attach discover's reorder stage (its vectors embedded into a temporary home)."""
    import tempfile

    from cartograph.index.reorder import open_reorderer

    with tempfile.TemporaryDirectory() as home:
        index.reorderer = open_reorderer(Path(home), index)


def observed_confusions(index: ToolIndex, path: Path) -> tuple[int, list[Confusion]]:
    """(tasks, confusions) under discover's default method (``ToolIndex.search``)."""
    tasks = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    labelled, top1 = [], []
    for task in tasks:
        rel = [(s, t) for s, t in task["relevant"] if index.position(s, t) is not None]
        ok = [
            (s, t) for key in ("acceptable", "relevant_equivalent") for s, t in task.get(key) or []
        ]
        hit = index.search(task["query"], k=1)[0]
        labelled.append((rel, ok))
        top1.append((hit.server, hit.tool))
    return len(tasks), confusions(labelled, top1)


def grade_row(report: RiftReport, observed: list[Confusion]) -> dict[str, Any]:
    g = grade(report, observed)
    s = report.summary
    return {
        "clusters": s.clusters,
        "high": s.high,
        "medium": s.medium,
        "low": s.low,
        "in_clusters_pct": round(100 * s.tools_in_clusters / max(report.tools_total, 1), 1),
        "negative": s.negative_margins,
        "substitutes": s.substitute_pairs,
        "largest": max((len(c.members) for c in report.clusters), default=0),
        "mistakes": g.confusions,
        "in_hm": g.inside_high_medium,
        "in_any": g.inside_any,
        "recall_hm": round(g.recall, 3),
        "in_high": g.inside_high,
        "high_with_mistake": g.high_with_confusion,
        "high_without": g.high_without_confusion,
        "rift_s": round(sum(report.timing.values()) - report.timing["query_embed_s"], 2),
    }


def substitute_check(index: ToolIndex, tools: list[Any], rule: SubstituteRule) -> dict[str, Any]:
    """The rule against the fleet dev set's cross-server ``acceptable`` labels."""
    positives: set[tuple[int, int]] = set()
    labelled: dict[int, set[int]] = {}
    for line in TASKS["fleet"].read_text().splitlines():
        task = json.loads(line)
        for s, t in task["relevant"]:
            r = index.position(s, t)
            if r is None:
                continue
            found = (index.position(a, b) for a, b in task.get("acceptable") or [])
            acc = {a for a in found if a is not None}
            labelled.setdefault(r, set()).update(acc)
            positives |= {(r, a) for a in acc if tools[a].server != s}
    v = np.asarray(index.tool_vectors, dtype=np.float32)
    rows, cols = threshold_edges(v, min(rule.min_cosine, 0.99))
    ids = [(t.server, t.tool, t.input_schema) for t in tools]
    flagged = set()
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        if is_substitute(ids[i], ids[j], float(v[i] @ v[j]), rule):
            flagged |= {(i, j), (j, i)}
    found = {p for p in positives if p in flagged}
    judged = {(r, b) for r, b in flagged if r in labelled}
    right = {(r, b) for r, b in judged if b in labelled[r]}
    return {
        "rule": rule.__dict__,
        "positives": len(positives),
        "recall": round(len(found) / max(len(positives), 1), 3),
        "found": sorted(
            f"{tools[a].server}/{tools[a].tool} ~ {tools[b].server}/{tools[b].tool}"
            for a, b in found
        ),
        "flagged_pairs": len(flagged) // 2,
        "judged": len(judged),
        "precision": round(len(right) / max(len(judged), 1), 3),
        "false": sorted(
            f"{tools[a].server}/{tools[a].tool} ~ {tools[b].server}/{tools[b].tool}"
            for a, b in judged - right
        ),
    }


def substitute_grid(index: ToolIndex, tools: list[Any]) -> list[dict[str, Any]]:
    """Precision and recall of substitute rules over a small grid of the three constants."""
    rows = []
    for cos in (0.5, 0.6, 0.7):
        for name in (0.0, 0.5, 1.0):
            for args in (0.0, 0.3, 0.5):
                r = substitute_check(index, tools, SubstituteRule(name, args, cos))
                row = {k: r[k] for k in ("recall", "precision", "judged", "flagged_pairs")}
                rows.append({"min_cosine": cos, "name": name, "args": args, **row})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def memo_rank(rank: Any) -> Any:
    """``rank`` with each query's row kept, so variants that share queries score them once."""
    rows: dict[str, np.ndarray] = {}

    def cached(texts: list[str], vecs: np.ndarray) -> np.ndarray:
        todo = [k for k, t in enumerate(texts) if t not in rows]
        if todo:
            fresh = rank([texts[k] for k in todo], vecs[todo])
            for k, row in zip(todo, fresh, strict=True):
                rows[texts[k]] = row
        return np.stack([rows[t] for t in texts])

    return cached


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", nargs="+", default=["fleet", "callnavi"], choices=list(TASKS))
    ap.add_argument(
        "--variants",
        nargs="+",
        default=["paper", "cosine", "confusion", "confusion-paper", "no-margin"],
        choices=list(VARIANTS),
    )
    ap.add_argument("--thetas", nargs="+", type=float, default=[0.65])
    ap.add_argument("--linkages", nargs="+", default=["average"])
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cartograph-bench/rift"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--substitute-grid", action="store_true", help="also check a grid of substitute rules"
    )
    ap.add_argument(
        "--reorder",
        action="store_true",
        help="observe discover's mistakes with its reorder stage (the default since 2026-12-07)",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    rows: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    for name in args.corpus:
        snap = riftbench.load_corpus(name)
        cards = {
            n: g.card for n, g in generate_cards(snap, created_at="2026-11-30T00:00:00Z").items()
        }
        index, _, _ = riftbench.build_index(name, cards, args.embedder, args.cache)
        tools = tools_from_cards(cards, index.tool_ids, [d.lexical for d in index.documents])
        vectors = np.asarray(index.tool_vectors, dtype=np.float32)
        t0 = time.perf_counter()
        if args.reorder:
            attach_reorder(index)
        n_tasks, mistakes = observed_confusions(index, TASKS[name])
        index.reorderer = None  # Rift itself ranks with stage one's scores
        print(
            f"# {name}: {len(tools)} tools, {n_tasks} tasks, {len(mistakes)} top-1 mistakes "
            f"({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
        memo: dict[str, np.ndarray] = {}

        def embed(
            texts: list[str], _memo: dict[str, np.ndarray] = memo, _ix: ToolIndex = index
        ) -> np.ndarray:
            todo = [t for t in dict.fromkeys(texts) if t not in _memo]
            if todo:
                for t, vec in zip(todo, embed_queries(_ix.embedder, todo), strict=True):
                    _memo[t] = vec
            return np.stack([_memo[t] for t in texts])

        rank = memo_rank(discover_ranker(index))
        for theta in args.thetas:
            for linkage in args.linkages:
                for variant in args.variants:
                    cfg = replace(VARIANTS[variant], theta=theta, linkage=linkage)
                    report = analyze(tools, vectors, embed, cfg, rank)
                    row = {
                        "corpus": name,
                        "variant": variant,
                        "theta": theta,
                        "linkage": linkage,
                        **grade_row(report, mistakes),
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
        if name == "fleet":
            extra["substitutes"] = substitute_check(index, tools, SubstituteRule())
            print(json.dumps(extra["substitutes"], indent=1), flush=True)
            if args.substitute_grid:
                extra["substitute_grid"] = substitute_grid(index, tools)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, **extra}, indent=1) + "\n")


if __name__ == "__main__":
    main()
