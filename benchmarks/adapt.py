"""Catalog adaptation (`cartograph index tune`) measured on real tasks, side by side.

For each data set: bootstrap cards for its catalog (signed and verified), adapt the encoder to
those cards alone (pseudo-queries from the cards; no task of the set is seen), then score the
set's real tasks with the shipped stock model and with the adapted one, same index code, same
fusion weights. Run in a venv with the ``train`` extra (torch CPU)::

    TRAIN_VENV/bin/python benchmarks/adapt.py --sets livemcpbench fleet

The adapted model is kept (``--force``) whatever the held-out check says, so that both rows
exist; the check's own verdict is printed beside them. Data from ``../shared`` (skipped when
absent).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from cartograph.evaluate import run_eval
from cartograph.index import ToolIndex, load_embedder
from cartograph.index.adapt import adapted_dir, load_adapted, read_adapted
from cartograph.index.adapt_train import TuneSettings, tune
from cartograph.upstream.snapshot import load_snapshot

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval import dataset_files, dataset_queries, signed_cards

METHODS = ("hybrid", "flat")


def measure(name: str, settings: TuneSettings) -> list[dict] | None:
    tools_path, queries_path = dataset_files(name)
    if not tools_path.is_file() or not queries_path.is_file():
        print(f"{name}: data absent, skipped", file=sys.stderr)
        return None
    cards = signed_cards(load_snapshot(tools_path), "cards")
    queries = dataset_queries(name, queries_path)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        t0 = time.monotonic()
        result = tune(home, cards, settings)
        wall = time.monotonic() - t0
        model = read_adapted(adapted_dir(home))
        assert model is not None
        rows = []
        for label, embedder in (("stock", load_embedder("minilm-int8")), ("adapted", None)):
            embedder = embedder or load_adapted(model)
            index = ToolIndex.build(cards, embedder)
            report = run_eval(index, queries, METHODS)
            for method in METHODS:
                scores = report.methods[method].scores.as_json()
                rows.append(
                    {
                        "set": name,
                        "model": label,
                        "method": method,
                        **{k: scores[k] for k in ("R@1", "R@3", "R@5", "MRR", "n")},
                    }
                )
        held = result.manifest["held_out"]
        verdict = (
            "better"
            if held["adapted"]["r1"] + held["adapted"]["r5"]
            > (held["base"]["r1"] + held["base"]["r5"])
            else "not better"
        )
        print(
            f"{name}: tuned in {wall:.0f} s, {result.manifest['training']['steps']} steps on "
            f"{result.manifest['training']['pairs']} pairs; held-out pseudo-queries "
            f"stock {held['base']} adapted {held['adapted']} ({verdict})",
            file=sys.stderr,
            flush=True,
        )
        return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["livemcpbench", "fleet"])
    ap.add_argument("--lr", type=float, default=TuneSettings.lr)
    ap.add_argument("--epochs", type=int, default=TuneSettings.epochs)
    ap.add_argument("--threads", type=int, default=TuneSettings.threads)
    ap.add_argument("--json", dest="as_json", action="store_true")
    args = ap.parse_args(argv)
    settings = TuneSettings(lr=args.lr, epochs=args.epochs, threads=args.threads, force=True)
    rows = [r for name in args.sets for r in (measure(name, settings) or [])]
    if args.as_json:
        print(json.dumps(rows, indent=1))
        return 0
    print(
        f"{'set':14} {'model':8} {'method':7} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6} {'n':>5}"
    )
    for r in rows:
        print(
            f"{r['set']:14} {r['model']:8} {r['method']:7} {r['R@1']:6.3f} {r['R@3']:6.3f} "
            f"{r['R@5']:6.3f} {r['MRR']:6.3f} {r['n']:5d}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
