"""How far Rift's signal can reach: the share of tools flagged against the observed confusions
caught, over every cut-off of the synthetic-query ranking and of the card cosine.

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/rift_frontier.py
        [--corpus fleet callnavi] [--styles task schema] [--json FILE]

Issue 19 asks for both "at most 40 % of tools in a cluster" and "at least half of the observed
top-1 confusions inside a HIGH or MEDIUM cluster". This benchmark measures whether any grouping
built on Rift's evidence can give both, on tune data only (the same confusions as
``benchmarks/rift_tune.py``: discover's top-1 mistakes on the fleet dev set and on
``corpus/train/callnavi``).

Evidence per ordered pair ``(a, b)``: the margin ``m(a, b) = s(q_a, a) - s(q_a, b)`` of ``a``'s
synthetic queries (name and argument schema only; with several ``--styles`` the smallest over
them), scored by discover's ranking in cosine units exactly as Rift's layer 1, and the rank of
``b`` among ``a``'s rivals; and the card cosine ``cos(v_a, v_b)`` (the paper's layer 1).

1. **Reach**: for each confusion (wrong tool ``w``, relevant ``g``), the best rank of ``w``
   among ``g``'s rivals or of ``g`` among ``w``'s, bucketed. A confusion whose pair sits past
   rank 100 both ways is one no grouping over this ranking reaches without flagging most tools.
2. **Pairs**: flag a pair when its score passes a cut-off (margin either way below ``t``, or
   card cosine at or above ``t``), ``t`` chosen so that a given share of tools holds a flagged
   pair; recall = confusions whose ``(g, w)`` pair is flagged. This is the most a grouping can
   catch at that share when it groups only flagged pairs.
3. **Groups**: connected components of the edges ``m(a, b) < c`` with ``b`` among ``a``'s ``R``
   closest rivals, for a grid of ``c`` and ``R``: groups, share of tools, largest group, HIGH
   (a member's own query ranks a mate first) and recall (``g`` and ``w`` in one group). Chains
   raise recall only by building giant groups.

Cards and the index are built and cached as ``benchmarks/rift.py`` does.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

sys.path.insert(0, str(Path(__file__).resolve().parent))

REACH_BUCKETS = (1, 5, 20, 100)
SHARES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
CUTOFFS = (0.0, 0.1, 0.2, 0.3)
RANK_CAPS = (1, 2, 3, 5, 10)
Pairs = list[tuple[int, list[int]]]
"""Confusions as ``(wrong row, [relevant rows])``."""


def margin_matrix(scores: np.ndarray) -> np.ndarray:
    """``m[a, b] = scores[a, a] - scores[a, b]`` (row ``a`` is ``a``'s query), ``inf`` on the
    diagonal: a tool is not its own rival."""
    s = np.asarray(scores, dtype=np.float64)
    m = np.diag(s)[:, None] - s
    np.fill_diagonal(m, np.inf)
    return m


def rival_ranks(margins: np.ndarray) -> np.ndarray:
    """``r[a, b]``: 0 for ``a``'s closest rival (smallest margin), 1 for the next, ... (the
    diagonal, at ``inf``, ranks last)."""
    order = np.argsort(margins, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(margins.shape[0])[:, None]
    ranks[rows, order] = np.arange(margins.shape[1])[None, :]
    return ranks


def reach(ranks: np.ndarray, confusions: Pairs) -> dict[str, int]:
    """How many confusions have their pair within each rank bucket (best of both directions
    and of the relevant tools)."""
    out = {f"<={b}": 0 for b in REACH_BUCKETS} | {f">{REACH_BUCKETS[-1]}": 0}
    for wrong, relevant in confusions:
        best = min(min(int(ranks[g, wrong]), int(ranks[wrong, g])) for g in relevant) + 1
        bucket = next((f"<={b}" for b in REACH_BUCKETS if best <= b), f">{REACH_BUCKETS[-1]}")
        out[bucket] += 1
    return out


def pair_frontier(
    closeness: np.ndarray, confusions: Pairs, shares: Sequence[float] = SHARES
) -> list[dict[str, float]]:
    """For each share: the cut-off on ``closeness`` (symmetric, higher = closer, diagonal
    ``-inf``) that flags that share of tools, and the share of confusions whose pair it flags."""
    best = closeness.max(axis=1)
    rows = []
    for share in shares:
        cut = float(np.quantile(best, 1.0 - share))
        flagged = closeness >= cut
        caught = sum(any(flagged[g, w] for g in rel) for w, rel in confusions)
        rows.append(
            {
                "share": share,
                "cut": round(cut, 3),
                "tools_flagged": round(float(flagged.any(axis=1).mean()), 3),
                "recall": round(caught / max(len(confusions), 1), 3),
            }
        )
    return rows


def group_row(margins: np.ndarray, ranks: np.ndarray, confusions: Pairs, cutoff: float, cap: int):
    """Components of the edges ``m < cutoff`` within ``cap`` closest rivals (module docstring)."""
    n = margins.shape[0]
    src, dst = np.nonzero((margins < cutoff) & (ranks < cap))
    graph = coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    sizes = np.bincount(label)
    grouped = sizes[label] >= 2
    high = 0
    for comp in np.unique(label[grouped]):
        members = np.nonzero(label == comp)[0]
        high += bool(margins[np.ix_(members, members)].min() < 0.0)
    caught = sum(any(label[g] == label[w] and grouped[w] for g in rel) for w, rel in confusions)
    return {
        "cutoff": cutoff,
        "rank_cap": cap,
        "groups": int(np.unique(label[grouped]).size),
        "high": high,
        "share": round(float(grouped.mean()), 3),
        "largest": int(sizes.max()),
        "recall": round(caught / max(len(confusions), 1), 3),
    }


def frontier(margins: np.ndarray, vectors: np.ndarray, confusions: Pairs) -> dict[str, Any]:
    """Reach, the two pair frontiers and the group grid of one corpus."""
    ranks = rival_ranks(margins)
    both = -np.minimum(margins, margins.T)
    cos = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    np.fill_diagonal(cos, -np.inf)
    return {
        "tools": int(margins.shape[0]),
        "confusions": len(confusions),
        "reach": reach(ranks, confusions),
        "pairs_margin": pair_frontier(both, confusions),
        "pairs_cosine": pair_frontier(cos, confusions),
        "groups": [group_row(margins, ranks, confusions, c, r) for c in CUTOFFS for r in RANK_CAPS],
    }


def corpus_evidence(name: str, styles: Sequence[str]) -> tuple[np.ndarray, np.ndarray, Pairs]:
    """(margins, card vectors, confusions) of one corpus, as Rift's layer 1 sees them."""
    import rift as riftbench
    import rift_tune
    from cartograph.generate.bootstrap.generator import generate_cards
    from cartograph.index import embed_queries
    from cartograph.rift.margin import score_rows
    from cartograph.rift.queries import QueryOptions, synthetic_query
    from cartograph.rift.workspace import discover_ranker, tools_from_cards

    snap = riftbench.load_corpus(name)
    cards = {n: g.card for n, g in generate_cards(snap, created_at="2026-11-30T00:00:00Z").items()}
    index, _, _ = riftbench.build_index(name, cards, None, Path("/tmp/cartograph-bench/rift"))
    tools = tools_from_cards(cards, index.tool_ids, [d.lexical for d in index.documents])
    vectors = np.asarray(index.tool_vectors, dtype=np.float32)
    _, mistakes = rift_tune.observed_confusions(index, rift_tune.TASKS[name])
    rank = discover_ranker(index)
    margins = np.full((len(tools), len(tools)), np.inf)
    for style in styles:
        opts = QueryOptions(style=style)  # type: ignore[arg-type]
        texts = [synthetic_query(t.tool, t.input_schema, opts) for t in tools]
        qv = np.asarray(embed_queries(index.embedder, texts), dtype=np.float32)
        blocks = [
            score_rows(qv[i : i + 512], texts[i : i + 512], vectors, rank, "discover")
            for i in range(0, len(texts), 512)
        ]
        margins = np.minimum(margins, margin_matrix(np.concatenate(blocks)))
    row = {(t.server, t.tool): i for i, t in enumerate(tools)}
    pairs = [(row[c.wrong], [row[r] for r in c.relevant if r in row]) for c in mistakes]
    return margins, vectors, [(w, rel) for w, rel in pairs if rel]


