"""Benchmark: verify 10,000 signed cards at start-up (``load_verified`` in a fresh process).

    .venv/bin/python benchmarks/verify_10k.py [--cards 10000] [--repeat 5] [--keep DIR]

Builds realistic small cards from the fleet catalog: each tool of each server becomes a card of
its own (bootstrap generator, real schemas and examples), replicated under distinct server names
until there are ``--cards`` of them; signs them with a fresh Ed25519 operator key (the workspace
trusts it through trust.json and a signed revocation list, as a real one does) and writes them
into a workspace. Then each configuration is timed ``--repeat`` times, each in a new Python
process (imports excluded, file pages possibly in the page cache), and a table is printed:
wall time of ``load_verified`` (median, min), CPU seconds of the parent and of the helper, and
the machine load average, since the machine is shared.

On a shared machine the wall time mostly measures the other work on it (compare the CPU
columns); ``chrt -f 10 .venv/bin/python benchmarks/verify_10k.py --keep DIR`` (root, a few
seconds) measures it with the cores to itself.

Configurations: the sealed layout on two processes (the default), the sealed layout on one
(``CARTOGRAPH_VERIFY_WORKERS=0``), and the old pretty-printed layout on one (the path a card
re-indented by hand takes: canonicalise, then verify).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CARTOGRAPH_SHARED", REPO.parent / "shared"))

MEASURE = r"""
import json, os, resource, sys, time
from cartograph.storage import load_verified
from cartograph.workspace import Workspace
ws = Workspace(__import__("pathlib").Path(sys.argv[1]))
c0 = time.process_time(); t0 = time.perf_counter()
loaded = load_verified(ws)
wall = time.perf_counter() - t0; cpu = time.process_time() - c0
child = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": cpu, "helper_cpu": child.ru_utime + child.ru_stime,
                  "cards": len(loaded.cards), "failures": len(loaded.failures)}))
"""


def build(home: Path, n_cards: int, catalog: Path) -> dict[str, float]:
    from cartograph.cards.seal import sign_card
    from cartograph.generate.bootstrap.generator import generate_cards
    from cartograph.storage import open_store
    from cartograph.trust.lifecycle import init_key
    from cartograph.trust.revocation import revoke_key
    from cartograph.upstream.snapshot import load_snapshot
    from cartograph.workspace import Workspace

    t0 = time.perf_counter()
    generated = generate_cards(load_snapshot(catalog), created_at="2026-11-30T00:00:00Z")
    singles = []
    for name, gen in sorted(generated.items()):
        card = gen.card
        for tool in card.tools:
            ident = card.identity.model_copy(update={"server": f"{name}.{tool.name}"})
            singles.append(card.model_copy(update={"identity": ident, "tools": [tool]}))
    t1 = time.perf_counter()
    ws = Workspace(home / "sealed").ensure()
    key = init_key(ws)
    revoke_key(ws, "ed25519:00000000deadbeef", reason="benchmark: a list with one entry")
    pretty = Workspace(home / "pretty").ensure()
    shutil.copytree(ws.keys_dir, pretty.keys_dir, dirs_exist_ok=True)
    signed = []
    replica = 0
    while len(signed) < n_cards:
        for card in singles[: n_cards - len(signed)]:
            if replica:
                ident = card.identity.model_copy(
                    update={"server": f"r{replica}.{card.identity.server}"}
                )
                card = card.model_copy(update={"identity": ident})
            signed.append(sign_card(card, key))
        replica += 1
    t2 = time.perf_counter()
    store = open_store(ws)
    for card in signed:
        store.write_card(card)
        text = json.dumps(card.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
        pretty.card_path(card.identity.server).write_text(text, encoding="utf-8")
    t3 = time.perf_counter()
    sizes = [p.stat().st_size for p in ws.cards_dir.glob("*.card.json")]
    return {
        "generate_s": t1 - t0,
        "sign_s": t2 - t1,
        "write_s": t3 - t2,
        "mean_bytes": statistics.fmean(sizes),
        "tools": float(sum(len(c.tools) for c in signed)),
    }


def measure(home: Path, workers: str | None) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("CARTOGRAPH_VERIFY_WORKERS", None)
    if workers is not None:
        env["CARTOGRAPH_VERIFY_WORKERS"] = workers
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(home)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description="Verify 10,000 signed cards at start-up.")
    parser.add_argument("--catalog", type=Path, default=SHARED / "fleet" / "catalog.json")
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="Build into (or reuse) this directory.")
    parser.add_argument(
        "--only",
        choices=["two", "one", "pretty"],
        action="append",
        help="Run only these configurations (default: all three).",
    )
    args = parser.parse_args()
    if not args.catalog.is_file():
        print(f"skipped: {args.catalog} not found (set CARTOGRAPH_SHARED)")
        return 0
    home = args.keep or Path(tempfile.mkdtemp(prefix="cartograph-verify10k-"))
    info: dict[str, float] = {}
    if not (home / "sealed" / "cards").is_dir():
        info = build(home, args.cards, args.catalog)
    rows = []
    configs = [
        ("two", "sealed layout, 2 processes", home / "sealed", None),
        ("one", "sealed layout, 1 process", home / "sealed", "0"),
        ("pretty", "pretty layout, 1 process", home / "pretty", "0"),
    ]
    configs = [c[1:] for c in configs if not args.only or c[0] in args.only]
    for label, path, workers in configs:
        runs = [measure(path, workers) for _ in range(args.repeat)]
        assert all(r["cards"] == args.cards and r["failures"] == 0 for r in runs), runs[0]
        walls = [r["wall"] for r in runs]
        rows.append(
            (
                label,
                statistics.median(walls),
                min(walls),
                statistics.median(r["cpu"] for r in runs),
                statistics.median(r["helper_cpu"] for r in runs),
            )
        )
    load = os.getloadavg()
    print(
        f"{args.cards} cards (one tool each, from {args.catalog.name}); "
        f"{os.cpu_count()} CPUs; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"median of {args.repeat} fresh processes"
    )
    if info:
        print(
            f"built: generate {info['generate_s']:.1f}s, sign {info['sign_s']:.1f}s, "
            f"write {info['write_s']:.1f}s; mean sealed card {info['mean_bytes']:.0f} bytes"
        )
    print(
        f"{'load_verified':<30}{'wall med (s)':>14}{'wall min (s)':>14}"
        f"{'parent cpu (s)':>16}{'helper cpu (s)':>16}{'per card (us)':>15}"
    )
    for label, med, low, cpu, helper in rows:
        print(
            f"{label:<30}{med:>14.3f}{low:>14.3f}{cpu:>16.3f}{helper:>16.3f}"
            f"{med / args.cards * 1e6:>15.1f}"
        )
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
