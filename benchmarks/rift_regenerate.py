"""What ``rift --regenerate`` does to a whole catalog: HIGH before and after, and retrieval.

    PYTHONPATH=src .venv/bin/python benchmarks/rift_regenerate.py [--corpus fleet]
        [--grouping confusion|cosine] [--cache /tmp/cartograph-bench/rift] [--json FILE]
        [--rounds N] [--reports FILE]

The same steps as :func:`cartograph.rift.workspace.regenerate`, over a corpus instead of a
workspace (no signing: a signature does not change the text Rift and discover read): cards from
the bootstrap generator, the index (cached by card digest), Rift with the settings ``cartograph
rift`` uses by default (``RiftConfig()``; ``--grouping`` picks layer 1, each grouping with its
own default HIGH and MEDIUM margins, as ``cartograph rift --grouping`` does), then
every server with a flagged tool (:func:`cartograph.rift.flagged_tools`) is generated again with
``distinguish_from`` and the rival servers' snapshots, the index is rebuilt over the new cards,
and Rift runs again. Retrieval before and after is discover's default method on the corpus's tune
tasks (R@1, R@5: the first relevant or acceptable tool at rank 1 / within 5), and for the fleet
also on both parts of the held-out tasks. ``--rounds N`` repeats rewrite, re-index and Rift,
each round contrasting the tools it flags with their mates of every round so far.
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

import protocol
import rift as riftbench
import rift_tune
from cartograph.generate.bootstrap.generator import generate_card, generate_cards
from cartograph.index import ToolIndex, embed_queries
from cartograph.rift import RiftConfig, RiftReport, analyze, flagged_tools
from cartograph.rift.analyze import GROUPINGS
from cartograph.rift.workspace import discover_ranker, tools_from_cards

CREATED = "2026-11-30T00:00:00Z"


def task_sets(corpus: str) -> dict[str, list[dict[str, Any]]]:
    """The corpus's tune tasks, and for the fleet also both parts of the held-out tasks (the
    test part is where "retrieval no worse after the rewrite" is read)."""
    path = rift_tune.TASKS[corpus]
    sets = {corpus: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]}
    if corpus == "fleet":
        rows = protocol.read_jsonl(Path(__file__).parent / "queries" / protocol.HELDOUT)
        for part in ("tune", "test"):
            sets[f"fleet-heldout-{part}"] = protocol.heldout_rows(rows, part)
    return sets


def recall(index: ToolIndex, tasks: list[dict[str, Any]]) -> dict[str, float]:
    r1 = r5 = 0
    for task in tasks:
        ok = {tuple(x) for key in ("relevant", "acceptable") for x in task.get(key) or []}
        hits = [(h.server, h.tool) for h in index.search(task["query"], k=5)]
        r1 += bool(hits) and hits[0] in ok
        r5 += any(h in ok for h in hits)
    return {"tasks": len(tasks), "r1": round(r1 / len(tasks), 3), "r5": round(r5 / len(tasks), 3)}


def recalls(index: ToolIndex, sets: dict[str, list[dict[str, Any]]]) -> dict[str, dict]:
    return {name: recall(index, tasks) for name, tasks in sets.items()}


def run(name: str, cards: dict[str, Any], cache: Path, cfg: RiftConfig) -> tuple[Any, RiftReport]:
    index, seconds, cached = riftbench.build_index(name, cards, None, cache)
    print(f"# {name}: index {'cached' if cached else f'{seconds:.1f} s'}", flush=True)
    tools = tools_from_cards(cards, index.tool_ids, [d.lexical for d in index.documents])

    def embed(texts: list[str]) -> np.ndarray:
        return embed_queries(index.embedder, texts)

    vectors = np.asarray(index.tool_vectors, dtype=np.float32)
    return index, analyze(tools, vectors, embed, cfg, discover_ranker(index))


def rewrite(
    snap: Any,
    context: dict[str, dict[str, list[str]]],
    found: dict[tuple[str, str], list[str]],
    cards: dict[str, Any],
) -> set[str]:
    """Generate again every server with a tool in ``found``, contrasting each flagged tool with
    its mates of this round and of every earlier one (``context`` keeps them); ``cards`` is
    updated in place. The servers rewritten."""
    servers = {s for s, _ in found}
    for (server, tool), mates in found.items():
        old = context.setdefault(server, {}).setdefault(tool, [])
        old.extend(m for m in mates if m not in old)
    for server in servers:
        mine = context[server]
        rivals = {o.partition("/")[0] for m in mine.values() for o in m} - {server}
        cards[server] = generate_card(
            snap.servers[server],
            created_at=CREATED,
            distinguish_from=mine,
            rival_servers={r: snap.servers[r] for r in rivals if r in snap.servers},
        ).card
    return servers


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", default="fleet", choices=list(rift_tune.TASKS))
    ap.add_argument("--grouping", default=RiftConfig().grouping, choices=GROUPINGS)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cartograph-bench/rift"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=1, help="rewrite, re-index, rerun Rift N times")
    ap.add_argument(
        "--reports", type=Path, default=None, help="write both whole Rift reports (JSON) here"
    )
    ap.add_argument(
        "--rewritten",
        type=Path,
        default=None,
        help="write every rewritten tool's summary before and after here (JSON lines)",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    cfg = RiftConfig(grouping=args.grouping)
    snap = riftbench.load_corpus(args.corpus)
    cards = {n: g.card for n, g in generate_cards(snap, created_at=CREATED).items()}
    index, before = run(args.corpus, cards, args.cache, cfg)
    sets = task_sets(args.corpus)
    retrieval_before = recalls(index, sets)
    context: dict[str, dict[str, list[str]]] = {}
    new_cards, after, index_after, flagged = dict(cards), before, index, {}
    for round_no in range(1, args.rounds + 1):
        found = flagged_tools(after)
        if not found:
            break
        flagged.update({t: [*flagged.get(t, []), *m] for t, m in found.items()})
        t0 = time.perf_counter()
        servers = rewrite(snap, context, found, new_cards)
        print(
            f"# round {round_no}: rewrote {len(found)} tools on {len(servers)} servers "
            f"({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
        # one cache per grouping and round: each flags other tools, so its card set differs
        name_after = f"{args.corpus}-regenerated-{args.grouping}-{round_no}"
        index_after, after = run(name_after, new_cards, args.cache, cfg)
        print(f"# round {round_no}: HIGH {after.summary.high}", flush=True)
    by_server = {s for s, _ in flagged}
    retrieval_after = recalls(index_after, sets)
    rewrites = [
        {
            "tool": f"{s}/{t}",
            "before": cards[s].tool(t).summary,  # type: ignore[union-attr]
            "after": new_cards[s].tool(t).summary,  # type: ignore[union-attr]
        }
        for s, t in sorted(flagged)
    ]
    out = {
        "corpus": args.corpus,
        "config": before.config,
        "flagged_tools": len(flagged),
        "servers": len(by_server),
        "before": before.summary.model_dump(),
        "after": after.summary.model_dump(),
        "retrieval_before": retrieval_before,
        "retrieval_after": retrieval_after,
        "examples": rewrites[:8],
    }
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    if args.rewritten:
        args.rewritten.write_text("".join(json.dumps(r) + "\n" for r in rewrites))
    if args.reports:
        both = {"before": before.to_json(), "after": after.to_json()}
        args.reports.write_text(json.dumps(both) + "\n")


if __name__ == "__main__":
    main()