def print_tables(name: str, result: dict[str, Any]) -> None:
    print(f"\n## {name}: {result['tools']} tools, {result['confusions']} confusions")
    print("reach (best rank of the pair, either direction):", json.dumps(result["reach"]))
    print("| tools flagged | recall, margin pairs | recall, cosine pairs |")
    print("|---|---|---|")
    for m, c in zip(result["pairs_margin"], result["pairs_cosine"], strict=True):
        print(f"| {m['share']:.0%} | {m['recall']:.2f} | {c['recall']:.2f} |")
    print("| edge cut-off | rank cap | groups | HIGH | tools in groups | largest | recall |")
    print("|---|---|---|---|---|---|---|")
    for g in result["groups"]:
        print(
            f"| {g['cutoff']} | {g['rank_cap']} | {g['groups']} | {g['high']} | "
            f"{g['share']:.1%} | {g['largest']} | {g['recall']:.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", nargs="+", default=["fleet", "callnavi"])
    ap.add_argument("--styles", nargs="+", default=["task"], choices=["task", "schema"])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    results = {}
    for name in args.corpus:
        margins, vectors, confusions = corpus_evidence(name, args.styles)
        results[name] = frontier(margins, vectors, confusions)
        print_tables(name, results[name])
    if args.json:
        args.json.write_text(json.dumps({"styles": args.styles, **results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
