"""Benchmark the accepted-file gate: quiet on a reviewed fleet, and does it speak on what is new?

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/rift_accepted.py
        [--join git-cyanheads playwright-ea linear] [--grouping confusion|cosine]
        [--cache /tmp/cartograph-bench/rift]

For each server named by ``--join``: the fleet without it is indexed and analysed (the settings
``cartograph rift`` uses by default, ``RiftConfig()``; ``--grouping`` picks layer 1 with that
grouping's default margins, as ``cartograph rift --grouping`` does), every HIGH and MEDIUM
pair of that report is written as accepted, then the whole fleet is analysed and gated against
that file, as a CI run would be the day the server joins.
Reported: the pairs accepted, the HIGH clusters of the full fleet, those still open after the
file, and how many open pairs involve the joining server (the rest are old pairs whose margin
moved because the catalog changed: noise the gate raises). Timing is the gate's own work
(collecting the pairs, writing the file, applying it), not the analysis.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.index import embed_queries
from cartograph.rift import RiftConfig, RiftReport, analyze
from cartograph.rift.accepted import AcceptedSet, apply_accepted, report_pairs, write_accepted
from cartograph.rift.analyze import GROUPINGS
from cartograph.rift.workspace import discover_ranker, tools_from_cards
from cartograph.upstream.snapshot import Snapshot
from rift import build_index, load_corpus  # benchmarks/rift.py


def fleet_report(snap: Snapshot, name: str, cache: Path, cfg: RiftConfig) -> RiftReport:
    cards = {n: g.card for n, g in generate_cards(snap, created_at="2026-11-30T00:00:00Z").items()}
    index, _, _ = build_index(name, cards, None, cache)
    tools = tools_from_cards(cards, index.tool_ids, [d.lexical for d in index.documents])
    vectors = np.asarray(index.tool_vectors, dtype=np.float32)

    def embed(texts: list[str]) -> np.ndarray:
        return embed_queries(index.embedder, texts)

    return analyze(tools, vectors, embed, cfg, discover_ranker(index))


def join_row(full: RiftReport, before: RiftReport, joining: str, where: Path) -> dict:
    t0 = time.perf_counter()
    accepted: AcceptedSet = write_accepted(where, before, None)
    gated = apply_accepted(full, accepted)
    gate_s = time.perf_counter() - t0
    open_pairs = [p for p, r in report_pairs(full).items() if not accepted.covers(p, r.value)]
    mine = sum(1 for p in open_pairs if any(t.split("/")[0] == joining for t in p))
    return {
        "joins": joining,
        "accepted": len(accepted.pairs),
        "high": full.summary.high,
        "open_high": gated.summary.open_high,
        "open_medium": gated.summary.open_medium,
        "open_pairs": len(open_pairs),
        "with_joiner": mine,
        "stale": len(gated.accepted["stale"]) if gated.accepted else 0,
        "gate_ms": round(gate_s * 1000, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--join", nargs="+", default=["git-cyanheads", "playwright-ea", "linear"])
    ap.add_argument("--grouping", default=RiftConfig().grouping, choices=GROUPINGS)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cartograph-bench/rift"))
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    cfg = RiftConfig(grouping=args.grouping)
    snap = load_corpus("fleet")
    missing = [s for s in args.join if s not in snap.servers]
    if missing:
        sys.exit(f"not in the fleet catalog: {', '.join(missing)}")
    full = fleet_report(snap, "fleet", args.cache, cfg)
    print(f"# config: {full.config}", flush=True)
    print(f"# fleet: {full.tools_total} tools, {full.summary.high} HIGH clusters", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for joining in args.join:
            rest = Snapshot({n: s for n, s in snap.servers.items() if n != joining})
            before = fleet_report(rest, f"fleet-without-{joining}", args.cache, cfg)
            rows.append(join_row(full, before, joining, Path(tmp) / f"{joining}.json"))
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    cols = list(rows[0]) if rows else []
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
