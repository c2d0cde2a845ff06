"""The evaluation protocol: seeded tune/test splits of the public sets and the training filter.

Every weight, threshold, training run and model choice is made on the *tune* parts and on the
fleet dev set (``benchmarks/queries/fleet_dev.jsonl``); tables report the *test* parts.

Splits (seed :data:`SEED`, decided once, never re-drawn):

* MetaTool: split **by plugin**. A plugin goes to ``test`` when the first 8 hex digits of
  ``sha256(f"{SEED}:metatool:{plugin}")`` read as an integer are below half of 2^32, else to
  ``tune``. A query goes where all of its plugins go; a query whose plugins straddle both parts is
  dropped from both. The reported test part is a seeded sample of :data:`METATOOL_SAMPLE`.
* BFCL: split **by function** (the name before ``~hash``, so same-name variants that count as the
  same answer stay together), same rule with ``bfcl`` in the key. ``bfcl-live`` reports the test
  part's ``live`` queries.
* LiveMCPBench and the 9.6k union: **test only** (no tune part).
* The fleet dev set: tune only (choices are made on it; it is reported as "dev", never as test).
* The fleet held-out set (``benchmarks/queries/fleet_heldout.jsonl``, written on 2026-12-05
  from the publisher's catalog alone, blind to the cards, the code and the other query sets):
  split **by server** (the relevant tool's), same rule with ``fleet-heldout`` in the key, into
  ``fleet-heldout-tune`` and ``fleet-heldout-test``; tasks with no query are skipped.

The union is scored strict (only the labelled tools) and lenient: lenient also counts a tool of
another registry whose normalised name (:func:`norm_name`) equals a labelled tool's and whose
description is a near duplicate of it (:func:`near_duplicate`), i.e. the same tool published again.

Training filter (:func:`leak_filter`): a training tool is dropped when its normalised tool name or
server name equals one of a *blocked* document's (every document of a test part and of the fleet
catalog; server names only of real MCP servers: LiveMCPBench, the union's registries, the
fleet), or when its description is a near duplicate (word-set Jaccard >= :data:`NEAR_DUP`) of a
blocked document's description. A training query is dropped when it is a near duplicate of a test
or fleet query, or when every tool it needs was dropped.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SEED = 18
METATOOL_SAMPLE = 1000
NEAR_DUP = 0.7
QUERY_NEAR_DUP = 0.8

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[^\W_]+")


def norm_name(name: str) -> str:
    """``get_pullRequest-files~ab12`` -> ``get pull request files`` (case, separators, ~hash)."""
    base = name.split("~", 1)[0]
    return " ".join(w.lower() for w in _WORD.findall(_CAMEL.sub(" ", base)))


def word_set(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text or "")))


def part_of(kind: str, key: str) -> str:
    """``"test"`` or ``"tune"`` for one split key (a MetaTool plugin, a BFCL function)."""
    digest = hashlib.sha256(f"{SEED}:{kind}:{key}".encode()).hexdigest()
    return "test" if int(digest[:8], 16) < 2**31 else "tune"


# ------------------------------------------------------------------ reading the corpus


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _query_part(kind: str, row: dict, key_of) -> str | None:
    parts = {part_of(kind, key_of(s, t)) for s, t in row["relevant"]}
    return parts.pop() if len(parts) == 1 else None


def _split_key(dataset: str):
    if dataset == "metatool":
        return "metatool", lambda server, _tool: server
    return "bfcl", lambda _server, tool: norm_name(tool)


def split_rows(dataset: str, rows: Sequence[dict], part: str) -> list[dict]:
    """The query rows of ``dataset`` (``metatool`` or ``bfcl``) that fall in ``part``."""
    kind, key_of = _split_key(dataset)
    return [r for r in rows if r.get("relevant") and _query_part(kind, r, key_of) == part]


def split_tools(dataset: str, tools: Sequence[dict], part: str) -> list[dict]:
    kind, key_of = _split_key(dataset)
    return [t for t in tools if part_of(kind, key_of(t["server"], t["tool"])) == part]


HELDOUT = "fleet_heldout.jsonl"
HELDOUT2 = "fleet_heldout2.jsonl"
"""A second fleet held-out set (2026-12-07), for choosing only: tasks for other tools of the
servers in ``fleet-heldout-tune``, so the held-out test part's servers stay unseen."""


