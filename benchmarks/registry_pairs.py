"""Training triplets from the union's distractor registries, beside the protocol that filters them
(used by ``scripts/train_encoder.py data --sources registry``).

Those registries hold real MCP tools (toolsdk, Docker's catalog, GitHub's server, ToolUniverse)
but no queries. Each tool kept by the leakage filter gets a bootstrap card as a workspace would
make it; the card's example tasks and its summary's first sentence
(:func:`cartograph.index.adapt.pseudo_queries`, the same pseudo-queries ``cartograph index tune``
trains on) become queries for the tool's dense document, and the negative is a sibling on the
same server (or, on a one-tool server, one of the document's nearest neighbours under the stock
model). The filter is :func:`protocol.blocked_set` with ``distractors=False``: LiveMCPBench's
tools, their copies on these registries, the fleet catalog and every test part stay out.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path


def bootstrap_cards(tools: list[dict]) -> dict:
    """``{server: Card}``: bootstrap cards of ``tools`` (corpus rows), made as a workspace
    makes them from a snapshot of those servers."""
    from cartograph.generate.bootstrap.generator import generate_cards
    from cartograph.upstream.snapshot import ServerSnapshot, Snapshot

    by_server: dict[str, list[dict]] = defaultdict(list)
    for t in tools:
        schema = t.get("input_schema")
        by_server[t["server"]].append(
            {
                "name": t["tool"],
                "description": t.get("description") or "",
                "inputSchema": schema if isinstance(schema, dict) else {"type": "object"},
            }
        )
    snap = Snapshot(servers={s: ServerSnapshot(name=s, tools=ts) for s, ts in by_server.items()})
    return {server: generated.card for server, generated in generate_cards(snap).items()}


def bootstrap_texts(tools: list[dict]) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """``{(server, tool): (dense text, pseudo-queries)}`` from bootstrap cards of ``tools``, made
    as a workspace makes them (also the document text of every other training source)."""
    from cartograph.index.adapt import pseudo_queries
    from cartograph.index.documents import tool_document

    out = {}
    for server, card in bootstrap_cards(tools).items():
        for entry in card.tools:
            out[(server, entry.name)] = (tool_document(card, entry).dense, pseudo_queries(entry))
    return out


def _without_server(query: str, rng: random.Random) -> str:
    """Half of the example tasks lose their trailing " in <Server>": users name the product less
    often than the bootstrap examples do, and the model should not learn to wait for it."""
    head, sep, tail = query.rpartition(" in ")
    named = sep and head and tail[:1].isupper()
    return head if named and rng.random() < 0.5 else query


def registry_rows(shared: Path, repo: Path, rng: random.Random, per_tool: int, mine) -> tuple:
    """(triplet rows, per-source stats) for every registry in :func:`protocol.registry_sources`.
    ``mine(keys, texts)`` gives each document's nearest neighbours (indexes)."""
    import protocol

    blocked = protocol.blocked_set(shared, repo, distractors=False)
    rows: list[dict] = []
    stats: dict[str, dict] = {}
    for source, tools in protocol.registry_sources(shared):
        kept = protocol.leak_filter(tools, [], blocked)
        cards = bootstrap_texts(kept.tools)
        keys = sorted(cards)
        near = mine(keys, [cards[k][0] for k in keys])
        by_server: dict[str, list[int]] = defaultdict(list)
        for i, (server, _tool) in enumerate(keys):
            by_server[server].append(i)
        made = 0
        for i, key in enumerate(keys):
            dense, queries = cards[key]
            name = protocol.norm_name(key[1])
            same = [
                j for j in by_server[key[0]] if j != i and protocol.norm_name(keys[j][1]) != name
            ]
            close = [j for j in near[i][:3] if protocol.norm_name(keys[j][1]) != name]
            pool = same or close
            picked = [
                _without_server(q, rng) for q in rng.sample(queries, min(per_tool, len(queries)))
            ]
            for query in picked if pool else []:
                rows.append(
                    {
                        "source": source,
                        "query": query,
                        "positive": dense,
                        "negative": cards[keys[rng.choice(pool)]][0],
                    }
                )
                made += 1
        stats[source] = {
            "tools": len(tools),
            "tools_kept": len(kept.tools),
            "dropped_by_name": kept.dropped_by_name,
            "dropped_by_text": kept.dropped_by_text,
            "queries": 0,
            "queries_kept": 0,
            "triplets": made,
        }
        print(f"{source}: {stats[source]}", file=sys.stderr, flush=True)
    return rows, stats
