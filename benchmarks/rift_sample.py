"""Print N HIGH clusters of a corpus's default Rift report, picked at random with a fixed seed,
with what a reader needs to judge each one real or not (members, card summaries, synthetic
queries, margins, rivals, substitutes).

    PYTHONPATH=src .venv/bin/python benchmarks/rift_sample.py [--corpus fleet] [--n 20]
        [--seed 19] [--json FILE]

The clusters are drawn with ``random.Random(seed).sample`` from the HIGH clusters in report
order; cards and index as ``benchmarks/rift.py`` builds them (cached).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rift as riftbench
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.index import embed_queries
from cartograph.rift import RiftConfig, analyze
from cartograph.rift.workspace import discover_ranker, tools_from_cards


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", default="fleet", choices=list(riftbench.CORPORA))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cartograph-bench/rift"))
    ap.add_argument("--json", type=Path, default=None, help="also write the full report here")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    snap = riftbench.load_corpus(args.corpus)
    cards = {n: g.card for n, g in generate_cards(snap, created_at="2026-11-30T00:00:00Z").items()}
    index, _, _ = riftbench.build_index(args.corpus, cards, None, args.cache)
    tools = tools_from_cards(cards, index.tool_ids, [d.lexical for d in index.documents])

    def embed(texts: list[str]) -> np.ndarray:
        return embed_queries(index.embedder, texts)

    vectors = np.asarray(index.tool_vectors, dtype=np.float32)
    report = analyze(tools, vectors, embed, RiftConfig(), discover_ranker(index))
    if args.json:
        args.json.write_text(json.dumps(report.to_json()) + "\n")
    high = [c for c in report.clusters if c.risk == "HIGH"]
    picked = random.Random(args.seed).sample(range(len(high)), min(args.n, len(high)))
    print(f"# {args.corpus}: {report.summary}")
    for k in sorted(picked):
        c = high[k]
        print(
            f"\n## HIGH #{k + 1} of {len(high)}: min margin {c.margin_min}, cohesion {c.cohesion}"
        )
        for (server, tool), label in zip(c.members, c.distinct_tokens, strict=True):
            entry = cards[server].tool(tool)
            summary = entry.summary if entry else ""
            margin = (c.margins or {}).get(label)
            rival = (c.rivals or {}).get(label)
            print(f"- {server}/{tool}: margin {margin} vs {rival}")
            print(f"    query: {(c.queries or {}).get(label)!r}")
            print(f"    card:  {summary[:220]!r}")
        if c.substitutes:
            print(f"  substitutes: {c.substitutes}")


if __name__ == "__main__":
    main()