def heldout_rows(rows: Sequence[dict], part: str) -> list[dict]:
    """The fleet held-out tasks whose relevant tools' servers all fall in ``part``."""
    out = []
    for r in rows:
        servers = {s for s, _ in r.get("relevant") or []}
        if r.get("query") and servers and {part_of("fleet-heldout", s) for s in servers} == {part}:
            out.append(r)
    return out


def metatool_test_sample(rows: Sequence[dict]) -> list[dict]:
    test = split_rows("metatool", rows, "test")
    return random.Random(SEED).sample(list(test), min(METATOOL_SAMPLE, len(test)))


# ------------------------------------------------------------------ near duplicates


def jaccard_max(
    left: Sequence[frozenset[str]], right: Sequence[frozenset[str]], chunk: int = 512
) -> np.ndarray:
    """For each set of ``left``, its highest word-set Jaccard with any set of ``right``."""
    from scipy.sparse import csr_matrix

    vocab: dict[str, int] = {}

    def matrix(sets: Sequence[frozenset[str]]):
        rows, cols = [], []
        for i, s in enumerate(sets):
            for w in s:
                rows.append(i)
                cols.append(vocab.setdefault(w, len(vocab)))
        return rows, cols

    lr, lc = matrix(left)
    rr, rc = matrix(right)
    shape_cols = max(len(vocab), 1)
    a = csr_matrix((np.ones(len(lr), np.float64), (lr, lc)), shape=(len(left), shape_cols))
    b = csr_matrix((np.ones(len(rr), np.float64), (rr, rc)), shape=(len(right), shape_cols))
    la = np.asarray([len(s) for s in left], np.float64)
    lb = np.asarray([len(s) for s in right], np.float64)
    out = np.zeros(len(left), np.float64)
    bt = b.T.tocsc()
    for lo in range(0, len(left), chunk):
        inter = (a[lo : lo + chunk] @ bt).toarray()
        union = la[lo : lo + chunk, None] + lb[None, :] - inter
        jac = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
        out[lo : lo + chunk] = jac.max(axis=1) if jac.size else 0.0
    return out


def near_duplicate(a: str, b: str, threshold: float = NEAR_DUP) -> bool:
    sa, sb = word_set(a), word_set(b)
    return bool(sa and sb) and len(sa & sb) / len(sa | sb) >= threshold


# ------------------------------------------------------------------ the blocked set


@dataclass(frozen=True)
class Blocked:
    """What may not enter training: names, descriptions and queries of test parts and fleet."""

    tool_names: frozenset[str]
    server_names: frozenset[str]
    descriptions: tuple[frozenset[str], ...]
    queries: tuple[frozenset[str], ...]


def fleet_tools(catalog: Path) -> list[dict]:
    data = json.loads(catalog.read_text(encoding="utf-8"))
    return [
        {"server": s, "tool": t["name"], "description": t.get("description") or ""}
        for s, entry in data.items()
        for t in entry.get("tools", [])
    ]


def blocked_set(shared: Path, repo: Path, *, distractors: bool = True) -> Blocked:
    """Every test-part document and query, the fleet catalog and the fleet dev queries.

    ``distractors=False`` leaves the union's distractor registries out of the blocked documents
    (LiveMCPBench's tools stay blocked, with their copies on those registries by name and text):
    the filter for training pairs drawn from those registries (:func:`registry_sources`)."""
    corpus = shared / "corpus"
    docs: list[dict] = []
    queries: list[str] = []
    for name in ("livemcpbench", "union"):
        if distractors or name == "livemcpbench":
            docs += read_jsonl(corpus / name / "tools.jsonl")
        queries += [r["query"] for r in read_jsonl(corpus / name / "queries.jsonl")]
    docs += fleet_tools(shared / "fleet" / "catalog.json")
    # Real MCP servers block by server name too; MetaTool's and BFCL's server fields are the
    # data set's placeholder ("bfcl"), so their test parts block by tool name and text.
    servers = frozenset(norm_name(d["server"]) for d in docs) - {""}
    for name in ("metatool", "bfcl"):
        docs += split_tools(name, read_jsonl(corpus / name / "tools.jsonl"), "test")
        rows = read_jsonl(corpus / name / "queries.jsonl")
        queries += [r["query"] for r in split_rows(name, rows, "test")]
    for name in ("fleet_dev.jsonl", HELDOUT, HELDOUT2):
        path = repo / "benchmarks" / "queries" / name
        if path.is_file():
            queries += [r["query"] for r in read_jsonl(path) if r.get("query")]
    return Blocked(
        tool_names=frozenset(norm_name(d["tool"]) for d in docs) - {""},
        server_names=servers,
        descriptions=tuple(s for d in docs if len(s := word_set(d.get("description") or "")) > 2),
        queries=tuple(word_set(q) for q in queries),
    )


