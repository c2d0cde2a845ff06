"""Dev script: the card text measures of issue 17, repeatable on any snapshot.

For the bootstrap cards of a snapshot (default: the fleet catalog, 2,598 tools) it prints
  - prose: share of tool summaries of 5+ words that hold a function word (a, the, of, to, ...),
  - directives: sentences in any agent-facing field that order the model about,
  - runs: agent-facing fields (titles included) sharing 8 consecutive words with the server's
    publisher text (descriptions, parameter descriptions, titles, instructions, serverInfo),
  - cosine (``--cosine``): mean within-server cosine of the tools' dense index texts
    (all-MiniLM-L6-v2 int8), for the cards and for the same documents built from the
    publisher's description (and of the bare descriptions), averaged over servers with 2+ tools,
  - time: card generation wall and CPU seconds (best of ``--repeat`` runs).

    PYTHONPATH=src .venv/bin/python scripts/card_measures.py [--snapshot F] [--cosine]
        [--cache F.npz] [--repeat 3] [--show 20] [--json OUT]
        [--sample 30 --seed 17 --old OLD.json]   # the side-by-side table of docs/cards.md

``--old`` is a JSON object ``{"server/tool": {"summary": ...}}`` written the same way by an
earlier checkout (``--dump F`` writes one for this checkout).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from cartograph.canonical import sha256_json, sha256_text
from cartograph.cards.model import Capability, Card, Identity, Provenance, ToolEntry
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.generate.quality import (
    agent_fields,
    directive_hits,
    prose_share,
    publisher_runs,
    publisher_texts,
)
from cartograph.index.documents import tool_document
from cartograph.upstream.snapshot import Snapshot, load_snapshot

FLEET = Path("/work/shared/fleet/catalog.json")
WHEN = "2026-01-01T00:00:00Z"


def raw_card(name: str, tools: list[dict]) -> Card:
    """The same tools with the publisher's description as the summary (for the cosine baseline)."""
    entries = []
    for t in tools:
        desc = str(t.get("description") or "").strip() or str(t["name"])
        raw = t.get("inputSchema")
        schema: dict = raw if isinstance(raw, dict) else {}
        entries.append(
            ToolEntry(
                name=str(t["name"]),
                summary=desc,
                input_schema=schema,
                input_schema_hash=sha256_json(schema),
                description_hash=sha256_text(desc),
                generator="raw/measure",
            )
        )
    return Card(
        identity=Identity(server=name),
        capability=Capability(summary=name),
        tools=entries,
        provenance=Provenance(
            generator="raw",
            generator_version="0",
            created_at=WHEN,
            tools_list_hash=sha256_json(tools),
        ),
    )


def within_server_cosine(groups: list[list[str]], cache_path: Path | None) -> float:
    """Mean over groups (servers) of the mean pairwise cosine of the texts' vectors."""
    sys.path.insert(0, str(Path(__file__).parent))
    from card_quality import DenseCache

    cache = DenseCache(cache_path)
    flat = [t for g in groups for t in g]
    vecs = cache.embed(flat)
    cache.save()
    means, at = [], 0
    for g in groups:
        v = vecs[at : at + len(g)]
        at += len(g)
        if len(g) < 2:
            continue
        sims = v @ v.T
        n = len(g)
        means.append(float((sims.sum() - np.trace(sims)) / (n * (n - 1))))
    return float(np.mean(means))


def cosines(snapshot: Snapshot, cards: dict, cache: Path | None) -> dict[str, float]:
    """Mean within-server cosine of the cards' dense texts, of the same documents built from
    the publisher's descriptions, and of the bare descriptions."""
    card_groups, raw_groups, desc_groups = [], [], []
    for name in sorted(cards):
        card = cards[name].card
        raw = raw_card(name, snapshot.servers[name].tools)
        card_groups.append([tool_document(card, e).dense for e in card.tools])
        raw_groups.append([tool_document(raw, e).dense for e in raw.tools])
        desc_groups.append([e.summary for e in raw.tools])
    return {
        "cosine_cards": round(within_server_cosine(card_groups, cache), 4),
        "cosine_publisher_docs": round(within_server_cosine(raw_groups, cache), 4),
        "cosine_publisher_descriptions": round(within_server_cosine(desc_groups, cache), 4),
    }


def _cell(text: str, limit: int = 220) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= limit else text[: limit - 2].rsplit(" ", 1)[0] + " …"


def sample_table(snapshot: Snapshot, cards: dict, old: dict, n: int, seed: int) -> str:
    """Markdown: ``n`` fleet tools picked with ``seed``, publisher text, old and new summary."""
    keys = [(s, t["name"]) for s in sorted(snapshot.servers) for t in snapshot.servers[s].tools]
    picked = sorted(random.Random(seed).sample(keys, n))
    rows = ["| tool | publisher description | old summary | new summary |", "|---|---|---|---|"]
    for server, name in picked:
        tool = next(t for t in snapshot.servers[server].tools if t["name"] == name)
        entry = cards[server].card.tool(name)
        before = old.get(f"{server}/{name}", {}).get("summary", "")
        rows.append(
            f"| {server}/{name} | {_cell(str(tool.get('description') or ''))} | "
            f"{_cell(before)} | {_cell(entry.summary if entry else '')} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--snapshot", type=Path, default=FLEET)
    ap.add_argument("--cosine", action="store_true", help="also embed (MiniLM int8)")
    ap.add_argument("--cache", type=Path, help="vector cache (.npz) kept between runs")
    ap.add_argument("--repeat", type=int, default=3, help="timed generation runs")
    ap.add_argument("--show", type=int, default=10, help="print this many failures of each")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--sample", type=int, default=0, help="print a side-by-side table of N tools")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--old", type=Path, help="summaries of an earlier checkout (for --sample)")
    ap.add_argument("--dump", type=Path, help="write this checkout's summaries here")
    args = ap.parse_args(argv)
    snapshot: Snapshot = load_snapshot(args.snapshot)
    walls, cpus = [], []
    cards = {}
    for _ in range(max(1, args.repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        cards = generate_cards(snapshot, created_at=WHEN)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    tools = sum(len(g.card.tools) for g in cards.values())
    if args.dump:
        dump = {
            f"{n}/{e.name}": {"summary": e.summary} for n, g in cards.items() for e in g.card.tools
        }
        args.dump.write_text(json.dumps(dump, indent=0) + "\n", encoding="utf-8")
    if args.sample:
        old = json.loads(args.old.read_text(encoding="utf-8")) if args.old else {}
        print(sample_table(snapshot, cards, old, args.sample, args.seed))
        return 0
    prose = prose_share(e.summary for g in cards.values() for e in g.card.tools)
    directives: list[str] = []
    runs: list[str] = []
    for name, generated in cards.items():
        fields = [(f"{name}/{w}", t) for w, t in agent_fields(generated.card)]
        directives += directive_hits(fields)
        runs += publisher_runs(publisher_texts(snapshot.servers[name]), fields)
    out: dict[str, object] = {
        "snapshot": str(args.snapshot),
        "tools": tools,
        "prose_counted": prose.counted,
        "prose_share": round(prose.share, 4),
        "directives": len(directives),
        "runs8": len(runs),
        "gen_wall_s": round(min(walls), 2),
        "gen_cpu_s": round(min(cpus), 2),
    }
    if args.cosine:
        out.update(cosines(snapshot, cards, args.cache))
    for key, value in out.items():
        print(f"{key:30s} {value}")
    for label, items in (
        ("not prose", list(prose.failing)),
        ("directive", directives),
        ("run", runs),
    ):
        for item in items[: args.show]:
            print(f"  {label}: {item}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
