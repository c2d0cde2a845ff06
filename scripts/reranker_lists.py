"""Training lists for the reranker, mined from discover's own stage one.

At run time the reranker reorders stage one's top 20 (hybrid over the card texts), so it must
learn to tell the relevant tool from the tools stage one puts beside it, not from a random or
a sibling tool. For every query of the training sources (``corpus/train/*`` and the MetaTool
and BFCL tune parts, through the same leakage filter as the encoder's pairs), this builds the
source's own index from bootstrap cards (the shipped embedder and fusion), ranks the source's
tools for the query, and writes one list a relevant tool: the query, the relevant tool's dense
card text, and ``--hard`` negatives from the top of stage one (never a relevant tool or one of
the same normalised name) plus ``--wide`` drawn from the ranks below them down to
``--depth``. One line a list::

    {"source", "query", "positive", "negatives": [...], "positive_rank"}

    PYTHONPATH=src .venv/bin/python scripts/train_reranker.py lists --out RUN/lists.jsonl
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))


def _negatives(
    order: list[int], bad: set[int], names: set[str], keys: list, args, rng: random.Random
) -> list[int]:
    """``args.hard`` from the head of ``order`` and ``args.wide`` sampled below them."""
    import protocol

    fine = [
        j
        for j in order[: args.depth]
        if j not in bad and protocol.norm_name(keys[j][1]) not in names
    ]
    head, tail = fine[: args.hard], fine[args.hard :]
    return head + rng.sample(tail, min(args.wide, len(tail)))


def source_lists(source: str, tools: list[dict], queries: list[dict], args, rng, embedder):
    """(lists, stats) of one training source, over its own index of bootstrap cards."""
    import numpy as np

    import protocol
    from cartograph.index.tool_index import ToolIndex
    from registry_pairs import bootstrap_cards

    index = ToolIndex.build(bootstrap_cards(tools), embedder)
    keys = list(index.tool_ids)
    pos = {k: i for i, k in enumerate(keys)}
    per_tool: dict[tuple[str, str], int] = defaultdict(int)
    rows, ranks = [], []
    qs = list(queries)
    rng.shuffle(qs)
    for q in qs:
        relevant = [tuple(p) for p in q["relevant"] if tuple(p) in pos]
        wanted = [k for k in relevant if per_tool[k] < args.per_tool]
        if not wanted:
            continue
        scores = index.scores(q["query"], "hybrid")
        order = np.argsort(-scores, kind="stable").tolist()
        bad = {pos[k] for k in relevant}
        names = {protocol.norm_name(t) for _s, t in relevant}
        negatives = _negatives(order, bad, names, keys, args, rng)
        if len(negatives) < args.hard:
            continue
        rank_of = {j: r for r, j in enumerate(order)}
        for key in wanted:
            per_tool[key] += 1
            ranks.append(rank_of[pos[key]])
            rows.append(
                {
                    "source": source,
                    "query": q["query"],
                    "positive": index.documents[pos[key]].dense,
                    "negatives": [index.documents[j].dense for j in negatives],
                    "positive_rank": rank_of[pos[key]],
                }
            )
    top = np.asarray(ranks) if ranks else np.zeros(1)
    stats = {
        "tools": len(keys),
        "queries": len(queries),
        "lists": len(rows),
        "positive_first": round(float(np.mean(top == 0)), 3),
        "positive_in_top20": round(float(np.mean(top < 20)), 3),
    }
    return rows, stats


def build_lists(args: argparse.Namespace) -> int:
    from train_encoder import SEED, write_rows

    import protocol
    from cartograph.index.embedders import load_embedder

    shared = Path(args.shared)
    rng = random.Random(SEED)
    blocked = protocol.blocked_set(shared, REPO)
    embedder = load_embedder("minilm-int8")
    rows: list[dict] = []
    stats: dict[str, dict] = {}
    for source, tools, queries in protocol.training_sources(shared):
        kept = protocol.leak_filter(tools, queries, blocked)
        got, stats[source] = source_lists(source, kept.tools, kept.queries, args, rng, embedder)
        stats[source].update(tools_before_filter=len(tools), queries_kept=len(kept.queries))
        print(f"{source}: {stats[source]}", file=sys.stderr, flush=True)
        rows += got
    rng.shuffle(rows)
    rows = rows[: args.max_lists]
    meta = {
        "hard": args.hard,
        "wide": args.wide,
        "depth": args.depth,
        "per_tool": args.per_tool,
        "stage_one": "hybrid (shipped fusion), minilm-int8, bootstrap cards of each source",
        "sources": stats,
    }
    write_rows(Path(args.out), rows, "lists", meta)
    return 0


def add_parser(sub) -> None:
    d = sub.add_parser("lists", help="training lists mined from stage one (project venv)")
    d.add_argument("--shared", default=str(REPO.parent / "shared"))
    d.add_argument("--out", required=True)
    d.add_argument("--hard", type=int, default=5, help="negatives from the head of stage one")
    d.add_argument("--wide", type=int, default=2, help="negatives sampled below the hard ones")
    d.add_argument("--depth", type=int, default=30, help="the deepest rank a negative comes from")
    d.add_argument("--per-tool", type=int, default=8, help="at most this many lists per tool")
    d.add_argument("--max-lists", type=int, default=20000)
