"""Benchmark: generate, sign and verify the cards of the fleet catalog (99 servers, 2,598 tools).

    .venv/bin/python benchmarks/cards.py [--catalog PATH] [--repeat 5]

Prints a table: generation, signing and verification time for all cards, per card, and the
canonicalisation share. Skips politely when ../shared/fleet/catalog.json is absent.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cartograph.canonical import canonical
from cartograph.cards.seal import sign_card, verify_card
from cartograph.generate.bootstrap.generator import generate_card
from cartograph.storage.files import FileStore
from cartograph.trust.keys import OperatorKey
from cartograph.trust.store import TrustStore
from cartograph.upstream.snapshot import load_snapshot
from cartograph.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CARTOGRAPH_SHARED", REPO.parent / "shared"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=SHARED / "fleet" / "catalog.json")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not args.catalog.is_file():
        print(f"skipped: {args.catalog} not found (set CARTOGRAPH_SHARED)")
        return 0
    snapshot = load_snapshot(args.catalog)
    key = OperatorKey.generate()
    trust = TrustStore()
    trust.add(key.public_key)
    gen_t, sign_t, verify_t, canon_t, load_t = [], [], [], [], []
    tmp = Path(tempfile.mkdtemp(prefix="cartograph-bench-"))
    ws = Workspace(tmp)
    store = FileStore(ws, history=20)
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        unsigned = [
            generate_card(s, created_at="2026-11-30T00:00:00Z").card
            for s in snapshot.servers.values()
        ]
        t1 = time.perf_counter()
        signed = [sign_card(c, key) for c in unsigned]
        t2 = time.perf_counter()
        for c in signed:
            verify_card(c, trust)
        t3 = time.perf_counter()
        for c in signed:
            canonical(c.unsigned_payload())
        t4 = time.perf_counter()
        for c in signed:
            store.write_card(c)
        t5 = time.perf_counter()
        loaded = store.load_verified(trust)
        load_t.append(time.perf_counter() - t5)
        assert len(loaded.cards) == len(signed) and not loaded.failures
        gen_t.append(t1 - t0)
        sign_t.append(t2 - t1)
        verify_t.append(t3 - t2)
        canon_t.append(t4 - t3)
    shutil.rmtree(tmp, ignore_errors=True)
    n = len(signed)
    tools = sum(len(c.tools) for c in signed)
    print(
        f"fleet catalog: {n} cards, {tools} tools; median of {args.repeat} runs; "
        f"{os.cpu_count()} cores"
    )
    size = sum(len(canonical(c.unsigned_payload())) for c in signed)
    print(f"canonical card size: {size / n / 1024:.1f} KiB mean, {size / 1e6:.1f} MB in all")
    print(f"{'step':<32}{'all cards (ms)':>16}{'per card (ms)':>16}")
    for label, times in (
        ("generate (bootstrap)", gen_t),
        ("sign (canonical + Ed25519)", sign_t),
        ("verify (canonical + Ed25519)", verify_t),
        ("  of which canonical JSON", canon_t),
        ("load store (read+parse+verify)", load_t),
    ):
        med = statistics.median(times) * 1000
        print(f"{label:<32}{med:>16.1f}{med / n:>16.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