@dataclass(frozen=True)
class Filtered:
    tools: list[dict]
    queries: list[dict]
    dropped_by_name: int
    dropped_by_text: int
    dropped_queries: int


def leak_filter(tools: Sequence[dict], queries: Sequence[dict], blocked: Blocked) -> Filtered:
    """``tools`` and ``queries`` minus everything :class:`Blocked` names (see the module doc)."""
    by_name = [
        norm_name(t["tool"]) in blocked.tool_names or norm_name(t["server"]) in blocked.server_names
        for t in tools
    ]
    sims = jaccard_max([word_set(t.get("description") or "") for t in tools], blocked.descriptions)
    by_text = [bool(s >= NEAR_DUP) for s in sims]
    kept = [t for t, n, x in zip(tools, by_name, by_text, strict=True) if not (n or x)]
    keys = {(t["server"], t["tool"]) for t in kept}
    qsims = jaccard_max([word_set(q["query"]) for q in queries], blocked.queries)
    out_queries = []
    for q, sim in zip(queries, qsims, strict=True):
        relevant = [pair for pair in q["relevant"] if tuple(pair) in keys]
        if sim < QUERY_NEAR_DUP and relevant and len(relevant) == len(q["relevant"]):
            out_queries.append({**q, "relevant": relevant})
    return Filtered(
        tools=kept,
        queries=out_queries,
        dropped_by_name=sum(by_name),
        dropped_by_text=sum(x and not n for n, x in zip(by_name, by_text, strict=True)),
        dropped_queries=len(queries) - len(out_queries),
    )


def training_sources(shared: Path) -> Iterable[tuple[str, list[dict], list[dict]]]:
    """(source, tools, queries) of every set training may draw on, before the filter:
    ``corpus/train/*`` and the tune parts of MetaTool and BFCL."""
    train = shared / "corpus" / "train"
    for folder in sorted(p for p in train.iterdir() if (p / "queries.jsonl").is_file()):
        yield folder.name, read_jsonl(folder / "tools.jsonl"), read_jsonl(folder / "queries.jsonl")
    for name in ("metatool", "bfcl"):
        tools = split_tools(name, read_jsonl(shared / "corpus" / name / "tools.jsonl"), "tune")
        rows = split_rows(name, read_jsonl(shared / "corpus" / name / "queries.jsonl"), "tune")
        yield f"{name}-tune", tools, rows


REGISTRIES = ("toolsdk_registry", "docker_mcp_registry", "github_mcp_server", "tooluniverse")


def registry_sources(shared: Path) -> Iterable[tuple[str, list[dict]]]:
    """(source, tools) of the union's distractor registries: real MCP tools without queries,
    for pairs whose queries are the tools' own bootstrap example tasks. Filter them with
    ``blocked_set(..., distractors=False)``: the union is then no longer unseen by a model
    trained on them (its labelled tools and their copies still are)."""
    for name in REGISTRIES:
        path = shared / "corpus" / name / "tools.jsonl"
        if path.is_file():
            yield name, read_jsonl(path)


def lenient_rows(rows: Sequence[dict], tools: Sequence[dict]) -> list[dict]:
    """Union query rows whose ``acceptable`` also names the same tool published on another
    registry: same normalised tool name and a near-duplicate description (module doc)."""
    by_name: dict[str, list[dict]] = {}
    for t in tools:
        by_name.setdefault(norm_name(t["tool"]), []).append(t)
    desc = {(t["server"], t["tool"]): t.get("description") or "" for t in tools}
    out = []
    for r in rows:
        labelled = [tuple(p) for p in r["relevant"]] + [
            tuple(p) for p in r.get("acceptable") or r.get("relevant_equivalent") or []
        ]
        extra = []
        for server, tool in labelled:
            for t in by_name.get(norm_name(tool), []):
                key = (t["server"], t["tool"])
                if key not in labelled and near_duplicate(desc.get((server, tool), ""), desc[key]):
                    extra.append(list(key))
        out.append({**r, "acceptable": [list(p) for p in labelled[len(r["relevant"]) :]] + extra})
    return out
