"""Dev script: does card text find the right tool at least as well as the publisher's text?

On a corpus with queries (default LiveMCPBench: 94 tasks, hit = any relevant tool in the top k)
it ranks every tool with BM25 (the ``bm25s`` package) over
  (a) raw publisher text: "server tool-name description param-names", and
  (b) card text: server capability words + tool summary + usage + example tasks + tags + params,
each under two tokenisers (``plain``: lower-cased \\w\\w+ runs as bm25s does; ``split``: our
identifier-splitting tokeniser), and with ``--dense`` all-MiniLM-L6-v2 (int8 ONNX) cosine.
It prints R@1, R@5 and MRR per variant and, with ``--misses``, the queries cards lose.

    .venv/bin/python scripts/card_quality.py [--corpus DIR] [--dense [--cache F.npz]] [--misses]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import bm25s
import numpy as np

from cartograph.cards.model import Card, ToolEntry
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.generate.text import tokenise
from cartograph.upstream.snapshot import load_snapshot

CORPUS = Path("/work/shared/corpus/livemcpbench")
_PLAIN = re.compile(r"(?u)\b\w\w+\b")
_STOP = frozenset(bm25s.stopwords.STOPWORDS_EN)  # type: ignore[attr-defined]

Key = tuple[str, str]


def plain_tokens(text: str) -> list[str]:
    return [w for w in _PLAIN.findall(text.lower()) if w not in _STOP]


def split_tokens(text: str) -> list[str]:
    return [w for w in tokenise(text) if w not in _STOP and len(w) > 1]


def raw_text(server: str, tool: dict) -> str:
    props = (tool.get("inputSchema") or {}).get("properties") or {}
    return f"{server} {tool['name']} {tool.get('description') or ''} {' '.join(props)}"


def card_text(card: Card, entry: ToolEntry) -> str:
    cap = card.capability
    props = (entry.input_schema or {}).get("properties") or {}
    return " ".join(
        [
            card.server,
            cap.summary,
            " ".join(cap.domains),
            entry.name,
            entry.summary,
            entry.usage,
            " ".join(ex.task for ex in entry.examples),
            " ".join(entry.tags),
            " ".join(props),
        ]
    )


def index_text(card: Card, entry: ToolEntry, kind: str) -> str | None:
    """The index package's own document text, when that module is present."""
    try:
        from cartograph.index.documents import tool_document
    except ImportError:
        return None
    doc = tool_document(card, entry)
    return doc.dense if kind == "dense" else doc.lexical


def load_queries(path: Path) -> list[tuple[str, set[Key]]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rel = {(s, t) for s, t in row["relevant"]}
            rel |= {(s, t) for s, t in row.get("relevant_equivalent") or []}
            out.append((row["query"], rel))
    return out


def bm25_rank(
    docs: Sequence[str], queries: Sequence[str], tok: Callable[[str], list[str]], k: int
) -> np.ndarray:
    model = bm25s.BM25()
    model.index([tok(d) for d in docs], show_progress=False)
    qt = [tok(q) or ["__none__"] for q in queries]
    results, _ = model.retrieve(qt, k=k, show_progress=False)
    return np.asarray(results)


class DenseCache:
    """MiniLM vectors by sha256 of the text, kept in one ``.npz`` between runs (no pickle)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.vecs: dict[str, np.ndarray] = {}
        if path and path.is_file():
            data = np.load(path, allow_pickle=False)
            self.vecs = dict(zip(data["keys"].tolist(), data["vecs"], strict=True))
        self._model = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self.vecs}.items()
        )
        if todo:
            if self._model is None:
                from cartograph.index.onnx_minilm import OnnxMiniLM

                self._model = OnnxMiniLM()
            vecs = self._model.embed([t for _, t in todo])
            self.vecs.update({k: v for (k, _), v in zip(todo, vecs, strict=True)})
        return np.stack([self.vecs[k] for k in keys])

    def save(self) -> None:
        if self.path and self.vecs:
            keys = sorted(self.vecs)
            np.savez(self.path, keys=np.array(keys), vecs=np.stack([self.vecs[k] for k in keys]))


def dense_rank(
    cache: DenseCache, docs: Sequence[str], queries: Sequence[str], k: int
) -> np.ndarray:
    sims = cache.embed(queries) @ cache.embed(docs).T
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]


def score(ranked: np.ndarray, keys: list[Key], queries: list[tuple[str, set[Key]]]) -> dict:
    r1 = r5 = mrr = 0.0
    misses: list[int] = []
    for qi, (_, rel) in enumerate(queries):
        hits = [i for i, doc in enumerate(ranked[qi]) if keys[doc] in rel]
        if hits:
            mrr += 1.0 / (hits[0] + 1)
            r1 += hits[0] == 0
            r5 += hits[0] < 5
        if not hits or hits[0] >= 5:
            misses.append(qi)
    n = len(queries)
    return {"R@1": r1 / n, "R@5": r5 / n, "MRR@50": mrr / n, "misses": misses}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--dense", action="store_true", help="also rank with MiniLM (slower)")
    ap.add_argument("--cache", type=Path, help="MiniLM vector cache (.npz) kept between runs")
    ap.add_argument("--misses", action="store_true", help="print queries cards lose")
    args = ap.parse_args(argv)
    snapshot = load_snapshot(args.corpus / "tools.jsonl")
    queries = load_queries(args.corpus / "queries.jsonl")
    cards = generate_cards(snapshot, created_at="2026-01-01T00:00:00Z")
    keys: list[Key] = []
    raw: list[str] = []
    card: list[str] = []
    idx_lex: list[str] = []
    idx_dense: list[str] = []
    for name, server in sorted(snapshot.servers.items()):
        generated = cards[name].card
        for tool, entry in zip(server.tools, generated.tools, strict=True):
            keys.append((name, tool["name"]))
            raw.append(raw_text(name, tool))
            card.append(card_text(generated, entry))
            idx_lex.append(index_text(generated, entry, "lexical") or "")
            idx_dense.append(index_text(generated, entry, "dense") or "")
    texts = [q for q, _ in queries]
    k = 50
    rows: dict[str, dict] = {}
    for tname, tok in (("plain", plain_tokens), ("split", split_tokens)):
        rows[f"bm25/{tname}/raw"] = score(bm25_rank(raw, texts, tok, k), keys, queries)
        rows[f"bm25/{tname}/card"] = score(bm25_rank(card, texts, tok, k), keys, queries)
        if any(idx_lex):
            rows[f"bm25/{tname}/index-doc"] = score(
                bm25_rank(idx_lex, texts, tok, k), keys, queries
            )
    if args.dense:
        cache = DenseCache(args.cache)
        rows["dense/raw"] = score(dense_rank(cache, raw, texts, k), keys, queries)
        rows["dense/card"] = score(dense_rank(cache, card, texts, k), keys, queries)
        if any(idx_dense):
            rows["dense/index-doc"] = score(dense_rank(cache, idx_dense, texts, k), keys, queries)
        cache.save()
    print(f"{args.corpus.name}: {len(keys)} tools, {len(queries)} queries")
    for name, row in rows.items():
        print(f"{name:24s} R@1 {row['R@1']:.3f}  R@5 {row['R@5']:.3f}  MRR {row['MRR@50']:.3f}")
    if args.misses:
        lost = set(rows["bm25/split/card"]["misses"]) - set(rows["bm25/split/raw"]["misses"])
        for qi in sorted(lost):
            print("LOST:", texts[qi][:120], sorted(queries[qi][1])[:3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
