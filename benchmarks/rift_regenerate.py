"""What ``rift --regenerate`` does to a whole catalog: HIGH before and after, and retrieval.

    PYTHONPATH=src .venv/bin/python benchmarks/rift_regenerate.py [--corpus fleet]
        [--grouping confusion|cosine] [--cache /tmp/cartograph-bench/rift] [--json FILE]

The same steps as :func:`cartograph.rift.workspace.regenerate`, over a corpus instead of a
workspace (no signing: a signature does not change the text Rift and discover read): cards from
the bootstrap generator, the index (cached by card digest), Rift with the settings ``cartograph
rift`` uses by default (``RiftConfig()``; ``--grouping`` picks layer 1, each grouping with its
own default HIGH and MEDIUM margins, as ``cartograph rift --grouping`` does), then
every server with a flagged tool (:func:`cartograph.rift.flagged_tools`) is generated again with
``distinguish_from`` and the rival servers' snapshots, the index is rebuilt over the new cards,
and Rift runs again. Retrieval before and after is discover's default method on the corpus's tune
tasks (R@1, R@5: the first relevant or acceptable tool at rank 1 / within 5).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rift as riftbench
import rift_tune
from cartograph.generate.bootstrap.generator import generate_card, generate_cards
from cartograph.index import ToolIndex, embed_queries
from cartograph.rift import RiftConfig, RiftReport, analyze, flagged_tools
from cartograph.rift.analyze import GROUPINGS
from cartograph.rift.workspace import discover_ranker, tools_from_cards

CREATED = "2026-11-30T00:00:00Z"


def recall(index: ToolIndex, path: Path) -> dict[str, float]:
    tasks = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    r1 = r5 = 0
    for task in tasks:
        ok = {tuple(x) for key in ("relevant", "acceptable") for x in task.get(key) or []}
        hits = [(h.server, h.tool) for h in index.search(task["query"], k=5)]
        r1 += bool(hits) and hits[0] in ok
        r5 += any(h in ok for h in hits)
    return {"tasks": len(tasks), "r1": round(r1 / len(tasks), 3), "r5": round(r5 / len(tasks), 3)}


def run(name: str, cards: dict[str, Any], cache: Path, cfg: RiftConfig) -> tuple[Any, RiftReport]:
    index, seconds, cached = riftbench.build_index(name, cards, None, cache)
    print(f"# {name}: index {'cached' if cached else f'{seconds:.1f} s'}", flush=True)
    tools = tools_from_cards(cards, index.tool_ids, [d.lexical for d in index.documents])

    def embed(texts: list[str]) -> np.ndarray:
        return embed_queries(index.embedder, texts)

    vectors = np.asarray(index.tool_vectors, dtype=np.float32)
    return index, analyze(tools, vectors, embed, cfg, discover_ranker(index))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", default="fleet", choices=list(rift_tune.TASKS))
    ap.add_argument("--grouping", default=RiftConfig().grouping, choices=GROUPINGS)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cartograph-bench/rift"))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    cfg = RiftConfig(grouping=args.grouping)
    snap = riftbench.load_corpus(args.corpus)
    cards = {n: g.card for n, g in generate_cards(snap, created_at=CREATED).items()}
    index, before = run(args.corpus, cards, args.cache, cfg)
    tasks = rift_tune.TASKS[args.corpus]
    retrieval_before = recall(index, tasks)
    flagged = flagged_tools(before)
    by_server: dict[str, dict[str, list[str]]] = {}
    for (server, tool), mates in flagged.items():
        by_server.setdefault(server, {})[tool] = mates
    t0 = time.perf_counter()
    new_cards = dict(cards)
    for server, context in by_server.items():
        rivals = {o.partition("/")[0] for m in context.values() for o in m} - {server}
        new_cards[server] = generate_card(
            snap.servers[server],
            created_at=CREATED,
            distinguish_from=context,
            rival_servers={r: snap.servers[r] for r in rivals if r in snap.servers},
        ).card
    print(
        f"# rewrote {len(flagged)} tools on {len(by_server)} servers "
        f"({time.perf_counter() - t0:.1f} s)",
        flush=True,
    )
    # one cache per grouping: each flags other tools, so its rewritten card set differs
    name_after = f"{args.corpus}-regenerated-{args.grouping}"
    index_after, after = run(name_after, new_cards, args.cache, cfg)
    retrieval_after = recall(index_after, tasks)
    out = {
        "corpus": args.corpus,
        "config": before.config,
        "flagged_tools": len(flagged),
        "servers": len(by_server),
        "before": before.summary.model_dump(),
        "after": after.summary.model_dump(),
        "retrieval_before": retrieval_before,
        "retrieval_after": retrieval_after,
        "examples": [
            {
                "tool": f"{s}/{t}",
                "before": cards[s].tool(t).summary,  # type: ignore[union-attr]
                "after": new_cards[s].tool(t).summary,  # type: ignore[union-attr]
            }
            for s, t in sorted(flagged)[:8]
        ],
    }
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
